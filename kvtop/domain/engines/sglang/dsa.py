"""SGLang's launch rules for DeepSeek DSA models (DeepSeek-V3.2, GLM-5) that replace what the user asked.

On CUDA SGLang rewrites two launch arguments of a DSA model before the model is built
(docs/engines/sglang.md §6.6, §10): `--kv-cache-dtype auto` becomes its own DSA default (fp8_e4m3 on
SM100+, bfloat16 below), so a checkpoint's `kv_cache_quant_algo: FP8` is never read; and the page is 64
whatever `--page-size` says. Both read in SGLang 0.5.6.post2 (`server_args.py`
`_handle_model_specific_adjustments`, "DeepSeek NSA") and 0.5.23 (`arg_groups/overrides.py`
`_dsa_kv_cache_dtype_default`, `arg_groups/model_overrides/deepseek_v2.py` "Setting page size to 64 for
DeepSeek DSA"); both came with SGLang's DSA support (v0.5.3, the release §6.6 dates the DSA page from).
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.attention_backends import (
    NamedBackends,
    backends_page,
    effective_attention,
)
from kvtop.domain.engines.sglang.default_mha import PHASES_SKIP_OVERRIDES, default_mha_page
from kvtop.domain.engines.sglang.default_mla import default_mla_page
from kvtop.domain.engines.sglang.dsv4 import DSV4_PAGE
from kvtop.domain.engines.sglang.eras import default_page_size
from kvtop.domain.engines.sglang.fa4 import fa4_page
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import AttentionKind, ModelSpec

DSA_PAGE = 64  # 64 × index_kpool from v0.5.23; no config kvtop reads states index_kpool (1)

# `auto` KV on a DSA model: the engine's DSA default, decided before the checkpoint's KV algo is read.
DSA_KV_DEFAULT_ERAS: Eras[bool] = Eras((
    Era("", False, "no DSA model support: `auto` follows the checkpoint (kv_cache_dtype.py)"),
    Era("0.5.3", True, "server_args.py (read at 0.5.6.post2), later arg_groups/overrides.py _dsa_kv_cache_dtype_default (0.5.23): "
        "auto → fp8_e4m3 on SM100+, bfloat16 below, before the model config's quant_config is read"),
))  # fmt: skip

# The DSA page on CUDA replaces a given --page-size (`self.page_size = 64` / overrides["page_size"]).
DSA_PAGE_ERAS: Eras[bool] = Eras((
    Era("", False, "no DSA model support"),
    Era("0.5.3", True, "server_args.py (read at 0.5.6.post2), later arg_groups/model_overrides/deepseek_v2.py (0.5.23): "
        "page_size = 64 for DeepSeek DSA on CUDA, over --page-size"),
))  # fmt: skip

# 0.5.3's server_args.py `_handle_model_specific_adjustments` ("DeepSeek NSA", not on NPU) set
# `mem_fraction_static = 0.8` for a DSA model over any given or automatic fraction; sgl-project/sglang#11309
# (2025-10-07) removed it with the indexer's share of the cell (eras.py DSA_CELL_ERAS). Read in the
# 0.5.3 and 0.5.3.post1 wheels (PyPI).
DSA_FRACTION_ERAS: Eras[float | None] = Eras((
    Era("", None, "no DSA model support"),
    Era("0.5.3", 0.8, "0.5.3 server_args.py: 'Setting mem fraction static to 0.8 for DeepSeek NSA.'"),
    Era("0.5.3.post1", None, "#11309 removed the fixed fraction (0.5.3.post1 server_args.py)"),
))  # fmt: skip


# `_handle_model_specific_adjustments` ("DeepSeek NSA", not on NPU) turns DP attention on for a DSA model whatever the
# launch says: 0.5.3 … 0.5.5 with `dp_size = tp_size`, 0.5.6 … 0.5.7 without touching dp_size; from 0.5.8 only under
# --enable-nsa-prefill-context-parallel (a flag kvtop refuses, flags_unmodelled.py). Read in the wheels (PyPI).
DSA_DP_ATTENTION_ERAS: Eras[str | None] = Eras((
    Era("", None, "no DSA model support"),
    Era("0.5.3", "dp_is_tp", "server_args.py 0.5.3:816-817, 0.5.3.post1:859, 0.5.4:1019, 0.5.5:1071: "
        "enable_dp_attention = True; dp_size = tp_size"),
    Era("0.5.6", "dp_attention", "server_args.py 0.5.6:950, 0.5.7:1035: enable_dp_attention = True, dp_size as given"),
    Era("0.5.8", None, "server_args.py 0.5.8:1122, 0.5.9:1222: only with --enable-nsa-prefill-context-parallel"),
))  # fmt: skip


def check_dsa_dp_attention(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> None:
    """Refuse, as not modelled, a DSA launch at a release that turns DP attention on by itself where the launch does
    not already say what the engine will run (0.5.6 … 0.5.7 with --dp 1 runs the typed layout): kvtop does not rewrite
    the launch's layout, and planning it as plain TP would be a silently wrong number. The launch line SGLang turns it
    into is planned as typed."""
    era = era_for(DSA_DP_ATTENTION_ERAS, version)
    rule, source = era.value, era.source
    if model.attention_kind is not AttentionKind.DSA or rule is None:
        return
    if rule == "dp_is_tp" and not (settings.enable_dp_attention and settings.dp == settings.tp):
        raise UnsupportedModelError(
            f"SGLang {version.label} runs a DSA model with DP attention at --dp {settings.tp} (= --tp) whatever the "
            f"launch says ({source}): not modelled as typed; plan it with --enable-dp-attention --dp {settings.tp}",
            field="--enable-dp-attention",
        )
    # with --dp 1 DP attention spans the whole TP group (attention TP = tp ÷ dp = tp): the layout kvtop plans as typed,
    # as the engine's own KV sizing at 0.5.6.post2 shows (docs/fidelity.md: its DSA cases equal at TP 1-8)
    if rule == "dp_attention" and settings.dp > 1 and not settings.enable_dp_attention:
        raise UnsupportedModelError(
            f"SGLang {version.label} turns DP attention on for a DSA model whatever the launch says ({source}): not "
            "modelled as typed; plan it with --enable-dp-attention",
            field="--enable-dp-attention",
        )


def forced_dsa_fraction(model: ModelSpec, version: ResolvedVersion) -> tuple[float, str] | None:
    """(fraction, why) this release sets for a DSA model over --mem-fraction-static; None where it sets none."""
    era = era_for(DSA_FRACTION_ERAS, version)
    if model.attention_kind is AttentionKind.DSA and era.value is not None:
        return era.value, f"DSA on CUDA: {era.value:g} over any given or automatic fraction ({era.source})"
    return None


def dsa_kv_default_before_checkpoint(version: ResolvedVersion) -> bool:
    """Whether this release replaces `auto` KV on a DSA model before the checkpoint's FP8 KV is read."""
    return era_for(DSA_KV_DEFAULT_ERAS, version).value


