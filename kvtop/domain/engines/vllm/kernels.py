"""Checkpoint weight formats vLLM refuses on a GPU generation (docs/engines/vllm.md §3.6).

Each quantization method names the least compute capability its kernels need (`get_min_capability`,
checked while the config is built), and block-FP8 MoE experts need a TP shard that is whole 128-wide
blocks. kvtop plans the KV cache; it refuses the launches vLLM would not start, with vLLM's reason.
"""

from __future__ import annotations

import math

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm.eras import BLOCK_FP8_SHARD_ERAS, MODELOPT_FP8_CAPABILITY_ERAS
from kvtop.domain.engines.vllm.moe_split import check_expert_split
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec

FP8_NATIVE = (8, 9)
# the least block v0.29.0+ refines a block-FP8 expert shard to (fused_moe/oracle/fp8.py refine_fp8_moe_block_shape:
# `if refine < 32: return None`, then Fp8MoEMethod.create_weights raises 'not divisible by … block_n')
REFINED_BLOCK_MIN = 32
# GPTQ checkpoints quantized in activation order (desc_act with groups): refused by
# gptq_utils.normalize_and_validate_gptq_desc_act ("no longer supported") from v0.30.0 (absent from v0.29.0's wheel;
# the act-order path before was not read: assumed to load them)
GPTQ_ACT_ORDER_REFUSED_ERAS: Eras[bool] = Eras((
    Era("", False, "gptq_marlin's act-order path (g_idx sorted); v0.13.0 not read, assumed"),
    Era("0.30.0", True, "first in v0.30.0: quantization/utils/gptq_utils.py:23-37 "
        "normalize_and_validate_gptq_desc_act refuses desc_act=True with groups (auto_gptq.py:118, moe_wna16.py)"),
))
# bitsandbytes checkpoints: vLLM 0.33.0 has no such quantization method (QuantizationMethods lacks it, no override
# claims quant_method "bitsandbytes"), so config/model.py _verify_quantization raises "Unknown quantization
# method"; earlier vLLMs had BitsAndBytesConfig, the last v0.27.x (quantization/__init__.py:28, :156)
BITSANDBYTES_REFUSED_ERAS: Eras[bool] = Eras((
    Era("", False, "quantization/bitsandbytes.py BitsAndBytesConfig (v0.27.1 quantization/__init__.py:28, :156)"),
    Era("0.28.0", True, "first in v0.28.0: QuantizationMethods has no bitsandbytes: _verify_quantization 'Unknown "
        "quantization method'"),
))
# A checkpoint's `quant_method: mxfp8` (MiniMax-M3-MXFP8): v0.13.0 has no such method (quantization/__init__.py,
# read: 'Unknown quantization method'); from v0.24.0 it maps to ModelOptMxFp8Config (get_min_capability 80)
MXFP8_REFUSED_ERAS: Eras[bool] = Eras((
    Era("", True, "v0.13.0 quantization/__init__.py has no 'mxfp8'; v0.19.0-v0.23.0 name it for online MXFP8 "
        "(v0.19.0 :157 Mxfp8Config, is_checkpoint_fp8_serialized=False), not a checkpoint loader: read as refused"),
    Era("0.24.0", False, "first in v0.24.0: quantization/__init__.py:166-169 'mxfp8': ModelOptMxFp8Config "
        "(MiniMax-style checkpoints)"),
))
# The least compute capability vLLM serves an MXFP4 checkpoint on: Mxfp4Config.get_min_capability 80, checked as the
# config is built (VllmConfig: 'The quantization method mxfp4 is not supported for the current GPU. Minimum
# capability: 80'), so Marlin's own floor (SM 7.5, marlin_moe.py) is never reached on a Turing or Volta card. Read in
# the PyPI wheels: v0.10.2 quantization/mxfp4.py:116-117 (config/__init__.py:3287-3291), v0.20.2 :58-59, v0.22.0
# :57-58 (config/vllm.py:590-599), v0.27.0 :62-63, v0.33.0 :71-72, v0.34.0 :72-73; v0.10.1.x and v0.11.0-v0.20.1 not
# read, taken alike.
MXFP4_MIN_CAPABILITY_ERAS: Eras[tuple[int, int]] = Eras((
    Era("", (8, 0), "Mxfp4Config.get_min_capability 80 (v0.10.2 quantization/mxfp4.py:116-117 … v0.34.0 :72-73)"),
))


