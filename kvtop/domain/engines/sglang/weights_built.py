"""Parameters SGLang's own model classes build that the weights book (the checkpoint's tensors) does not count.

Read in SGLang 0.5.23 and checked against its classes built on the meta device at TP 2 with and without
expert parallel and at PP 2 / 4 (benchmarks/engine_diff, docs/fidelity.md's architecture table: readings
A9, A12, A14); earlier releases are not checked, so the book's count stands for them
(docs/engines/sglang.md §20):

- NVFP4 experts (`ModelOptNvFp4FusedMoEMethod.create_weights`, srt/layers/quantization/modelopt_quant.py): beside
  `w13_weight_scale` / `w2_weight_scale` it registers `w13_blockscale_swizzled` / `w2_blockscale_swizzled`,
  the same float8 block scales again, padded to 128 rows and 4 columns (`swizzle_blockscale`,
  quantization/utils.py), unless the MoE runs on FlashInfer's TRT-LLM kernels (which SGLang picks by itself for
  the DeepSeek family on SM100: arg_groups/overrides.py `_deepseek_moe_quant_resolution`); and its
  `w13_input_scale` / `w2_input_scale` are fp32 for every expert of the model (`_sglang_require_global_experts`),
  not the rank's. The load frees most of those copies again: `process_weights_after_loading` (modelopt_quant.py:
  3005-3010 / 3046-3051) writes the swizzled scales into `w*_weight_scale` and re-registers the placeholder's name as
  that parameter (`alias_or_bind_derived_param`, layers/utils/common.py:74-106) wherever the padded shape is the
  scales' own, so the placeholder's storage goes; elsewhere it is filled and kept (blockscale_leak.py
  `unaligned_scales`); on SM 8.0 – 9.x the MoE runs Marlin (`create_moe_runner` at `auto`), whose branch of
  process_weights_after_loading returns before the alias (:2738-2764): every placeholder kept. Two figures, named apart: the `expert_scales` row is what a rank holds after the load (the
  kept copies and the input scales: what the plan sizes with); `released_rows` is what the classes build and the
  load frees (the aliased placeholders: in the meta-built count, never resident).
- A shared expert fused into the routed ones as one more expert: DeepSeek-V3/R1 and GLM-5 without expert parallel
  (`DeepseekV2ForCausalLM.shared_experts_fusion_disable_reason`, models/deepseek_v2.py: the config's architecture
  the class's `fused_shared_experts_architecture`, "DeepseekV3ForCausalLM", or "GlmMoeDsaForCausalLM" for
  glm4_moe.py's GlmMoeDsaForCausalLM, never DeepseekV32ForCausalLM's; 256 routed experts, one shared, a GPU of
  SM 8.0 or more, no EP) and Qwen3-Next where the shared width is the routed one
  (`can_fuse_shared_expert`, models/qwen2_moe.py; qwen3_next.py enables it on CUDA). Fused, the shared expert is
  an expert like the others: split over TP as the book splits it, but under EP one more expert on every rank,
  split over TP ÷ EP only (fused_moe_triton/layer.py), and its NVFP4 block scales are swizzled as the routed ones'.
- A compressed-tensors WNA16 MoE's act-order indices on SM100: `CompressedTensorsWNA16MoE.create_weights`
  (quantization/compressed_tensors/schemes/compressed_tensors_wNa16_moe.py) registers `w13_weight_g_idx` [E,
  hidden], `w2_weight_g_idx` [E, shard] and their `_sort_indices`, int32. The Marlin method (Hopper and older)
  empties them after loading where the checkpoint has no group act-order; `get_moe_scheme` (compressed_tensors.py)
  picks the Triton subclass instead on SM100 (capability 10.x, `--moe-runner-backend auto`) for symmetric int4
  groups of 32 or 128 without act-order, whose `process_weights_after_loading` keeps them. kvtop reads no
  compressed-tensors `actorder` (every such checkpoint at hand states none).
- GPTQ (served as gptq_marlin): each layer's g_idx and qzeros, the experts' sort indices (gptq_built.py).
- (k_scale and v_scale on each RadixAttention are per-layer scalars: kv_scales.py, through `stage_parts`.)
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.gptq_built import gptq_marlin_row
from kvtop.domain.engines.sglang.nvfp4_experts import (
    expert_shard,
    gemm1_blocks,
    nvfp4_expert_layers,
    swizzled_scales,
    unaligned_scales,
)
from kvtop.domain.engines.sglang.nvfp4_runner import NvFp4MoeRunner, runner_pick
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.gpus import SM100, compute_capability
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.quant import QuantSpec
from kvtop.domain.weights import WeightRow

CHECKED_ERAS: Eras[bool] = Eras((
    Era("", False, "not checked before 0.5.23: the book's count"),
    Era("0.5.23", True, "engine-diff's meta-built classes (benchmarks/engine_diff/param_shapes.py)"),
))  # fmt: skip

SCALE_FP32 = 4
DEEPSEEK_FUSED_EXPERTS = 256  # the routed-expert count deepseek_v2.py fuses at (384: Quark checkpoints only)
# the architectures deepseek_v2.py's fusion gate accepts: each class's `fused_shared_experts_architecture` where the
# config names that class (0.5.23: GLM-5's GlmMoeDsaForCausalLM, glm4_moe.py, meta-built with 257 experts a layer)
DEEPSEEK_FUSING_CLASSES = frozenset({"DeepseekV3ForCausalLM", "GlmMoeDsaForCausalLM"})


def built_rows(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None = None,
) -> tuple[WeightRow, ...]:
    """The rows SGLang's classes add to the book on one rank of the stage holding `layers` (`quantization`: the
    launch's `--quantization`, which the NVFP4 MoE runner reads: nvfp4_runner.py)."""
    if not CHECKED_ERAS.at(version):
        return ()
    rows = (_fused_shared(model, layout, layers, gpu_name),
            _nvfp4_experts(model, layout, layers, gpu_name, version, quantization),
            _wna16_act_order(model, layout, layers, gpu_name), gptq_marlin_row(model, layout, layers),
            _dsv4_wo_a(model, layout, layers, gpu_name))  # fmt: skip
    return tuple(row for row in rows if row is not None)


