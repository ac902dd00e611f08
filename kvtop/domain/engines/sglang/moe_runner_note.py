"""The NVFP4 MoE runner kvtop assumes on SM 10.x where SGLang's per-class default is not read: named, not modelled.

At `--moe-runner-backend auto` SGLang picks `flashinfer_trtllm` per model class on Blackwell SM 10.x
(`ServerArgs._handle_model_specific_adjustments`). kvtop reads those picks in `nvfp4_runner.SM10_DEFAULT_ERAS`
(0.5.3 – 0.5.23 whole, and DeepSeek-V4's routed runner from 0.5.23). Where the pick is not read (a release before
0.5.3, or a block whose pick turns on a config.json quant_method kvtop did not read (a block nested in text_config)
where the launch gives no `--quantization`, a `--quantization` choice it does not read, the FlashInfer version, the checkpoint's shard headers or a
MIXED_PRECISION checkpoint's per-layer formats) it assumes CUTLASS
and counts the swizzled block-scale copies that runner keeps (`kept_scale_bytes`, `weights_built._nvfp4_scale_bytes`);
where SGLang picks `flashinfer_trtllm` instead the copies held differ (leaked placeholders 0.5.3 – 0.5.11, none kept
from 0.5.12). The charge is left as it is; this note says so, with the reason (`RunnerPick.why`).
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.nvfp4_experts import has_nvfp4_experts
from kvtop.domain.engines.sglang.nvfp4_runner import runner_pick
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpus import SM100, compute_capability
from kvtop.domain.model import ModelSpec


def runner_default_not_modelled(
    model: ModelSpec, gpu_name: str | None, version: ResolvedVersion, quantization: str | None = None
) -> str | None:
    """The note for a ModelOpt NVFP4 MoE on SM 10.x whose class default kvtop does not read (at the launch's
    `--quantization`); None elsewhere."""
    if not SM100.holds(gpu_name) or model.compressed is not None:
        return None  # below or beyond SM 10.x the runner is read (Marlin, CUTLASS); DeepSeek-V4 runs its own
    pick = runner_pick(model, gpu_name, version, quantization)
    if pick.read or not has_nvfp4_experts(model):
        return None
    capability = compute_capability(gpu_name) or (10, 0)  # SM100 holds only GPUs whose capability is known
    return (f"SGLang {version.label}'s `auto` MoE runner for {model.architecture}'s ModelOpt NVFP4 experts on "
            f"{gpu_name} (SM {capability[0]}.{capability[1]}): kvtop assumes CUTLASS and counts the swizzled "
            f"block-scale copies that runner keeps, because {pick.why}; where SGLang picks flashinfer_trtllm the "
            "copies held differ")  # fmt: skip
