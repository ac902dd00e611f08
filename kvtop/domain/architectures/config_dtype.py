"""The dtype an engine loads a checkpoint's weights in, from the config's `torch_dtype` / `dtype`.

Under `--dtype auto` (every engine's default) a float32 checkpoint is served in 16 bit: vLLM
`config/model.py _resolve_auto_dtype` ("Downcast for float32 models": the platform's preferred dtype,
bfloat16 on CUDA) and SGLang `configs/model_config.py _get_and_verify_dtype` (float16, bfloat16 for Gemma).
OLMo-2's real configs say float32: sized in fp32 they would have twice the weights and KV the engines hold.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.config_schema import OuterConfig, TextConfig
from kvtop.domain.errors import InputError

DTYPE_BYTES = {
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "float32": 4,
    "fp32": 4,
    "float": 4,
    "fp8": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}
SERVED_16_BIT = 2  # what --dtype auto loads a float32 checkpoint as


def _stated_dtype(outer: OuterConfig, text: TextConfig, prefix: str) -> tuple[str, str]:
    """(field, dtype) the config states first, bfloat16 when it states none."""
    stated = (
        ("torch_dtype", outer.torch_dtype),
        ("dtype", outer.dtype),
        (prefix + "torch_dtype", text.torch_dtype),
        (prefix + "dtype", text.dtype),
    )
    return next(((k, v) for k, v in stated if v is not None), ("torch_dtype", "bfloat16"))


def checkpoint_half_dtype(outer: OuterConfig, text: TextConfig, prefix: str) -> Literal["bf16", "fp16"]:
    """The 16-bit dtype `--dtype auto` serves the checkpoint in: float16 where the config says so (vLLM 0.33.0
    config/model.py:2423-2465 _resolve_auto_dtype keeps a config dtype the platform supports; SGLang 0.5.23
    configs/model_config.py:2303-2321 keeps any but float32), else bfloat16 (float32 downcast, as vLLM does on
    CUDA; SGLang picks float16 there: the same bytes, not told apart)."""
    return "fp16" if _stated_dtype(outer, text, prefix)[1] in HALF_NAMES else "bf16"


HALF_NAMES = ("float16", "fp16", "half")


def checkpoint_dtype_bytes(outer: OuterConfig, text: TextConfig, prefix: str, source: str) -> int:
    """Bytes per element the engine loads the weights in (bfloat16 when the config does not say)."""
    field, dtype = _stated_dtype(outer, text, prefix)
    if dtype not in DTYPE_BYTES:
        known = ", ".join(sorted(DTYPE_BYTES))
        raise InputError(f"unknown dtype {dtype!r} (known: {known})", field=field, source=source)
    return min(DTYPE_BYTES[dtype], SERVED_16_BIT)
