"""The NVFP4 MoE runner kvtop assumes on SM 10.x where SGLang's per-class default is not read: named, not modelled.

At `--moe-runner-backend auto` SGLang picks `flashinfer_trtllm` per model class on Blackwell SM 10.x
(`ServerArgs._handle_model_specific_adjustments`, srt/server_args.py:1302-1310 for DeepSeek-V3 and :1558-1578 for
Qwen3-MoE at 0.5.9; arg_groups/overrides.py `_DEEPSEEK_FAMILY_ARCHS` and the per-model overrides at 0.5.23). kvtop
reads that pick for the classes of `nvfp4_runner.SM10_DEFAULT_ERAS` (and DeepSeek-V4's routed runner from 0.5.23). For every other class with ModelOpt NVFP4
experts it assumes CUTLASS and counts the swizzled block-scale copies that runner keeps (`kept_scale_bytes`,
`weights_built._nvfp4_scale_bytes`); where the release's default for that class is `flashinfer_trtllm` (Qwen3-MoE at
0.5.9, Nemotron-H at 0.5.23) the copies held differ (leaked placeholders 0.5.3 – 0.5.11, none kept from 0.5.12).
The charge is left as it is; this note says so.
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.nvfp4_experts import has_nvfp4_experts
from kvtop.domain.engines.sglang.nvfp4_runner import runner_pick, sm10_classes_read
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpus import compute_capability
from kvtop.domain.model import ModelSpec


def runner_default_not_modelled(model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> str | None:
    """The note for a ModelOpt NVFP4 MoE on SM 10.x whose class has no runner default in kvtop; None elsewhere."""
    capability = compute_capability(gpu_name)
    if capability is None or capability[0] != 10 or model.compressed is not None:
        return None  # below or beyond SM 10.x the runner is read (Marlin, CUTLASS); DeepSeek-V4 runs its own
    if runner_pick(model, gpu_name, version).read or not has_nvfp4_experts(model):
        return None
    return (f"SGLang {version.label}'s `auto` MoE runner for {model.architecture}'s ModelOpt NVFP4 experts on "
            f"{gpu_name} (SM {capability[0]}.{capability[1]}): kvtop assumes CUTLASS and counts the swizzled "
            "block-scale copies that runner keeps, because it reads SGLang's per-class flashinfer_trtllm default "
            f"only for {', '.join(sm10_classes_read(version))}; where this release defaults the class to flashinfer_trtllm the "
            "copies held differ")  # fmt: skip
