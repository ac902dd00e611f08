"""The MoE runner SGLang's `auto` picks for ModelOpt NVFP4 experts, by release, model class and GPU: one table.

kvtop reads no `--moe-runner-backend` (flags_unmodelled_late.py: typed, it is refused; on a `--cmd` line named as
ignored), so every NVFP4 MoE rule (blockscale_leak.py, nvfp4_pad.py, weights_built.py) follows SGLang's own pick:

- SM 8.0 – 9.x: the NVFP4 MoE raises below Blackwell until 0.5.12; from 0.5.13 `create_moe_runner` picks Marlin at
  `auto` (MARLIN_MOE_ERAS).
- SM 10.x: `ServerArgs._handle_model_specific_adjustments` sets `flashinfer_trtllm` per model class (SM10_DEFAULT_ERAS:
  the classes read, each with the runner it gets); a class not in the table is assumed CUTLASS (`read` False).
- SM 11.x / 12.x (Thor, RTX 50, RTX PRO 6000, GB10): CUTLASS for every class; the server's flashinfer_trtllm defaults
  test `is_sm100_supported`, capability 10.x only (utils/common.py:258-262 at 0.5.9; 0.5.23
  arg_groups/model_overrides/*.py `get_platform().is_sm100`, the same majors [10]: utils/common.py:309-313).
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.gpus import compute_capability
from kvtop.domain.model import ModelSpec


class NvFp4MoeRunner(str, Enum):
    """SGLang's NVFP4 MoE runner paths through `ModelOptNvFp4FusedMoEMethod` (modelopt_quant.py)."""

    TRTLLM = "flashinfer_trtllm"  # shuffles the weights for FlashInfer's TRT-LLM kernels
    CUTLASS = "cutlass"  # the branch neither flashinfer_trtllm nor Marlin takes: swizzles the block scales
    MARLIN = "marlin"  # below Blackwell, from 0.5.13


class RunnerPick(BaseModel):
    """The runner SGLang's `auto` takes, and whether kvtop read it (False: assumed CUTLASS)."""

    model_config = ConfigDict(frozen=True)

    runner: NvFp4MoeRunner
    read: bool


_T, _C = NvFp4MoeRunner.TRTLLM, NvFp4MoeRunner.CUTLASS
# arg_groups/overrides.py _DEEPSEEK_FAMILY_ARCHS at 0.5.23 (those kvtop plans)
DEEPSEEK_FAMILY = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"})
SM10_DEFAULT_ERAS: Eras[MappingProxyType[str, NvFp4MoeRunner]] = Eras((
    Era("", MappingProxyType({"DeepseekV3ForCausalLM": _C}),
        "0.5.3's server_args.py sets no MoE runner for DeepSeek (0.5.4 – 0.5.6 not read)"),
    Era("0.5.6.post2", MappingProxyType({"DeepseekV3ForCausalLM": _T}),
        "server_args.py: flashinfer_trtllm for DeepseekV3ForCausalLM on sm100 with modelopt_fp4 (0.5.9:1302-1310)"),
    Era("0.5.23", MappingProxyType(dict.fromkeys(sorted(DEEPSEEK_FAMILY), _T)),
        "arg_groups/overrides.py _DEEPSEEK_FAMILY_ARCHS, _deepseek_moe_quant_resolution"),
))  # fmt: skip
MARLIN_MOE_ERAS: Eras[bool] = Eras((
    Era("", False, "the NVFP4 MoE raises below Blackwell (modelopt_quant.py:1525-1528 at 0.5.12; the same check read "
                   "in 0.5.9, 0.5.10, 0.5.11)"),
    Era("0.5.13", True, "create_moe_runner picks MARLIN at `auto` on SM 8.0 – 9.x (modelopt_quant.py:2183-2188 at "
                        "0.5.13, :3117-3120 at 0.5.23); process_weights_after_loading returns after "
                        "prepare_moe_nvfp4_layer_for_marlin (:1907-1914; :2738-2764 at 0.5.23), before the alias"),
))  # fmt: skip
CUTLASS_ONLY_MAJORS = (11, 12)  # Blackwell beyond SM 10.x: no flashinfer_trtllm default for any class


def runner_pick(model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> RunnerPick:
    """SGLang's `auto` NVFP4 MoE runner for this model class on this GPU at this release (the module's docstring)."""
    capability = compute_capability(gpu_name)
    if capability is None:
        return RunnerPick(runner=_C, read=False)
    if (8, 0) <= capability < (10, 0) and MARLIN_MOE_ERAS.at(version):
        return RunnerPick(runner=NvFp4MoeRunner.MARLIN, read=True)
    if capability[0] == 10:
        runner = SM10_DEFAULT_ERAS.at(version).get(model.architecture)
        return RunnerPick(runner=runner or _C, read=runner is not None)
    return RunnerPick(runner=_C, read=capability[0] in CUTLASS_ONLY_MAJORS)


def sm10_classes_read(version: ResolvedVersion) -> tuple[str, ...]:
    """The classes whose SM 10.x default kvtop reads at this release, sorted."""
    return tuple(sorted(SM10_DEFAULT_ERAS.at(version)))
