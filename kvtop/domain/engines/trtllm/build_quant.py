"""How a TensorRT-LLM checkpoint or engine was quantized when it was built, as its weights book counts it.

A TensorRT engine holds the weights its build quantized, not the Hugging Face checkpoint's: `quantize.py
--qformat fp8` (TensorRT-LLM 0.8 – 0.2x, `examples/quantization/quantize.py`) writes a checkpoint whose
`config.json` says `quantization.quant_algo: FP8`, and `trtllm-build` keeps it in the engine's
`config.json` (`pretrained_config.quantization`). kvtop reads either spelling (`--qformat fp8`,
`--quantization.quant_algo FP8`) as the launch's cast of a 16-bit checkpoint, so the book counts the
engine's bytes (`served_model`). Formats (tensorrt_llm/quantization/mode.py `QuantAlgo`, and the
checkpoint layout of `tensorrt_llm/models/convert_utils.py` / the ModelOpt export):

- FP8: FP8 weights, one fp32 `weights_scaling_factor` per matrix;
- W8A8_SQ_* (SmoothQuant, `int8_sq`): int8 weights, an fp32 `per_channel_scale` per output row;
- W8A16 / W4A16 (`int8_wo` / `int4_wo`): int8 / int4 weights, a 16-bit scale per output row;
- W4A16_AWQ / W4A8_AWQ (`int4_awq` / `w4a8_awq`): int4 weights, a 16-bit scale per 128 inputs;
- NVFP4 (`nvfp4`): FP4 weights, an FP8 scale per 16.

The embedding and the LM head stay at the checkpoint's width (quantize.py excludes `lm_head`). GPTQ and
QServe engines are not read: their flag leaves the checkpoint's bytes and says so.
"""

from __future__ import annotations

from kvtop.domain.quant import QuantSpec

SOURCE = "the engine's build (quantize.py --qformat / config.json quantization.quant_algo)"

_FP8 = QuantSpec(method="fp8", weight_bits=8, scale_bytes=4, per_tensor=True, scheme="fp8", source=SOURCE)
_INT8_SQ = QuantSpec(method="int8", weight_bits=8, scale_bytes=4, scheme="smoothquant", source=SOURCE)
_INT8_WO = QuantSpec(method="int8", weight_bits=8, scale_bytes=2, scheme="weight_only", source=SOURCE)
_INT4_WO = QuantSpec(method="int4", weight_bits=4, scale_bytes=2, scheme="weight_only", source=SOURCE)
_INT4_AWQ = QuantSpec(method="int4", weight_bits=4, group_size=128, scale_bytes=2, scheme="awq", source=SOURCE)
_NVFP4 = QuantSpec(method="nvfp4", weight_bits=4, group_size=16, scale_bytes=1, scheme="modelopt", source=SOURCE)

# `--qformat` (quantize.py) and `quant_algo` (config.json), lower case → the engine's linear weights
BUILD_QUANT: tuple[tuple[str, QuantSpec], ...] = (
    ("fp8", _FP8),
    ("int8_sq", _INT8_SQ),
    ("w8a8_sq_per_channel", _INT8_SQ),
    ("w8a8_sq_per_tensor_plugin", _INT8_SQ),
    ("w8a8_sq_per_channel_per_token_plugin", _INT8_SQ),
    ("w8a8_sq_per_channel_per_tensor_plugin", _INT8_SQ),
    ("w8a8_sq_per_tensor_per_token_plugin", _INT8_SQ),
    ("int8_wo", _INT8_WO),
    ("w8a16", _INT8_WO),
    ("int4_wo", _INT4_WO),
    ("w4a16", _INT4_WO),
    ("int4_awq", _INT4_AWQ),
    ("w4a16_awq", _INT4_AWQ),
    ("w4a8_awq", _INT4_AWQ),
    ("nvfp4", _NVFP4),
)
