"""The NVFP4 MoE runner kvtop assumes on SM 10.x where SGLang's per-class default is not read: named, not modelled.

At `--moe-runner-backend auto` SGLang picks `flashinfer_trtllm` per model class on Blackwell SM 10.x
(`ServerArgs._handle_model_specific_adjustments`, srt/server_args.py:1302-1310 for DeepSeek-V3 and :1558-1578 for
Qwen3-MoE at 0.5.9; arg_groups/overrides.py `_DEEPSEEK_FAMILY_ARCHS` and the per-model overrides at 0.5.23). kvtop
reads that pick for the DeepSeek classes only: `blockscale_leak.DEFAULT_TRTLLM_CLASSES` before 0.5.23,
`weights_built.DEEPSEEK_FAMILY` (and DeepSeek-V4's routed runner) from it. For every other class with ModelOpt NVFP4
experts it assumes CUTLASS and counts the swizzled block-scale copies that runner keeps (`kept_scale_bytes`,
`weights_built._nvfp4_scale_bytes`); where the release's default for that class is `flashinfer_trtllm` (Qwen3-MoE at
0.5.9, Nemotron-H at 0.5.23) the copies held differ (leaked placeholders 0.5.3 – 0.5.11, none kept from 0.5.12).
The charge is left as it is; this note says so.
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.blockscale_leak import DEFAULT_TRTLLM_CLASSES
from kvtop.domain.engines.sglang.weights_built import CHECKED_ERAS, DEEPSEEK_FAMILY
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpus import compute_capability
from kvtop.domain.model import MlpKind, ModelSpec


def has_modelopt_nvfp4_experts(model: ModelSpec) -> bool:
    """Whether any MoE layer's routed experts are ModelOpt NVFP4 (the checkpoint's quant config)."""
    moe = model.moe
    if moe is None:
        return False
    for layer, kind in enumerate(model.layer_mlp):
        fmt = model.quant.format_of(moe.expert_names(layer)) if kind is MlpKind.MOE else None
        if fmt is not None and fmt.method == "nvfp4" and fmt.scheme == "modelopt":
            return True
    return False


def runner_default_not_modelled(model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> str | None:
    """The note for a ModelOpt NVFP4 MoE on SM 10.x whose class has no runner default in kvtop; None elsewhere."""
    capability = compute_capability(gpu_name)
    if capability is None or capability[0] != 10 or model.compressed is not None:
        return None  # below or beyond SM 10.x the runner is read (Marlin, CUTLASS); DeepSeek-V4 runs its own
    known = DEEPSEEK_FAMILY if CHECKED_ERAS.at(version) else DEFAULT_TRTLLM_CLASSES
    if model.architecture in known or not has_modelopt_nvfp4_experts(model):
        return None
    return (f"SGLang {version.label}'s `auto` MoE runner for {model.architecture}'s ModelOpt NVFP4 experts on "
            f"{gpu_name} (SM {capability[0]}.{capability[1]}): kvtop assumes CUTLASS and counts the swizzled "
            "block-scale copies that runner keeps, because it reads SGLang's per-class flashinfer_trtllm default "
            f"only for {', '.join(sorted(known))}; where this release defaults the class to flashinfer_trtllm the "
            "copies held differ")  # fmt: skip
