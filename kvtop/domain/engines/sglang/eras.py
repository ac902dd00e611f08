"""SGLang's rules that changed between releases, each era with the first release it holds for and its
source (docs/engines/sglang.md §5, §14). Which release printed a log: `releases.py`.

Read at every release tag of sgl-project/sglang (v0.4.0 … v0.5.18) and in the v0.5.19 … v0.5.23
wheels. The automatic `mem_fraction_static` went through six shapes: a TP-size table, that table
or a 13 GiB reserve on GPUs above 80 GiB, a table on tp × pp with an H200 relaxation, a B200 0.79,
a reserve by GPU class, and today's activation + CUDA-graph reserve. VLMs had their fraction cut
by a runner multiplier, then by a tower-size factor; a 100 MiB multimodal reserve came later.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.attention_backends import live_page_rule, since
from kvtop.domain.engines.sglang.cuda_graph_bs import class_decode_max_bs
from kvtop.domain.engines.sglang.decode_graphs_off import (
    decode_graphs_off_reason,
    decode_node_activation_tokens,
    deepep_reserve_kept,
    dp_padding_off,
)
from kvtop.domain.engines.sglang.default_mha import (
    NEMOTRON_H_ARCHS,
    NEMOTRON_H_SM100_ERAS,
    default_trtllm_mha,
)
from kvtop.domain.engines.sglang.default_mla import takes_default_trtllm_mla
from kvtop.domain.engines.sglang.deployment import setup as deployment_setup
from kvtop.domain.engines.sglang.deployment_eras import (
    breakable_deepep_mib,
    deepep_reserve_mib,
    spec_reserve_mib,
)
from kvtop.domain.engines.sglang.fraction_words import mib_said
from kvtop.domain.engines.sglang.hybrid_swa import unlisted_reason
from kvtop.domain.engines.sglang.multimodal import is_multimodal, vlm_factor_vision
from kvtop.domain.engines.sglang.prefill_graphs_off import prefill_graphs_off_reason
from kvtop.domain.engines.sglang.prefill_graphs_optin import optin_reserve_mib
from kvtop.domain.engines.sglang.vlm_fraction_skip import vlm_factor_skipped_by
from kvtop.domain.engines.versions import (
    Era,
    Eras,
    ResolvedVersion,
    era_for,
)
from kvtop.domain.gpu_total_origin import smi_total_bytes
from kvtop.domain.gpus import NO_GPU, SM100, SM100_AND_NEWER, CapabilityFamily
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import AttentionKind, ModelSpec, VisionSpec
from kvtop.domain.wording import MIB

FractionRule = Callable[[EngineInputs, int, int | None], tuple[float, str]]
"""(inputs, GPU memory in MiB, the decode graphs' largest size as typed or None) -> (mem_fraction_static, how it was
reached). The typed size is cuda_graph_bs.decode_graph_max_bs, read once per plan by budget.py; only the
activation-reserve era (v0.5.3rc2 on) reads it."""


# The automatic fractions of the TP-size table (v0.4.0 … v0.4.7 on GPUs up to 80 GiB), by TP ≥ 1/2/4/8/16.
TP_TABLE_FRACTIONS = (0.88, 0.87, 0.85, 0.81, 0.79)


def _table(parallel: int, tp8: float = 0.81) -> float:
    """The TP-size table: ≥ 16 0.79, ≥ 8 0.81 (0.82 before v0.4.0), ≥ 4 0.85, ≥ 2 0.87, else 0.88."""
    for at_least, fraction in ((16, 0.79), (8, tp8), (4, 0.85), (2, 0.87)):
        if parallel >= at_least:
            return fraction
    return 0.88


def _s1_table(inputs: EngineInputs, gpu_mib: int, _graph_bs: int | None) -> tuple[float, str]:
    tp = inputs.layout.tp
    return _table(tp, tp8=0.82), f"TP-size table at TP {tp} (before v0.4.0: 0.82 at TP ≥ 8)"


def _s2_table(inputs: EngineInputs, gpu_mib: int, _graph_bs: int | None) -> tuple[float, str]:
    tp = inputs.layout.tp
    return _table(tp), f"TP-size table at TP {tp} (0.88/0.87/0.85/0.81/0.79 at TP ≥ 1/2/4/8/16)"


def _s3_table_or_13gib(inputs: EngineInputs, gpu_mib: int, _graph_bs: int | None) -> tuple[float, str]:
    if gpu_mib <= 81920:
        return _s2_table(inputs, gpu_mib, None)
    return (gpu_mib - 13 * 1024) / gpu_mib, f"({gpu_mib} MiB − 13 GiB) ÷ {gpu_mib} MiB, above 80 GiB"


def _s4_parallel_table(inputs: EngineInputs, gpu_mib: int, _graph_bs: int | None, *, b200: bool = False) -> tuple[float, str]:
    parallel = inputs.layout.tp * inputs.layout.pp
    base = _table(parallel) if gpu_mib <= 81920 else 0.88
    how = f"table at tp × pp = {parallel}" if gpu_mib <= 81920 else "0.88 above 80 GiB"
    if b200 and gpu_mib > 180 * 1000:
        return 0.79, f"0.79 on a GPU above 180,000 MiB (B200, {gpu_mib} MiB)"
    if gpu_mib > 96 * 1024:
        relaxed = min(base + 48 * 1024 * (1 - base) / gpu_mib, (gpu_mib - 18 * 1024) / gpu_mib)
        return (
            relaxed,
            f"{how}, relaxed above 96 GiB: min(f + 48 GiB × (1 − f) ÷ total, (total − 18 GiB) ÷ total)",
        )
    return base, how


def _s5_b200(inputs: EngineInputs, gpu_mib: int, _graph_bs: int | None) -> tuple[float, str]:
    return _s4_parallel_table(inputs, gpu_mib, None, b200=True)


# (GPU memory below, MiB) -> reserved MiB before extras, as a function of tp × pp (v0.4.7.post1 … v0.5.3rc0)
_S6_RESERVE: tuple[tuple[float, Callable[[int], float]], ...] = (
    (20 * 1024, lambda parallel: (2.8 + parallel / 10) * 1024),
    (35 * 1024, lambda parallel: (2.8 + parallel / 10) * 1024),
    (90 * 1024, lambda parallel: (9.5 + parallel / 2) * 1024),
    (100 * 1024, lambda parallel: (12 + parallel / 2) * 1024),
    (160 * 1024, lambda parallel: (12 + parallel / 2) * 1024),
    (math.inf, lambda parallel: 32 * 1024),
)


def _s6_gpu_class(inputs: EngineInputs, gpu_mib: int, _graph_bs: int | None) -> tuple[float, str]:
    parallel = inputs.layout.tp * inputs.layout.pp
    reserved = next(rule(parallel) for below, rule in _S6_RESERVE if gpu_mib < below)
    if inputs.layout.dp_attention:
        reserved += 4 * 1024
    extra, why = deployment_reserve_mib(inputs)
    reserved += extra
    return round(
        (gpu_mib - reserved) / gpu_mib, 3
    ), f"({gpu_mib} − {reserved:.0f} MiB reserve by GPU class{why}) ÷ {gpu_mib}"


# (GPU memory below, MiB) -> (chunked_prefill_size, decode CUDA-graph max bs at tp < 4, at tp ≥ 4), by era
_GPU_CLASSES_0_5_3: tuple[tuple[float, int, tuple[int, int]], ...] = (
    (20 * 1024, 2048, (8, 8)),
    (35 * 1024, 2048, (16, 80)),
    (60 * 1024, 4096, (32, 160)),
    (90 * 1024, 8192, (256, 512)),
    (160 * 1024, 8192, (256, 512)),
    (math.inf, 16384, (512, 512)),
)
_GPU_CLASSES_0_5_4_POST1 = tuple(
    (b, c, (24, 80)) if b == 35 * 1024 else (b, c, g) for b, c, g in _GPU_CLASSES_0_5_3
)
_GPU_CLASSES_0_5_20 = tuple(
    (b, 4096, (48, 160)) if b == 35 * 1024 else (b, c, g) for b, c, g in _GPU_CLASSES_0_5_3
)
GPU_CLASS_ERAS = Eras((
    Era("0.5.3rc2", _GPU_CLASSES_0_5_3, "server_args.py _handle_gpu_memory_settings (#10372)"),
    Era("0.5.4.post1", _GPU_CLASSES_0_5_4_POST1, "#12124: decode max bs 24 below 35 GiB"),
    Era("0.5.20", _GPU_CLASSES_0_5_20, "memory_hook.py: 4096 / 48|160 below 35 GiB"),
))
# Piecewise (prefill) CUDA graph, on by default from v0.5.10rc0 (#16331): +8 MiB per captured size
# (non-MLA) or +1.5 GiB (MLA). Sizes up to max tokens, v0.5.9 onward:
_PCG_SIZES = [
    *range(4, 33, 4),
    *range(48, 257, 16),
    *range(288, 513, 32),
    *range(576, 1025, 64),
    *range(1280, 4097, 256),
]
PCG_DEFAULT_SINCE = "0.5.10rc0"
# _handle_gpu_memory_settings' "large parallel size" term, `reserved_mem += tp_size * pp_size / 8 * 1024` (MiB), read in
# the wheels from v0.5.3rc2, where it came with the activation reserve (#10372; v0.5.3rc0 :500-515 still sizes the
# reserve by GPU class, `_s6_gpu_class`): server_args.py v0.5.3rc2:647-648, v0.5.9:1030-1031, v0.5.14:3286-3287,
# v0.5.18:4971-4972; arg_groups/memory_hook.py v0.5.19:252-253, v0.5.23:311-312 (the post-capture branch keeps it too,
# v0.5.23:295). Held v0.5.3rc2 – v0.5.23 (AUTO_FRACTION_ERAS' last era); the words say it beside the reserve
PARALLEL_MIB, PARALLEL_RANKS = 1024, 8
PARALLEL_SINCE = "0.5.3rc2"  # the era `_s7_activation_reserve` opens (AUTO_FRACTION_ERAS)


def pcg_sizes(max_tokens: int) -> int:
    """How many prefill sizes SGLang captures up to `max_tokens` (v0.5.9+ list: 42 at 2048, 58 at 8192)."""
    return len([s for s in _PCG_SIZES if s <= max_tokens]) + len(range(4608, max_tokens + 1, 512))


def _s7_activation_reserve(inputs: EngineInputs, gpu_mib: int, graph_bs: int | None) -> tuple[float, str]:
    """§5 `handle_gpu_memory_settings`: metadata + prefill activations + CUDA graphs + parallel padding; the reason
    names the parallel term (tp_size × pp_size / 8 × 1024 MiB), so PP 41 at TP 8 reads as 41,984 MiB of its reserve."""
    s, lay, version = inputs.settings, inputs.layout, inputs.version
    classes = era_for(GPU_CLASS_ERAS, version).value
    _, chunked_default, default_bs = next(c for c in classes if gpu_mib < c[0])
    chunked = s.chunked_prefill_size if s.chunked_prefill_size is not None else chunked_default
    # as typed (cuda_graph_bs.decode_graph_max_bs), else by class (cut to --max-running-requests from 0.5.22)
    multimodal = is_multimodal(inputs.model, s, version)
    max_bs, bs_why = (graph_bs, "") if graph_bs else class_decode_max_bs(
        inputs, default_bs[0 if lay.tp < 4 else 1], gpu_mib, multimodal
    )
    speculating = deployment_setup(s).spec_method is not None
    decode_node = decode_node_activation_tokens(inputs, max_bs, speculating)  # from 0.5.15 (decode_graphs_off.py)
    activation_tokens = decode_node or max(chunked if chunked > 0 else s.max_prefill_tokens or 16384, 2048)
    decode_off = decode_graphs_off_reason(inputs)  # from 0.5.15: a PD prefill node, --disable-cuda-graph
    graph: float = 0 if decode_off else 2 * max_bs
    if lay.dp_attention and not dp_padding_off(inputs):
        graph += 3 * max_bs * lay.dp + (1.5 * max_bs * lay.dp if max_bs > 300 else 0)
    parallel = lay.tp * lay.pp / PARALLEL_RANKS * PARALLEL_MIB
    reserved = 512 + 1.5 * activation_tokens + parallel + graph
    gpus = lay.tp * lay.pp
    parts = (f", {parallel:.0f} MiB of it for {gpus} GPU{'s' if gpus > 1 else ''} of TP × PP ({lay.tp} × {lay.pp}; "
             f"{PARALLEL_MIB:,} MiB per {PARALLEL_RANKS} GPUs)")  # fmt: skip
    if decode_node:
        parts += f", {1.5 * decode_node:.0f} MiB of it a PD decode node's {decode_node} activation tokens"
    if decode_off:
        parts += f", no decode graphs (off for {decode_off})"
    elif bs_why:
        parts += f", {bs_why}"
    pcg_on = since(PCG_DEFAULT_SINCE, version)
    off_for = prefill_graphs_off_reason(inputs) if pcg_on else None  # prefill_graphs_off.py
    if off_for is not None:
        parts += f", no prefill graphs (off for {off_for})"
    elif pcg_on:
        if inputs.model.mla is not None:
            pcg = 1.5 * 1024
        else:
            # the largest captured size is chunked_prefill_size (-1, chunking off: no sizes)
            max_tokens = min(max(chunked, 0), s.max_total_tokens or math.inf)
            if "llama-2" in (s.model or "").lower():
                max_tokens = min(max_tokens, 4096)
            pcg = 8 * pcg_sizes(int(max_tokens))
        reserved += pcg
        parts += f", {pcg:.0f} MiB of it prefill graphs"
        if (bcg := breakable_deepep_mib(inputs.version)[0]) and deployment_setup(s).a2a_backend == "deepep":
            reserved += bcg  # from 0.5.15 the prefill graphs kvtop keeps on are the breakable backend's
            parts += f", {bcg} MiB of it their DeepEP capture"
    before_floor, after_floor, optin = optin_reserve_mib(inputs, chunked, pcg_sizes)  # prefill_graphs_optin.py
    reserved += before_floor
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    extra, why = deployment_reserve_mib(inputs)  # on top of the floor (docs/engines/sglang.md §19.1, §19.2)
    reserved += extra + after_floor
    parts += optin
    fraction = round((gpu_mib - reserved) / gpu_mib, 3)
    return fraction, f"({gpu_mib} − {reserved:.0f} MiB reserve{parts}{why}) ÷ {gpu_mib} MiB{mib_said(reserved)}"


def deployment_reserve_mib(inputs: EngineInputs) -> tuple[float, str]:
    """MiB the automatic fraction adds for a speculative draft (docs/engines/sglang.md §19.1) and DeepEP buffers
    (§19.2), and how the reason reads ('' when none)."""
    setup = deployment_setup(inputs.settings)
    parts: list[str] = []
    total = 0
    if setup.spec_method:
        mib = spec_reserve_mib(setup.spec_method, inputs.version)[0]
        if mib:
            total += mib
            parts.append(f"{mib} MiB of it the {setup.spec_method} draft")
    if setup.a2a_backend == "deepep" and deepep_reserve_kept(inputs.settings):
        mib = deepep_reserve_mib(inputs.version)[0]
        if mib:
            total += mib
            parts.append(f"{mib} MiB of it DeepEP")
    return total, "".join(f", {part}" for part in parts)


AUTO_FRACTION_ERAS: Eras[FractionRule] = Eras((
    Era("", _s1_table, "server_args.py __post_init__: the TP-size table of v0.3.x (0.82 at TP ≥ 8)"),
    Era("0.4.0", _s2_table, "server_args.py __post_init__: TP-size table (#2325, 2024-12-02)"),
    Era("0.4.5.post3", _s3_table_or_13gib, "server_args.py: 13 GiB reserve above 80 GiB (#5604, 2025-04-21)"),
    Era(
        "0.4.6.post2", _s4_parallel_table, "server_args.py: table on tp × pp, H200 relaxation (#5893, #5724)"
    ),
    Era("0.4.7", _s5_b200, "server_args.py: 0.79 on B200 (#6718, 2025-05-29)"),
    Era("0.4.7.post1", _s6_gpu_class, "server_args.py: reserve by GPU class (#7054, 2025-06-10)"),
    Era(PARALLEL_SINCE, _s7_activation_reserve, "_handle_gpu_memory_settings / memory_hook.py (#10372, #11076)"),
))

# VLMs: a multiplier on the model runner's copy (also with a given --mem-fraction-static), then a
# factor on the automatic value only, from the vision tower's size (as SGLang reads it: vlm_vision.py).
# 0.5.23 has a second form, `mem_fraction_static − 8 × 1024 ÷ gpu_mem` where post-capture KV sizing is planned
# (arg_groups/memory_hook.py adjust_mem_fraction_for_vlm; overrides.py post_capture_kv_sizing_planned): only with
# SGLANG_ENABLE_POST_CAPTURE_KV_SIZING (environ.py: default False), which a launch sets in its environment and only
# Muse Spark's hook sets by itself (muse_spark_hook.py; a class kvtop refuses). kvtop predicts the default launch;
# a log of a post-capture resize is named not modelled by explain (explain.py _refuse_post_capture_resize).
VlmRule = tuple[str, float]  # ("runner" | "auto" | "tower", factor)
VLM_ERAS: Eras[VlmRule] = Eras((
    Era("", ("runner", 0.95), "model_runner.py: is_multimodal → mem_fraction_static × 0.95"),
    Era("0.4.4.post4", ("runner", 0.90), "model_runner.py: × 0.90 (#4754, 2025-03-31)"),
    Era("0.4.9", ("auto", 0.90), "server_args.py: the automatic value × 0.90 (#7748, 2025-07-04)"),
    Era("0.4.9.post3", ("tower", 0.95), "adjust_mem_fraction_for_vlm: × 0.95 × tower factor (#6881)"),
))


# The eras whose automatic fraction does not read the GPU's memory (a TP-size table alone).
_GPU_BLIND = (_s1_table, _s2_table)


def auto_fraction_reads_gpu(version: ResolvedVersion) -> bool:
    """Whether this release's automatic fraction depends on the GPU's memory (every era since v0.4.5.post3)."""
    return era_for(AUTO_FRACTION_ERAS, version).value not in _GPU_BLIND


def auto_mem_fraction_static(inputs: EngineInputs, graph_bs: int | None) -> tuple[float, str]:
    """The automatic `mem_fraction_static` of the engine's release (§5), with the VLM factor of its era; `graph_bs`
    the decode graphs' largest size as typed (cuda_graph_bs.decode_graph_max_bs; None: the GPU class's). The GPU's
    memory is nvidia-smi's total (get_nvgpu_memory_capacity: utils.py ≤ 0.4.x, utils/common.py:1724 in 0.5.9), never a
    --gpu-memory's CUDA total (`gpu_total_origin.smi_total_bytes`)."""
    origin = inputs.measured.total_origin(inputs.gpu_name, inputs.gpu_total_bytes)
    gpu_mib = smi_total_bytes(inputs.gpu_name, inputs.gpu_total_bytes, origin) // MIB
    era = era_for(AUTO_FRACTION_ERAS, inputs.version)
    fraction, how = era.value(inputs, gpu_mib, graph_bs)
    source = f"auto {inputs.version.label}: {how}"
    vlm = era_for(VLM_ERAS, inputs.version).value
    vision, why = vlm_factor_vision(inputs.model, inputs.version)
    multimodal = is_multimodal(inputs.model, inputs.settings, inputs.version)
    skipped = vlm_factor_skipped_by(inputs.settings, inputs.version) if multimodal else None
    if skipped is not None:  # an instance that runs no encoder (vlm_fraction_skip.py)
        source += f" (no factor for a multimodal model: {skipped})"
    elif multimodal and vlm[0] == "auto":
        fraction *= vlm[1]
        source += f" × {vlm[1]:g} for a multimodal model"
    elif multimodal and vlm[0] == "tower" and vision is not None:  # not rounded again
        tower = vit_size_factor(vision)
        fraction *= vlm[1] * tower
        source += f" × {vlm[1]:g} × {tower:.5f} for the vision tower ({vision.num_layers} layers of width {vision.hidden_size}"
        source += f"; {why})" if why else ")"
    elif multimodal and vlm[0] == "tower" and why:
        source += f" ({why})"
    return fraction, source


