"""What SGLang's weight-only FP8 Marlin (W8A16) holds of a block-FP8 checkpoint on a GPU without FP8 compute
(SM 8.0–8.8), beyond the checkpoint's bytes (the arithmetic is engine-neutral: kvtop.domain.marlin_fp8).

From 0.5.1 `Fp8LinearMethod` turns Marlin on by itself on SM 8.0–8.8 (`can_auto_enable_marlin_fp8`: `80 <= sm < 89`,
quantization/fp8_utils.py:809-813 at 0.5.1, :2159-2163 at 0.5.20, :2794-2798 at 0.5.23; `self.use_marlin = force_marlin
or auto_enable`, fp8.py:213-217 at 0.5.1, :497-501 at 0.5.20, :514-518 at 0.5.23) and keeps it for a block-quantized
checkpoint: `process_weights_after_loading` ends in `prepare_fp8_layer_for_marlin(layer, not self.block_quant)` (fp8.py
:437 at 0.5.1, :1035-1038 at 0.5.20, :1303 at 0.5.23). That function (quantization/marlin_utils_fp8.py at 0.5.20; the
same lines less one at 0.5.1–0.5.19) repacks the FP8 weight at its own size into int32 words (`gptq_marlin_repack`,
:133-140, the Parameter replaced), casts the block scales to the model's dtype (`weight_scale_inv.to(layer.orig_dtype)`,
:147) and deletes them (:148), repeats them along N to one a column of every group of the block's K width ("block-wise
quantization -> group-wise quantization", :171-180: [K ÷ 128, N]), permutes them for Marlin and folds in the FP8
exponent bias, a new Parameter `weight_scale` (:182-186). Per layer also a workspace of one int32 a SM (`marlin_make_
workspace`, :124; 432 B on an A100: 512 B a module, 128 KiB for Qwen3-32B), not counted. Before 0.5.1 SGLang turned
Marlin off for a block checkpoint (0.5.0rc2 fp8.py:218-221, "Marlin doesn't support block-wise fp8"; Marlin only with
SGLANG_FORCE_FP8_MARLIN), so the block scales stay.

The new scales are made after the load, one a module in the modules' order, so the caching allocator places them after
every parameter (`group_scale_tensors`: weights_held.py counts their rounding with the rest). Counted for Fp8Config's
block FP8 of a dense model: SGLang's FP8 MoE method does not take FP8 experts through Marlin (0.5.20 fp8.py: Marlin
only for FP4 experts, :1794), and a MoE model's dense modules (attention, shared experts) are not split out of the
book: not counted (a small under-count). SGLANG_FORCE_FP8_MARLIN on an FP8 GPU is not read from the launch.

Judged against SGLang 0.5.20's `mem usage=32.59 GB` (GiB) of Qwen3-32B-FP8 on an A100 (tests/data/calibration/
sglang.jsonl, wanhr-hicache-qwen3-32b-fp8-a100-fp8e5m2-v0520): 32.05 GiB planned (−1.65 %) → 32.56 (−0.09 %).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.gpus import compute_capability
from kvtop.domain.marlin_fp8 import block_fp8_checkpoint, group_scale_tensors, group_scales_extra

MARLIN_BLOCK_FP8_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.0rc2 quantization/fp8.py:218-221: 'Marlin doesn't support block-wise fp8' (Marlin only under "
                   "SGLANG_FORCE_FP8_MARLIN; the block scales stay)"),
    Era("0.5.1", True, "0.5.1 quantization/fp8.py:213-217, 437 and marlin_utils_fp8.py:128-129, 153 (0.5.20 fp8.py:"
                       "497-501, 1035-1038, marlin_utils_fp8.py:147-148, 171-185): Marlin on SM 8.0-8.8, the block "
                       "scales repeated to group scales in the model's dtype"),
))  # fmt: skip
MARLIN_CAPABILITIES = ((8, 0), (8, 9))  # can_auto_enable_marlin_fp8: 80 <= sm < 89


def _applies(inputs: CalibrationInputs) -> bool:
    model = inputs.model
    capability = compute_capability(inputs.gpu_name)
    if model is None or capability is None or not MARLIN_CAPABILITIES[0] <= capability < MARLIN_CAPABILITIES[1]:
        return False
    return block_fp8_checkpoint(model) and model.moe is None and MARLIN_BLOCK_FP8_ERAS.at(inputs.version)


def marlin_block_scales(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) Marlin's group scales beyond the checkpoint's block scales on the largest rank; None where SGLang
    keeps the checkpoint's scales (FP8 compute, a release before 0.5.1, another format, a MoE model: not counted)."""
    if not _applies(inputs):
        return None
    assert inputs.model is not None and inputs.model.quant.block is not None
    extra = group_scales_extra(inputs.model, inputs.layout)
    if extra <= 0:
        return None
    block = inputs.model.quant.block
    return extra, (
        f"SGLang's weight-only FP8 Marlin on SM 8.0-8.8: the {block[0]} x {block[1]} block scales held as group scales "
        "in the model's dtype (quantization/marlin_utils_fp8.py prepare_fp8_layer_for_marlin)"
    )


def marlin_scale_tensors(inputs: CalibrationInputs) -> list[int]:
    """The group-scale tensors Marlin makes after the load (for the allocator's rounding); [] where none."""
    if not _applies(inputs):
        return []
    assert inputs.model is not None
    return group_scale_tensors(inputs.model, inputs.layout)