def check_weights(
    model: ModelSpec,
    settings: LaunchSettings,
    layout: ParallelLayout,
    gpu_name: str | None,
    version: ResolvedVersion,
) -> None:
    """Raise where vLLM refuses this checkpoint's weight format on this GPU (an unknown GPU refuses nothing)."""
    if model.quant.act_order and era_for(GPTQ_ACT_ORDER_REFUSED_ERAS, version).value:
        raise InputError(
            f"vLLM {version.label} refuses GPTQ checkpoints quantized in activation order (desc_act with "
            "groups): 'GPTQ group activation ordering (desc_act=True) is no longer supported'",
            field="quantization_config.desc_act",
            source=model.source,
        )
    if model.quant.scheme == "bitsandbytes" and era_for(BITSANDBYTES_REFUSED_ERAS, version).value:
        raise InputError(
            f"vLLM {version.label} has no bitsandbytes quantization method ('Unknown quantization method: "
            "bitsandbytes'): serve this checkpoint with SGLang, or a GPTQ/AWQ/FP8 export of the model",
            field="quantization_config.quant_method",
            source=model.source,
        )
    if model.quant.scheme == "mxfp8" and era_for(MXFP8_REFUSED_ERAS, version).value:
        raise InputError(
            f"vLLM {version.label} has no mxfp8 quantization method ('Unknown quantization method: mxfp8')",
            field="quantization_config.quant_method",
            source=model.source,
        )
    check_expert_split(model, settings, layout, version)  # as the MoE layers are built, on every GPU
    cap = compute_capability(gpu_name)
    if cap is None or not model.quant.quantized:
        return
    where = f"{gpu_name} (sm{cap[0]}{cap[1]})"
    quant = model.quant
    if quant.method == "fp8" and quant.scheme in ("modelopt", "quark"):
        need = MODELOPT_FP8_CAPABILITY_ERAS.at(version) if quant.scheme == "modelopt" else FP8_NATIVE
        if cap < need:
            raise InputError(
                f"vLLM {version.label} refuses {quant.scheme} FP8 weights on {where}: the "
                f"quantization method needs compute capability {need[0]}.{need[1]}+ (get_min_capability)",
                field="--gpu",
                source=model.source,
            )
    if quant.method == "mxfp4" and cap < (mxfp4_min := MXFP4_MIN_CAPABILITY_ERAS.at(version)):
        raise InputError(
            f"vLLM {version.label} refuses MXFP4 weights on {where}: 'The quantization method mxfp4 is not supported "
            f"for the current GPU. Minimum capability: {mxfp4_min[0]}{mxfp4_min[1]}' (Mxfp4Config.get_min_capability)",
            field="--gpu",
            source=model.source,
        )
    _check_block_fp8_experts(model, settings, layout, cap, where, version)


def _check_block_fp8_experts(
    model: ModelSpec,
    settings: LaunchSettings,
    layout: ParallelLayout,
    cap: tuple[int, int],
    where: str,
    version: ResolvedVersion,
) -> None:
    """Block-FP8 experts split over TP (no expert parallelism) must keep whole blocks per rank; from v0.29.0 a
    shard a finer block (≥ 32) divides runs on sm89+ (Triton, the refined scales)."""
    block = model.quant.block
    if model.moe is None or block is None or settings.expert_parallel_asked:
        return
    shards = layout.expert_ranks  # vLLM flattens TP × DP for the experts without expert parallelism
    size = model.moe.expert_intermediate_size
    if size % shards == 0 and (size // shards) % block[0] == 0:
        return
    shard = f"{size} / {shards} = {size / shards:g}"
    # from v0.29.0 the finer block gcd(block_n, block_k, shard, hidden), where ≥ 32, is taken instead
    refined = math.gcd(block[0], block[1], size // shards, model.hidden_size)
    every_gpu = BLOCK_FP8_SHARD_ERAS.at(version) == "every_gpu"
    if every_gpu or refined < REFINED_BLOCK_MIN:
        finer = "" if every_gpu else f"; no finer block ≥ {REFINED_BLOCK_MIN} divides it (gcd {refined})"
        raise InputError(
            f"vLLM {version.label} refuses block-FP8 experts whose TP shard is not whole {block[0]}-wide blocks "
            f"(moe_intermediate_size {shard}: 'not divisible by weight quantization block_n'{finer}); "
            "use a TP that keeps whole blocks, or --enable-expert-parallel",
            field="--tp",
            source=model.source,
        )
    if cap < FP8_NATIVE:
        raise InputError(
            f"vLLM {version.label} has no FP8 MoE kernel on {where} for experts whose TP shard breaks the "
            f"{block[0]}-wide blocks (moe_intermediate_size {shard}: 'No FP8 MoE backend supports the "
            "deployment configuration'); use a TP that keeps whole blocks, or --enable-expert-parallel",
            field="--tp",
            source=model.source,
        )