def runner_multiplier(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> float:
    """Before v0.4.9 the model runner cut every VLM's fraction (given or automatic) by 0.95, then 0.90."""
    kind, factor = era_for(VLM_ERAS, version).value
    return factor if kind == "runner" and is_multimodal(model, settings, version) else 1.0


def vit_size_factor(vision: VisionSpec) -> float:
    """§5 `adjust_mem_fraction_for_vlm` (no post-capture sizing): the tower-size term of the factor.

    clamp(1 − 0.1 × (layers × width² ÷ (24 × 1024²) − 1), 0.8, 1.05): a tower bigger than 24
    layers of width 1024 leaves less for KV. The auto fraction is multiplied by 0.95 × this.
    """
    size_ratio = vision.num_layers * vision.hidden_size**2 / (24 * 1024**2)
    return min(max(1 - 0.1 * (size_ratio - 1), 0.8), 1.05)


# The default page size when no --page-size is given (§6.6): 1, unless the default attention
# backend forces one. DSA on CUDA: 64 (v0.5.3+). On Blackwell (SM100): the MLA classes SGLang sends to
# trtllm_mla (default_mla.DEFAULT_MLA_CLASSES: DeepSeek-V3 from v0.5.3.post2, Kimi-K2.5 from v0.5.9 …), GPT-OSS (trtllm_mha, v0.5.0rc2+) and every MHA model (trtllm_mha,
# v0.5.6.post1+) take 64.
def default_page_size(model: ModelSpec, gpu_name: str | None, version: ResolvedVersion,
                      phases_named: bool = False) -> tuple[int, str]:
    """(page size, why) for this model, GPU and release; `phases_named`: only per-phase backends are named and
    the release skips the model overrides then (default_mha.PHASES_SKIP_OVERRIDES), so SGLang picks its generic
    default (default_mha.default_trtllm_mha)."""
    if model.attention_kind is AttentionKind.DSA and since("0.5.3", version):
        return 64, "DSA on CUDA pages by 64"
    mha = default_trtllm_mha(model, gpu_name, version, phases_named)  # GPT-OSS, Nemotron-H, every MHA model
    mha_rule = live_page_rule("trtllm_mha", version)
    if mha is not None and mha_rule is not None:
        return mha_rule.page, f"{mha}, pages by {mha_rule.page}"
    blackwell = SM100.holds(gpu_name)  # is_sm100_supported (0.5.6 server_args.py:1068, :1175): not the SM120 cards
    if model.state is not None:
        if blackwell and model.architecture in NEMOTRON_H_ARCHS:
            if era_for(NEMOTRON_H_SM100_ERAS, version).value == "flashinfer":
                return 1, "flashinfer, Nemotron-H's attention backend on Blackwell, pages by 1"
        else:
            # Qwen3-Next / Qwen3.5 (GDN) run triton on SM100 (the model's override, v0.5.6 … v0.5.23); other
            # hybrids: MambaRadixCache's `no_buffer` works with page 1 only (§6.6.1 for what is not pinned)
            return 1, "page 1 (a linear-attention hybrid: triton / MambaRadixCache)"
    mla_rule = live_page_rule("trtllm_mla", version)
    if takes_default_trtllm_mla(model, gpu_name, version, phases_named) and mla_rule is not None:
        return mla_rule.page, f"trtllm_mla, SGLang's default for {model.architecture} on SM100, pages by {mla_rule.page}"
    return 1, "page 1 (the default backend does not force one)"


# §6.1.1 DeepSeek-V3.2 (DSA) with FP8 KV. The pool allocates `calculate_mla_kv_cache_dim` bytes a row: the
# 656-B layout (fp8 NoPE + fp32 scale per 128 + bf16 RoPE), or the raw 576-B latent where the trtllm DSA
# backends run (the FP8 default on capability major 10 and newer, which these eras name). The token count divided the budget by
# the raw 576-B latent + indexer whatever the pool allocated, until the cell came from the pool's own
# width in v0.5.17. The GPUs: `major >= 10` of `torch.cuda.get_device_capability()` (0.5.10rc0 server_args.py
# _set_default_nsa_backends:1434, 0.5.10 :1465, 0.5.12 :1722; 0.5.23 arg_groups/overrides.py:714-720), so SM120
# cards (RTX PRO 6000, RTX 5090) too; the pool keeps the raw row where the DSA decode backend is trtllm (0.5.10
# model_executor/model_runner_kv_cache_mixin.py:240-257 calculate_mla_kv_cache_dim)
DSA_RAW_FP8_ERAS: Eras[tuple[CapabilityFamily, bool]] = Eras((  # (GPU family, only without --dp)
    Era("", (NO_GPU, False), "NSATokenToKVPool: FP8 rows are 656 B on every GPU (v0.5.6 … v0.5.9)"),
    Era(
        "0.5.10rc0",
        (SM100_AND_NEWER, True),
        "server_args.py:1434 _set_default_nsa_backends: FP8 at dp_size 1 and major >= 10 → trtllm, raw 576-B rows",
    ),
    Era("0.5.10", (SM100_AND_NEWER, False), "server_args.py:1465 _set_default_nsa_backends: FP8 at major >= 10 → "
        "trtllm (any dp); 0.5.23 arg_groups/overrides.py:714-720"),
))
DSA_CELL_ERAS: Eras[str] = Eras((
    Era("", "latent", "profile_max_num_token / get_cell_size_per_token: (kv_lora_rank + rope) × 1 B + indexer"),
    Era("0.5.3", "latent_no_index", "0.5.3 model_runner.py profile_max_num_token: (kv_lora_rank + rope) × layers × "
        "the KV dtype's size, the indexer not counted though NSATokenToKVPool allocates it"),
    Era("0.5.3.post1", "latent", "#11309 (2025-10-07): profile_max_num_token adds the indexer "
        "(index_head_dim + index_head_dim // 128 × 4 B per layer; 0.5.3.post1 model_runner.py)"),
    Era("0.5.17", "pool", "pool_configurator._compute_cell_size: calculate_mla_kv_cache_dim × layers + indexer"),
))


def raw_fp8_dsa_family(settings: LaunchSettings, version: ResolvedVersion) -> CapabilityFamily:
    """The GPU family where this release keeps FP8 DSA KV as the raw 576-B latent (its trtllm DSA default, chosen
    on capability major >= 10: DSA_RAW_FP8_ERAS); `NO_GPU` where it keeps none."""
    family, single_dp_only = era_for(DSA_RAW_FP8_ERAS, version).value
    return NO_GPU if single_dp_only and settings.dp > 1 else family


def dsa_cell_is_latent(version: ResolvedVersion) -> bool:
    """Before v0.5.17 the token count used the raw latent width even where the pool allocates 656 B."""
    return era_for(DSA_CELL_ERAS, version).value in ("latent", "latent_no_index")


def dsa_cell_counts_index(version: ResolvedVersion) -> bool:
    """Whether the token count's cell holds the DSA indexer's keys (all but 0.5.3, which left them out)."""
    return era_for(DSA_CELL_ERAS, version).value != "latent_no_index"


# §8.4.1 Models whose sliding-window layers SGLang keeps in the one full pool, by release. GPT-OSS: ServerArgs
# sets disable_hybrid_swa_memory (always, then only with trtllm_mha, the SM100 default). Llama-4's chunked
# layers were hybrid only with --hybrid-kvcache-ratio until `is_hybrid_swa_model` listed it.
# The value is the GPUs the switch holds on: a family (SM100), `NO_GPU` (on none), or None, which means every GPU,
# one whose capability kvtop does not know included (the release checks no GPU at all, so the reason names none).
GPT_OSS_FULL_POOL_ERAS: Eras[CapabilityFamily | None] = Eras((
    Era("", None, "server_args.py GptOssForCausalLM: disable_hybrid_swa_memory = True (v0.5.0rc0 … v0.5.7)"),
    Era("0.5.8", SM100, "… only with the trtllm_mha backend (the default on is_sm100_supported, 0.5.8 server_args.py "
        "GptOssForCausalLM) or speculative decoding"),
    Era("0.5.10rc0", NO_GPU, "no GPT-OSS switch: its sliding layers get their own pool"),
))
LLAMA4_HYBRID_SINCE = "0.5.8"  # configs/model_config.py is_hybrid_swa_model lists Llama4ForConditionalGeneration


def full_pool_reason(
    model: ModelSpec, settings: LaunchSettings, gpu_name: str | None, version: ResolvedVersion
) -> str | None:
    """Why this release keeps a sliding-window model in the one full pool (None: it splits a SWA pool)."""
    if settings.disable_hybrid_swa_memory:
        return "--disable-hybrid-swa-memory"
    if model.model_type in era_for(GEMMA_SWA_OFF_ERAS, version).value:
        return f"SGLang {version.label} turns hybrid SWA memory off for {model.architecture} (server_args.py)"
    if model.architecture == "GptOssForCausalLM":
        family = era_for(GPT_OSS_FULL_POOL_ERAS, version).value
        if family is None or family.holds(gpu_name):
            return f"SGLang {version.label} turns hybrid SWA memory off for GPT-OSS" + (
                "" if family is None else f" with trtllm_mha ({family.label})"
            )
    if model.architecture == "Llama4ForConditionalGeneration" and not since(LLAMA4_HYBRID_SINCE, version):
        return f"SGLang {version.label} keeps Llama-4's chunked layers in the full pool (before v0.5.8)"
    return unlisted_reason(model, version)


# Gemma ask SGLang for the plain full pool (server_args.py "Disable hybrid SWA memory for {model_arch} as it is not yet
# supported."): none at 0.4.9.post3 … 0.4.10.post1, Gemma2ForCausalLM at 0.4.10.post2, Gemma-2/3/3n's five classes
# 0.5.0rc0 … 0.5.14, none from 0.5.15 (wheels read: 0.4.9.post3 … 0.5.1, 0.5.1.post3, 0.5.2, 0.5.3 … 0.5.3.post3,
# 0.5.4 … 0.5.6.post2 and every release from 0.5.7; the rcs and posts between not); from 0.5.7 no list of
# configs/model_config.py names them either (hybrid_swa.py), so the pool is one full pool all the same
GEMMA_SWA_OFF_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "server_args.py: no Gemma switch (0.4.9.post3, 0.4.10, 0.4.10.post1)"),
    Era("0.4.10.post2", frozenset({"gemma2"}), "server_args.py check_server_args: Gemma2ForCausalLM"),
    Era("0.5.0rc0", frozenset({"gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text"}),
        "server_args.py: Gemma2/3/3n classes (read at 0.5.0rc0 … 0.5.14)"),
    Era("0.5.15", frozenset(), "server_args.py: no Gemma switch (0.5.15 … 0.5.23): is_hybrid_swa_model lists none"),
))  # fmt: skip
