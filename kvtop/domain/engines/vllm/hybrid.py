"""vLLM's Mamba / linear-attention hybrids (docs/engines/vllm.md §4.4): one block holds an attention layer's
tokens or one Mamba layer's whole state, so the attention block grows until its page covers the state page,
and the state page is padded to it; Mamba layers then group with the attention layers (§4.1).

The state page is the KV book's state pool per layer and rank, with vLLM's SSM dtype (`unstated_ssm_dtype_bytes`:
GDN keeps the model dtype; NemotronH the config's `mamba_ssm_cache_dtype`, else the release's default); the
attention page of one token is the book's full pool. Which alignment and how many state blocks a request takes follow `mamba_cache_mode` (§4.4).

Speculative decoding (any method: `speculative_config.num_speculative_tokens` k) changes two things for a hybrid:
a GDN layer's conv state keeps k more rows (`spec_conv_rows`), so the state page and with it the attention block
grow; and from v0.15.0 a request takes k more state blocks a Mamba group (`SPEC_STATE_BLOCKS_ERAS`). A drafter's
attention layers (MTP's) join the full-attention layers' groups (§4.1 step 6, KvStorage.draft_kv_as_layers), so the
group size and its padding follow them (`VllmBudget._groups`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.eras import (
    DEFAULT_BLOCK_ERAS,
    HYBRID_CACHE_MODE_ERAS,
    MAMBA_PREFIX_CACHING_ALL,
    MAMBA_PREFIX_CACHING_V014,
    MLA_HYBRID_ALIGNMENT_ERAS,
    NEMOTRON_H_SSM_DTYPE_ERAS,
    PREFILL_CHECKPOINT_ERAS,
)
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.engines.vllm.mamba_dtype import FLAGS as MAMBA_DTYPE_FLAGS
from kvtop.domain.engines.vllm.pp_groups import MERGED_GROUPS_ERAS
from kvtop.domain.engines.vllm.spec_methods import draft_tokens
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.kv import KvBook
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec, StateKind
from kvtop.domain.rounding import ceil_div, round_up
from kvtop.domain.span import flag_switch

BACKEND_BLOCK = 16  # the smallest kernel block of FLASH_ATTN / FLASHINFER / TRITON_ATTN
FLASHINFER_GDN_CHECKPOINT_ALIGNMENT = 64  # vllm/v1/attention/backends/gdn_attn.py
KDA_RECURRENT_BYTES = 4  # KDA's recurrent state, float32 (mamba_utils.py kda_state_dtype, v0.13.0 and v0.33.0)


@dataclass(frozen=True)
class HybridBlocks:
    """The attention block, one layer slot's page, and the Mamba groups' share of a request."""

    block: int
    page_bytes: int  # attention page of one layer = the padded Mamba page
    state_bytes: int  # one Mamba layer's state per rank, before padding
    mamba_blocks_per_request: int  # per Mamba group
    why: str


def _gdn(model: ModelSpec) -> bool:
    """Gated delta net layers (GatedDeltaNetAttention); the rest are Mamba2."""
    return model.state is not None and model.state.kind is StateKind.GATED_DELTA_NET


# The architectures vLLM's MODELS_CONFIG_MAP gives NemotronHForCausalLMConfig (or its VL variant), whose
# update_mamba_ssm_cache_dtype replaces `auto` (vllm/model_executor/models/config.py).
NEMOTRON_H_CONFIG_ARCHITECTURES = ("NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", "NemotronH_Nano_VL_V2")


def unstated_ssm_dtype_bytes(model: ModelSpec, version: ResolvedVersion) -> int | None:
    """The SSM state's element bytes when the config names no `mamba_ssm_cache_dtype`: NemotronH's config class
    sets the release's default (§4.4); every other model keeps `auto`, the conv state's dtype = the model dtype
    (`MambaStateDtypeCalculator._mamba_state_dtype`): GDN, and Falcon-H1, Granite-4 and Jamba alike; KDA's recurrent
    state is float32 (`kda_state_dtype`)."""
    if model.state is None:
        return None
    if model.architecture in NEMOTRON_H_CONFIG_ARCHITECTURES:
        return NEMOTRON_H_SSM_DTYPE_ERAS.at(version)
    if model.state.kind is StateKind.KIMI_DELTA:
        return KDA_RECURRENT_BYTES  # MambaStateDtypeCalculator.kda_state_dtype: float32 under `auto`
    return model.dtype_bytes


def spec_conv_rows(model: ModelSpec, settings: LaunchSettings) -> int:
    """Rows a GDN layer's conv state keeps beyond kernel − 1: num_speculative_tokens under speculative decoding
    (`MambaStateShapeCalculator.gated_delta_net_state_shape`: conv_kernel_size − 1 + num_spec, layers/mamba/
    mamba_utils.py:185-191 at v0.10.2, :213-227 at v0.24.0, :286-293 at v0.34.0; the config's shape passes it for
    the block size, models/qwen3_5.py:699-718 and qwen3_next.py:855-867 at v0.24.0, and the layer's own,
    gdn/base.py:43-47); 0 for other state layers (Mamba2 and KDA: not read) and without speculative decoding."""
    return (draft_tokens(settings) or 0) if _gdn(model) else 0


# A request's extra state blocks a Mamba group under speculative decoding: `MambaSpec.max_memory_usage_bytes` is
# page × (1 + num_speculative_blocks) in mode none, × (2 + num_speculative_blocks [+ checkpoints]) in align, with
# num_speculative_blocks = num_speculative_tokens (layers/mamba/abstract.py:55-59 at v0.24.0, :94-98 at v0.34.0,
# where ReplaySSM, off by default, makes it 0)
SPEC_STATE_BLOCKS_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.13.0-v0.14.1 kv_cache_interface.py MambaSpec.max_memory_usage_bytes: cdiv(max_model_len, "
        "block_size) pages, one (mamba_block_size = max_model_len); num_speculative_blocks not counted"),
    Era("0.15.0", True, "first in v0.15.0: v1/kv_cache_interface.py:296-300 MambaSpec.max_memory_usage_bytes "
        "page × (1 + num_speculative_blocks) ('none'), (2 + …) ('align'); :648-657 at v0.24.0, :1168-1174 at v0.34.0"),
))  # fmt: skip


def spec_state_blocks(settings: LaunchSettings, version: ResolvedVersion) -> int:
    """The state blocks a request takes a Mamba group beyond the mode's own: num_speculative_tokens from v0.15.0."""
    return (draft_tokens(settings) or 0) if SPEC_STATE_BLOCKS_ERAS.at(version) else 0