def forced_dsa_page(model: ModelSpec, version: ResolvedVersion) -> int | None:
    """The page this release sets for a DSA model whatever --page-size says; None where it sets none."""
    if model.attention_kind is AttentionKind.DSA and era_for(DSA_PAGE_ERAS, version).value:
        return DSA_PAGE
    return None


def _forced_page(
    model: ModelSpec, settings: LaunchSettings | None, gpu_name: str | None, version: ResolvedVersion,
    backends: NamedBackends | None,
) -> tuple[int, str] | None:
    """(page, why) where SGLang sets the page over any `--page-size`: DeepSeek-V4's, a DSA model's, fa4's; else None."""
    if model.compressed is not None:  # model_overrides/deepseek_v4.py on CUDA (read at 0.5.23; V4's own pool)
        return DSV4_PAGE, f"DeepSeek-V4 pages by {DSV4_PAGE} on CUDA"
    forced = forced_dsa_page(model, version)
    if forced is not None:
        return forced, f"DSA on CUDA pages by {forced}"
    return fa4_page(model, settings, gpu_name, version, backends)


def page_size_of(
    model: ModelSpec, given: int | None, gpu_name: str | None, version: ResolvedVersion,
    backends: NamedBackends | None = None, settings: LaunchSettings | None = None,
) -> tuple[int, str]:
    """(page size, why) the engine runs with: a DSA model's forced page, else fa4's (fa4.py: set last, over any other),
    else the named attention backend's (attention_backends.backends_page), else the page the per-phase backends or
    --page-size left under the page rule of SGLang's default backend (trtllm_mla or trtllm_mha over a page it does
    not take: default_mla.py, default_mha.py), else the default's own page. `settings` for fa4's EAGLE guard."""
    forced = _forced_page(model, settings, gpu_name, version, backends)
    if forced is not None:
        page, why = forced
        return page, why + (f" (over --page-size {given})" if given and given != page else "")
    found = backends_page(backends, given, version) if backends is not None else None
    if found is not None and backends is not None and effective_attention(backends, version) is not None:
        return found  # an attention backend named: SGLang picks no default backend
    # per-phase backends only: SGLang still picks its generic default, but from v0.5.3.post1 no model override's
    # (default_mha.PHASES_SKIP_OVERRIDES); before, the overrides run as with no backend named
    phases_named = backends is not None and PHASES_SKIP_OVERRIDES.at(version)
    page, why = found if found is not None else (given, "--page-size") if given else (0, "")
    if not page:
        return default_page_size(model, gpu_name, version, phases_named)
    # the default backend's page rule runs after the named ones', on the page they left
    over = f"--page-size {page}" if page == given else why
    return (default_mla_page(model, page, over, gpu_name, version, phases_named)
            or default_mha_page(model, page, over, gpu_name, version, phases_named) or (page, why))


def dsa_kv_note(model: ModelSpec, requested: str, kv_format: str, version: ResolvedVersion) -> str | None:
    """Why `auto` KV is not the checkpoint's FP8 on a DSA model, where that is so (a line for the plan)."""
    checkpoint_fp8 = (model.quant.kv_cache_quant_algo or "").upper() == "FP8"
    if (
        requested == "auto"
        and checkpoint_fp8
        and model.attention_kind is AttentionKind.DSA
        and kv_format in ("bf16", "fp16", "fp32")
        and dsa_kv_default_before_checkpoint(version)
    ):
        return (
            f"KV {kv_format}: SGLang's DSA default below SM100 replaces `auto` before the checkpoint's FP8 KV "
            "is read (docs/engines/sglang.md §10)"
        )
    return None
