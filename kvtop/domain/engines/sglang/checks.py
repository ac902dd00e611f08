"""Launches SGLang refuses before it sizes any KV, which kvtop refuses the same way (docs/engines/sglang.md §4.5).

A weight format the GPU cannot run (the quantization config's `get_min_capability`, checked when the
model loads), and block-FP8 MoE experts whose tensor-parallel shard breaks the 128-wide scale blocks
(the FP8 MoE method's `create_weights`; from v0.5.6 also `ModelRunner.check_quantized_moe_compatibility`).
Each is one line naming the flag or GPU and SGLang's reason.
"""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_capability
from kvtop.domain.quant import QuantSpec

# SGLang's name of a ModelOpt FP8 checkpoint's method: `modelopt` (ModelOptFp8Config) until v0.5.4 renamed it.
MODELOPT_FP8_NAME_ERAS: Eras[str] = Eras((
    Era("", "modelopt", "layers/quantization/modelopt_quant.py ModelOptFp8Config.get_name"),
    Era("0.5.4", "modelopt_fp8", "ModelOptFp8Config.get_name (read in 0.5.4 … 0.5.23)"),
))
# ModelOptFp4Config.get_min_capability: SM100 (read at v0.4.6 … v0.5.12.post1), then SM80 (v0.5.13 … v0.5.23).
MODELOPT_FP4_MIN_CAPABILITY_ERAS: Eras[int] = Eras((
    Era("", 100, "modelopt_quant.py ModelOptFp4Config.get_min_capability: 100"),
    Era("0.5.13", 80, "ModelOptFp4Config.get_min_capability: 80"),
))
# (kvtop's scheme, method) -> (SGLang's method name, minimum capability), the same in every release read
# (v0.4.5 … v0.5.23; MXFP4 from v0.5.0rc0): Fp8Config 80, Mxfp4Config 80. ModelOpt FP8 is 89 throughout.
# AWQ/GPTQ are left out: SGLang swaps them for Marlin kernels by GPU, which kvtop does not follow.
_FIXED_MINIMUM = {("fp8", "fp8"): ("fp8", 80), ("mxfp4", "mxfp4"): ("mxfp4", 80)}


def weight_format_minimum(quant: QuantSpec, version: ResolvedVersion) -> tuple[str, int] | None:
    """(SGLang's quantization method, its minimum compute capability) for this checkpoint, where known."""
    if quant.scheme == "modelopt" and quant.method == "fp8":
        return era_for(MODELOPT_FP8_NAME_ERAS, version).value, 89
    if quant.scheme == "modelopt" and quant.method == "nvfp4":
        return "modelopt_fp4", era_for(MODELOPT_FP4_MIN_CAPABILITY_ERAS, version).value
    return _FIXED_MINIMUM.get((quant.scheme, quant.method))


def check_launch(inputs: EngineInputs) -> None:
    """Raise InputError where SGLang refuses this model on this GPU or this TP/EP split, or where kvtop does not
    follow how its class shards (`TORCH_NATIVE_TP`)."""
    _check_weight_format(inputs)
    _check_block_fp8_moe(inputs)
    _check_torch_native_tp(inputs)


# Classes that build every attention and MLP Linear whole on each rank (plain torch.nn.Linear) and shard them only
# while loading: their weight loaders narrow qkv_proj and gate_up_proj to the rank's part, then
# ModelRunner.apply_torch_tp turns o_proj and down_proj into DTensor shards (models/torch_native_llama.py,
# model_runner.py `supports_torch_tp`; read in 0.5.6.post2 and 0.5.23). The engine's meta build of the class
# defaults at TP 2 holds the whole model on each rank (TorchNativeLlamaForCausalLM 13,214,687,232 B against a
# 6,738,681,856 B shard); what a rank keeps after loading rests on the caching allocator: not modelled.
TORCH_NATIVE_TP = frozenset({"TorchNativeLlamaForCausalLM", "TorchNativePhi3ForCausalLM"})


def _check_torch_native_tp(inputs: EngineInputs) -> None:
    model, tp = inputs.model, inputs.layout.tp
    if tp > 1 and model.architecture in TORCH_NATIVE_TP:
        raise UnsupportedModelError(
            f"SGLang's {model.architecture} builds every attention and MLP Linear whole on each rank and shards "
            f"them only while loading (torch_native_llama.py weight loaders, apply_torch_tp): its weights per rank "
            f"at --tp {tp} are not modelled (the whole model while it builds); plan it at --tp 1",
            field="--tp",
        )


def _check_weight_format(inputs: EngineInputs) -> None:
    capability = gpu_capability(inputs.gpu_name)
    minimum = weight_format_minimum(inputs.model.quant, inputs.version)
    if capability is None or minimum is None or capability >= minimum[1]:
        return
    name, needs = minimum
    raise InputError(
        f"SGLang {inputs.version.label} cannot run {name} weights on {inputs.gpu_name} (compute capability "
        f"{capability / 10:.1f}): the format needs {needs / 10:.1f} or newer (its get_min_capability, "
        "checked when the model loads)",
        field="--gpu",
    )


def _check_block_fp8_moe(inputs: EngineInputs) -> None:
    quant, moe, s = inputs.model.quant, inputs.model.moe, inputs.settings
    if quant.method != "fp8" or quant.block is None or moe is None or s.ep < 1 or s.tp % s.ep:
        return
    moe_tp = s.tp // s.ep
    size, block_n = moe.expert_intermediate_size, quant.block[0]
    if size % moe_tp == 0 and (size // moe_tp) % block_n == 0:
        return
    raise InputError(
        f"SGLang refuses block-FP8 MoE weights whose expert shard breaks the {block_n}-wide scale blocks: "
        f"moe_intermediate_size {size} ÷ (tp {s.tp} ÷ ep {s.ep}) = {size / moe_tp:g}, not a multiple of "
        f"{block_n}; pick --tp/--ep so it is",
        field="--tp",
    )