# State layers whose conv vLLM also widens by num_speculative_tokens, which kvtop does not (`spec_conv_rows` is 0):
# Mamba2 (`mamba2_state_shape`, mamba_utils.py:162-180 at v0.24.0, :194-212 at v0.34.0; passed by NemotronH,
# nemotron_h.py:851, Mamba2, mamba2.py:231, and MambaMixer2's own shape, mamba_mixer2.py:1057-1066), KDA
# (kimi_linear.py:615-625) and the short conv (mamba_utils.py:257-265 at v0.34.0)
SPEC_CONV_UNREAD = (StateKind.MAMBA2, StateKind.KIMI_DELTA, StateKind.SHORT_CONV)


def spec_conv_unread(model: ModelSpec, settings: LaunchSettings) -> str:
    """The blocks step's words where speculative decoding widens a conv state kvtop keeps at kernel − 1 rows."""
    tokens = draft_tokens(settings)
    if not tokens or model.state is None or model.state.kind not in SPEC_CONV_UNREAD:
        return ""
    return (f"; not modelled: vLLM keeps {tokens} more conv rows a {model.state.kind.value} layer under speculative "
            "decoding (kernel − 1 + num_speculative_tokens, mamba_utils.py), kvtop kernel − 1: block and state short")


# GDN layers that always run FLA and export no prefill checkpoints (get_prefill_checkpoint_alignment None):
# v0.33.0 layers/mamba/gdn/olmo_gdn_linear_attn.py (only qwen_gdn_linear_attn.py exports them)
FLA_ONLY_GDN = ("OlmoHybridForCausalLM",)


def _flashinfer_gdn(model: ModelSpec, gpu_name: str | None) -> bool:
    """`_resolve_gdn_prefill_backend`: FlashInfer's GDN prefill on Hopper (Blackwell also needs CUDA runtime ≥ 13,
    which kvtop cannot see: assumed older, as on the engine-diff machine); an unknown GPU is read as Hopper."""
    cap = compute_capability(gpu_name) or (9, 0)
    return _gdn(model) and cap == (9, 0) and model.architecture not in FLA_ONLY_GDN


# a GPU other than Hopper (no FlashInfer GDN prefill): where the log names no GPU, its block is the other reading
NOT_HOPPER_STAND_IN = "A100"


def gpu_sets_gdn_block(model: ModelSpec, gpu_name: str | None) -> bool:
    """Whether an unnamed GPU leaves the block size open: a GDN hybrid's block aligns to FlashInfer's 64-token
    checkpoints on Hopper, to the backend's 16 elsewhere, and a log of two lines names neither."""
    return gpu_name is None and _flashinfer_gdn(model, None)


