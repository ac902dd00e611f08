"""What vLLM's Marlin path holds of a block-FP8 checkpoint on a GPU without FP8 compute (SM 8.0–8.8; 7.5 too from
v0.15.1, `FP8_FLOOR_ERAS`).

Below compute capability 8.9 vLLM serves an FP8 checkpoint weight-only through Marlin (W8A16): `Fp8LinearMethod`
and the FP8 MoE method pick Marlin there (v0.9.0 quantization/fp8.py:179-183, 443-447; v0.13.0 fp8.py:392-400 and
the MoE backend `Fp8MoeBackend.MARLIN`, :160-170; v0.22.0 fused_moe/oracle/fp8.py: TritonExperts takes FP8 only where
`supports_fp8()`, experts/triton_moe.py:93, so Marlin is next). `prepare_fp8_layer_for_marlin` and
`prepare_fp8_moe_layer_for_marlin` (quantization/utils/marlin_utils_fp8.py, v0.22.0 :92-199, 201-320) repack the
weights in place but turn a block's scales into Marlin's group scales: the checkpoint's float32
[⌈N ÷ 128⌉, ⌈K ÷ 128⌉] `weight_scale_inv` becomes [K ÷ 128, N] in the model's dtype (`.to(layer.orig_dtype)`,
`repeat_interleave(block_n)` along N: "block-wise quantization -> group-wise quantization", v0.9.0 :144-153 and
:252-261, v0.22.0 :175, 296, v0.33.0 :180, 310), which `replace_parameter` registers in place of the checkpoint's.
A 128 × 128-block matrix so holds K × N ÷ 64 B of scales (bf16) where the checkpoint's were K × N ÷ 4,096 B: about
1.5 % of its FP8 bytes more. Before v0.9.0 Marlin took no block FP8 (v0.8.5.post1 fp8.py:182-185: "Marlin doesn't
support block-wise fp8"): the checkpoint's scales stay.

Compressed-tensors' block FP8 takes the same path from v0.16.0: below SM 8.9 `CompressedTensorsConfig` picks
`CompressedTensorsW8A16Fp8` for FP8 weights with FP8 activations (v0.21.0 compressed_tensors.py:663-680: W8A8 needs
capability 89), whose block strategy hands the checkpoint's float32 [⌈N ÷ 128⌉, ⌈K ÷ 128⌉] scale as
`weight_scale_inv` to `MarlinFP8ScaledMMLinearKernel` (v0.21.0 compressed_tensors_w8a16_fp8.py:120-141,
kernels/linear/scaled_mm/marlin.py:70-101; v0.16.0 compressed_tensors_w8a16_fp8.py:113-133 calls
`prepare_fp8_layer_for_marlin` itself; v0.34.0 :120 and marlin.py:64-76): the same group scales. Before v0.16.0 the
scheme took per-tensor and per-channel scales only (v0.15.0 compressed_tensors_w8a16_fp8.py:108: 'Unsupported weight
strategy'). RedHatAI/gemma-4-31B-it-FP8-block on 2 × RTX 3090 at v0.21.0: 0.21 GiB a TP 2 rank.

Counted as the book of the checkpoint read as Marlin holds it (group scales of the block's input width, in the model's
dtype) less the book as stored, over every layer and divided by the pipeline stages: block FP8 in one format for every
module (Fp8Config's `quant_method: "fp8"` with a `weight_block_size`, or compressed-tensors' block strategy from
v0.16.0); per-tensor and per-channel FP8 on Marlin (their scales widened to one a column: N × 2 B a matrix) and
ModelOpt's FP8 are not counted. The arithmetic is shared with SGLang's rule (kvtop.domain.marlin_fp8).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.gpus import compute_capability
from kvtop.domain.marlin_fp8 import block_fp8_checkpoint, block_fp8_compressed_tensors, group_scales_extra

MARLIN_BLOCK_FP8_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.8.5.post1 quantization/fp8.py:182-185: 'Marlin doesn't support block-wise fp8' (the block "
                   "scales stay as the checkpoint's)"),
    Era("0.9.0", True, "v0.9.0 quantization/utils/marlin_utils_fp8.py:144-153, 252-261: block scales repeated to "
                       "Marlin's group scales in the model's dtype (v0.22.0 :175, 296; v0.33.0 :180, 310)"),
))  # fmt: skip
# compressed-tensors' block FP8 on Marlin (CompressedTensorsW8A16Fp8's block strategy)
CT_BLOCK_MARLIN_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.15.0 compressed_tensors/schemes/compressed_tensors_w8a16_fp8.py:108: 'Unsupported weight "
                   "strategy' (tensor and channel only)"),
    Era("0.16.0", True, "v0.16.0 compressed_tensors_w8a16_fp8.py:113-133 (v0.21.0 :120-141 and "
                        "kernels/linear/scaled_mm/marlin.py:70-101): block scales to Marlin's group scales"),
))  # fmt: skip
# FP8 compute from SM 8.9 (`has_device_capability(89)`)
NATIVE_FP8 = (8, 9)
# the least capability vLLM serves an FP8 checkpoint on (`Fp8Config.get_min_capability`); v0.14.x and v0.15.0 not read
FP8_FLOOR_ERAS: Eras[tuple[int, int]] = Eras((
    Era("", (8, 0), "v0.9.0 quantization/fp8.py:98 (v0.13.0 :256): get_min_capability 80"),
    Era("0.15.1", (7, 5), "v0.15.1 quantization/fp8.py:156 (v0.22.0 :148, v0.33.0 :147): get_min_capability 75, "
                          "FP8 Marlin from SM 7.5 (kernels/linear/scaled_mm/marlin.py, v0.22.0 :36-56)"),
))  # fmt: skip


def marlin_block_scales(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) Marlin's group scales of a block-FP8 checkpoint hold beside the book's block scales on the largest
    rank; None where vLLM keeps the checkpoint's scales (FP8 compute, an older release, another format)."""
    model = inputs.model
    capability = compute_capability(inputs.gpu_name)
    if model is None or capability is None or not FP8_FLOOR_ERAS.at(inputs.version) <= capability < NATIVE_FP8:
        return None
    quant = model.quant
    fp8_config = block_fp8_checkpoint(model) and MARLIN_BLOCK_FP8_ERAS.at(inputs.version)
    if not fp8_config and not (block_fp8_compressed_tensors(model) and CT_BLOCK_MARLIN_ERAS.at(inputs.version)):
        return None
    assert quant.block is not None
    extra = group_scales_extra(model, inputs.layout, TOWER_SPLIT.for_launch(inputs.settings.flags, inputs.version.text))
    if extra <= 0:
        return None
    return extra, (
        f"vLLM's Marlin FP8 on SM {capability[0]}.{capability[1]} (no FP8 compute): the {quant.block[0]} x "
        f"{quant.block[1]} block scales held as group scales in the model's dtype (marlin_utils_fp8.py)"
    )