def _row(component: str, nbytes: int, note: str, params: int = 0) -> WeightRow | None:
    if nbytes <= 0:
        return None
    return WeightRow(component=component, params=params, bytes=nbytes, shards=1,
                     bytes_per_param=nbytes / params if params else 0.0, note=note)  # fmt: skip


def _moe_layers(model: ModelSpec, layers: range) -> list[int]:
    return [layer for layer in layers if model.layer_mlp[layer] is MlpKind.MOE]


def _expert_format(model: ModelSpec, layer: int) -> QuantSpec | None:
    """The experts' format, asked by the names the book asks (Gemma-4's experts beside its MLP: `MoeSpec.expert_names`)."""
    return model.quant.format_of(model.moe.expert_names(layer)) if model.moe else None


def _shared_format(model: ModelSpec, layer: int) -> QuantSpec | None:
    prefix = f"model.layers.{layer}.mlp"
    return model.quant.format_of((prefix + ".shared_experts", prefix + ".shared_expert",
                                  prefix + ".shared_expert.down_proj"))  # fmt: skip


def fuses_shared_expert(model: ModelSpec, layout: ParallelLayout, gpu_name: str | None) -> bool:
    """Whether SGLang fuses the shared expert into the routed experts (the module's docstring)."""
    moe = model.moe
    if moe is None or not moe.shared_intermediate_size:
        return False
    if model.architecture == "Qwen3NextForCausalLM":
        return moe.shared_intermediate_size == moe.expert_intermediate_size
    if model.architecture not in DEEPSEEK_FUSING_CLASSES or layout.ep > 1:
        return False
    capability = compute_capability(gpu_name)
    return (
        moe.num_routed_experts == DEEPSEEK_FUSED_EXPERTS
        and moe.shared_intermediate_size == moe.expert_intermediate_size  # n_shared_experts == 1
        and (capability is None or capability >= (8, 0))
    )