def hybrid_blocks(
    model: ModelSpec,
    kv: KvBook,
    layout: ParallelLayout,
    settings: LaunchSettings,
    gpu_name: str | None,
    version: ResolvedVersion,
) -> HybridBlocks:
    """§4.4 for this rank: the block that makes the attention page ≥ the Mamba state page."""
    full = kv.pool("full")
    merged = MERGED_GROUPS_ERAS.at(version)  # under PP: the groups of every stage, projected (pp_groups.py)
    mla_align = MLA_HYBRID_ALIGNMENT_ERAS.at(version) if model.mla is not None else 0
    if (model.mla is not None and not mla_align) or full is None or kv.pool("swa") is not None or (
        layout.pp > 1 and not merged
    ):
        mla_since, merged_since = MLA_HYBRID_ALIGNMENT_ERAS[-1].since, MERGED_GROUPS_ERAS[-1].since
        reasons = [said for broken, said in (
            (model.mla is not None and not mla_align, f"an MLA hybrid before {mla_since}"),
            (full is None, "no full-attention layer"),
            (kv.pool("swa") is not None, "sliding-window layers"),
            (layout.pp > 1 and not merged, f"pp {layout.pp} before {merged_since}"),
        ) if broken]  # fmt: skip
        raise UnsupportedModelError(
            f"vLLM's hybrid Mamba layout is modelled for full-attention (MLA from {mla_since}; not sliding-window) "
            f"hybrids, at pp 1 only before {merged_since}: not here ({'; '.join(reasons)}; vLLM {version.label})",
            field="engine",
            source=model.source,
        )
    attention = int(full.bytes_per_layer_token)  # one token of one attention layer
    state_pool = kv.pool("state")
    state = state_pool.bytes_per_request // state_pool.layers if state_pool and state_pool.layers else 0
    mode = _cache_mode(model, settings, version)
    if mode in ("none-v0.13", "align-v0.15"):  # HybridAttentionMambaModelConfig / Platform before v0.26.0
        cap = compute_capability(gpu_name) or (9, 0)
        align = 32 if cap[0] == 10 and model.head_dim == 256 else BACKEND_BLOCK  # flashinfer#1993
        block = max(align * ceil_div(state, align * attention), settings.page_size or 0)
        kept = "2 state blocks a request, mamba_cache_mode align" if mode == "align-v0.15" else "no prefix caching"
        why = f"{block}: {align} × cdiv(state {state:,} B, {align} × {attention:,} B) (hybrids, {kept})"
        why += spec_conv_unread(model, settings)
        per_request = (2 if mode == "align-v0.15" else 1) + spec_state_blocks(settings, version)
        return HybridBlocks(block, block * attention, state, per_request, why)
    # MLA: a multiple of 128 (§4.4); the cache's block (the default unless --block-size) is a floor: 64 from v0.34.0
    align = max(BACKEND_BLOCK, settings.page_size or DEFAULT_BLOCK_ERAS.at(version), mla_align)
    checkpoints, exported = 0, PREFILL_CHECKPOINT_ERAS.at(version)
    if mode == "align" and exported != "none":
        if model.state is not None and model.state.kind is StateKind.MAMBA2:
            checkpoints = 1  # MambaMixer2 exports its block-boundary state (alignment 1); Mamba1 does not
        elif exported == "mamba2_gdn" and _flashinfer_gdn(model, gpu_name):
            checkpoints = 1
            align = math.lcm(align, FLASHINFER_GDN_CHECKPOINT_ALIGNMENT)
    block = align * ceil_div(state, align * attention)
    block = max(round_up(block, BACKEND_BLOCK), settings.page_size or 0)
    per_request = (2 if mode == "align" else 1) + checkpoints + spec_state_blocks(settings, version)
    why = f"{block}: {align} × cdiv(state {state:,} B, {align} × {attention:,} B) (mamba_cache_mode {mode})"
    why += spec_conv_unread(model, settings)
    return HybridBlocks(block, block * attention, state, per_request, why)


# `--mamba-cache-mode` (CacheConfig.mamba_cache_mode): read by `_cache_mode` ('align', and 'none' under
# --no-enable-prefix-caching, modelled; any other refused as not modelled), from any launch, typed or a --cmd line
CACHE_MODE_FLAG = "--mamba-cache-mode"
# first of the releases read; a release before refuses it (flags.RELEASE_SPANS)
CACHE_MODE_SPAN = FlagSpan("0.15.1", None, "engine/arg_utils.py:1436 (v0.33.0)")
FLAGS = frozenset({CACHE_MODE_FLAG}) | MAMBA_DTYPE_FLAGS  # and the state dtypes' (mamba_dtype.py, kv_storage.py)
PREFIX_CACHING = "enable-prefix-caching"  # `--enable-prefix-caching` / `--no-enable-prefix-caching` (flag_switch)


# Whether a hybrid runs with prefix caching when the launch gives neither --enable-prefix-caching nor
# --no-enable-prefix-caching (EngineArgs._set_default_chunked_prefill_and_prefix_caching_args); before v0.26.0
# ModelConfig.is_prefix_caching_supported is False for a hybrid (HYBRID_CACHE_MODE_ERAS 'none-v0.13')
HYBRID_PREFIX_CACHING_DEFAULT_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.26.0: ModelConfig.is_prefix_caching_supported is False for hybrids"),
    Era("0.26.0", False, "v0.26.0-v0.27.1 engine/arg_utils.py:2518-2522 (v0.26.0), :2602-2606 (v0.27.0, v0.27.1): "
        "default_prefix_caching = is_prefix_caching_supported and not is_hybrid ('Hybrid models support prefix "
        "caching but keep it opt-in for now')"),
    Era("0.28.0", True, "first in v0.28.0: engine/arg_utils.py:2650 default_prefix_caching = "
        "is_prefix_caching_supported, True for a generative hybrid (config/model.py:2072); :2766 at v0.29.0, "
        ":2798 at v0.30.0, :3082 at v0.34.0"),
))  # fmt: skip


def _prefix_caching(settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """The launch's --[no-]enable-prefix-caching, else the release's default for a hybrid."""
    stated = flag_switch(settings, PREFIX_CACHING)
    return HYBRID_PREFIX_CACHING_DEFAULT_ERAS.at(version) if stated is None else stated


def mamba_prefix_caching(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """Whether a model with Mamba state runs with prefix caching: a hybrid from v0.28.0 unless
    --no-enable-prefix-caching, before only with --enable-prefix-caching (opt-in, HYBRID_PREFIX_CACHING_DEFAULT_ERAS),
    and before v0.15.0 only for a class that supports Mamba prefix caching (MambaModelConfig drops it for the
    others). An attention-free model never does here: is_prefix_caching_supported is False for it, and asking for
    it is refused as not modelled (state_only.state_page)."""
    if model.attention_free:
        return False
    if HYBRID_CACHE_MODE_ERAS.at(version) == "none-v0.13" and model.architecture not in MAMBA_PREFIX_CACHING_V014:
        return False
    return _prefix_caching(settings, version)


def _cache_mode(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str:
    """`mamba_cache_mode` (`MambaModelConfig.verify_and_update_config`): with prefix caching on (a hybrid's default
    from v0.28.0, opt-in before) 'none' becomes 'align' ('all' for a Mamba-prefix-caching class at v0.15.0-v0.27.1,
    not modelled); 'none' with it off, whatever was asked. Before v0.15.0 vLLM drops prefix caching for a class
    without Mamba prefix caching ('none-v0.13') and keeps it, with the Mamba chunk's block, for one with it (not
    modelled). At v0.15.0-v0.25.1 'align' keeps the 'none' block ('align-v0.15', HYBRID_CACHE_MODE_ERAS)."""
    default = HYBRID_CACHE_MODE_ERAS.at(version)
    asked = settings.flags.get(CACHE_MODE_FLAG[2:])
    if default == "none-v0.13":
        if model.architecture in MAMBA_PREFIX_CACHING_V014 and mamba_prefix_caching(model, settings, version):
            raise UnsupportedModelError(
                f"vLLM {version.label} keeps prefix caching on for {model.architecture} (it supports Mamba prefix "
                "caching) and aligns its block to the Mamba chunk (models/config.py:438-459 at v0.14.0), which is "
                "not modelled; leave prefix caching off",
                field="--enable-prefix-caching",
            )
        return default  # models/config.py:344-348 at v0.14.0: any other hybrid drops prefix caching
    if not _prefix_caching(settings, version):
        # models/config.py:650-655 at v0.27.1, :455-456 at v0.24.0: any asked mode becomes 'none'
        return "none-v0.13" if default == "align-v0.15" else "none"
    if default in ("align-v0.15", "all-or-align") and model.architecture in MAMBA_PREFIX_CACHING_ALL and asked in (
        None, "none", "all"
    ):
        raise UnsupportedModelError(
            f"vLLM {version.label}'s default mamba_cache_mode for {model.architecture} with prefix caching on is "
            "'all' (models/config.py MambaModelConfig: the class supports Mamba prefix caching), which is not "
            "modelled; leave prefix caching off (the default for hybrids before v0.28.0: mamba_cache_mode 'none')",
            field=CACHE_MODE_FLAG,
        )
    fallback = default in ("align-v0.15", "all-or-align")  # 'all' without Mamba prefix caching: 'align' (v0.24.0:429-432)
    if asked not in (None, "align", "none") and not (asked == "all" and fallback):  # on, 'none' becomes 'align'
        raise UnsupportedModelError(
            f"vLLM's mamba_cache_mode {asked!r} is not modelled (its default 'align' is, and 'none' under "
            "--no-enable-prefix-caching)",
            field=CACHE_MODE_FLAG,
        )
    return "align-v0.15" if default == "align-v0.15" else "align"