def _fused_shared(model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None) -> WeightRow | None:
    """Under EP the fused shared expert is one expert like the routed ones (whole where EP equals TP), where the
    book splits it over TP."""
    moe = model.moe
    if moe is None or layout.ep <= 1 or layout.tp <= 1 or not fuses_shared_expert(model, layout, gpu_name):
        return None
    width, hidden, mats = moe.shared_intermediate_size, model.hidden_size, 3 if model.mlp_gated else 2
    moe_tp = max(1, layout.moe_shards // layout.ep)  # an expert's shards under EP (TP ÷ EP)
    more = 1 / moe_tp - 1 / layout.tp  # the engine's share of the shared expert less the book's
    nbytes = params = 0.0
    for layer in _moe_layers(model, layers):
        if _shared_format(model, layer) != _expert_format(model, layer):
            continue  # can_fuse_shared_expert: a shared expert kept at another precision is not fused
        fmt = _shared_format(model, layer)
        matrix = fmt.matrix_bytes(width, hidden, model.dtype_bytes) - fmt.tensor_scale_bytes if fmt else (
            width * hidden * model.dtype_bytes)
        nbytes += mats * matrix * more
        params += mats * width * hidden * more
    return _row("fused_shared_expert", round(nbytes), (
        f"SGLang fuses the shared expert into the routed ones: split as an expert under EP{layout.ep}, not over TP {layout.tp} "
        "(models/qwen2_moe.py num_fused_shared_experts)"), params=round(params))  # fmt: skip


def released_rows(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None = None,
) -> tuple[WeightRow, ...]:
    """What SGLang's classes build on a rank of the stage holding `layers` and the load frees: the NVFP4 experts'
    swizzled placeholders aliased to the scales (the module's docstring). In the meta-built count, not resident."""
    if not CHECKED_ERAS.at(version):
        return ()
    built, kept, _ = _nvfp4_scale_bytes(model, layout, layers, gpu_name, version, quantization)
    row = _row("aliased_blockscale_swizzled", built - kept, (
        "SGLang's NVFP4 experts: the swizzled block-scale placeholders create_weights builds, aliased to "
        "w13/w2_weight_scale after the load and freed (alias_or_bind_derived_param, modelopt_quant.py:3005-3010)"))  # fmt: skip
    return () if row is None else (row,)


def _nvfp4_scale_bytes(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None,
) -> tuple[int, int, int]:
    """(swizzled placeholders built, those kept after the load, the other experts' input scales) on one rank: Marlin
    (SM 8.0 – 9.x) keeps them all, the Blackwell paths those the alias cannot hold."""
    moe = model.moe
    if moe is None:
        return 0, 0, 0
    experts, local = moe.num_routed_experts, moe.num_routed_experts // layout.ep
    width, gemm1 = expert_shard(moe, layout), gemm1_blocks(model)
    fused = fuses_shared_expert(model, layout, gpu_name)
    runner = runner_pick(model, gpu_name, version, quantization).runner  # asked once for both
    swizzle, marlin = runner is not NvFp4MoeRunner.TRTLLM, runner is NvFp4MoeRunner.MARLIN
    built = kept = inputs = 0
    for layer, fmt in nvfp4_expert_layers(model, layers):
        if not fmt.group_size:
            continue
        held = local + (1 if fused and _shared_format(model, layer) == fmt else 0)
        if swizzle:
            built += held * swizzled_scales(gemm1, width, model.hidden_size, fmt.group_size) * fmt.scale_bytes
            kept += held * (swizzled_scales if marlin else unaligned_scales)(gemm1, width, model.hidden_size,
                                                                            fmt.group_size) * fmt.scale_bytes
        inputs += (experts - local) * (gemm1 + 1) * SCALE_FP32
    return built, kept, inputs


def _nvfp4_experts(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None,
) -> WeightRow | None:
    """What a rank holds after the load beyond the book: the swizzled block-scale copies kept (Marlin's all, else
    those the alias cannot hold) and the other experts' input scales."""
    _, kept, inputs = _nvfp4_scale_bytes(model, layout, layers, gpu_name, version, quantization)
    experts = model.moe.num_routed_experts if model.moe else 0
    return _row("expert_scales", kept + inputs, (
        f"SGLang's NVFP4 experts: the input scales of all {experts} experts"
        + (", and each local expert's block scales held again, swizzled (Marlin below Blackwell: all; else where the "
           "padded shape is not the scales')" if kept else "")
        + " (quantization/modelopt_quant.py; the swizzled copies not kept are aliased to the scales after the load)"))  # fmt: skip


TRITON_WNA16_GROUPS = (32, 128)  # compressed_tensors.py _is_wna16_triton_moe_supported: int4, symmetric, no actorder
INT32 = 4


def _wna16_act_order(model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None) -> WeightRow | None:
    """The act-order indices SGLang's Triton WNA16 MoE keeps on SM100 (the module's docstring)."""
    moe = model.moe
    if moe is None or not SM100.holds(gpu_name):
        return None
    local = moe.num_routed_experts // layout.ep
    width = expert_shard(moe, layout)
    nbytes = 0
    for layer in _moe_layers(model, layers):
        fmt = _expert_format(model, layer)
        if (fmt is None or not fmt.weight_only_int or fmt.weight_bits != 4 or fmt.zero_point_bits
                or fmt.group_size not in TRITON_WNA16_GROUPS):  # fmt: skip
            continue
        nbytes += 2 * local * (model.hidden_size + width) * INT32  # g_idx and sort indices of w13 and w2
    return _row("wna16_act_order", nbytes, (
        "SGLang's Triton WNA16 MoE on SM100 keeps each local expert's act-order indices, w13/w2 g_idx and sort "
        "indices in int32 (compressed_tensors_wNa16_moe.py; Marlin empties them after loading)"))  # fmt: skip


# DeepSeek-V4's FP8 wo_a GEMM (deepseek_v4.py wo_a_fp8_gemm_enabled): DeepGEMM with UE8M0 scales, on the GPUs of
# deep_gemm_wrapper/configurer.py DEEPGEMM_SCALE_UE8M0 (sm100 family, sm120/121); serving_hook.py turns it off
# elsewhere unless SGLANG_OPT_FP8_WO_A_GEMM is set explicitly
FP8_WO_A_GPUS = ((10, None), (12, 0), (12, 1))


def _fp8_wo_a(model: ModelSpec, gpu_name: str | None) -> bool:
    """Whether SGLang runs DeepSeek-V4's wo_a in FP8: an Fp8Config (not the hybrid FP8+NVFP4 one) of 128 × 128
    blocks, on a GPU of FP8_WO_A_GPUS."""
    quant, capability = model.quant, compute_capability(gpu_name)
    hybrid = quant.routed_experts is not None and quant.routed_experts.method == "nvfp4"
    if quant.scheme != "fp8" or quant.block != (128, 128) or hybrid or capability is None:
        return False
    return any(capability[0] == major and minor in (None, capability[1]) for major, minor in FP8_WO_A_GPUS)


def _dsv4_wo_a(model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None) -> WeightRow | None:
    """DeepSeek-V4's wo_a, which the book counts as the checkpoint stores it, built bf16 (`params_dtype` bf16, no
    quant config) unless the FP8 wo_a GEMM runs: an Fp8Config of 128 × 128 blocks on an FP8_WO_A_GPUS GPU (a
    hybrid FP8+NVFP4 config is no Fp8Config: bf16 everywhere)."""
    c = model.compressed
    if c is None or _fp8_wo_a(model, gpu_name):
        return None
    rows, cols = c.o_groups * c.o_lora_rank, model.num_attention_heads * model.head_dim // c.o_groups
    nbytes = 0.0
    for layer in layers:
        fmt = model.quant.format_of((f"model.layers.{layer}.self_attn.wo_a",))
        if fmt is not None:
            nbytes += (rows * cols * model.dtype_bytes - fmt.matrix_bytes(rows, cols, model.dtype_bytes)) / layout.attn_tp
    return _row("wo_a_bf16", round(nbytes), "SGLang builds DeepSeek-V4's wo_a bf16 off its FP8 wo_a GEMM (sm100, "
                "sm120): the checkpoint's FP8 dequantized at load (models/deepseek_v4.py)")
