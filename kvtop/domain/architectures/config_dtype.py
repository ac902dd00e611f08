"""The dtype an engine loads a checkpoint's weights in, from the config's `torch_dtype` / `dtype`.

Under `--dtype auto` (every engine's default) a float32 checkpoint is served as 16-bit: vLLM
`config/model.py _resolve_auto_dtype` ("Downcast for float32 models": the platform's preferred dtype,
bfloat16 on CUDA, from v0.9.1; float16 before) and SGLang `configs/model_config.py _get_and_verify_dtype` (float16, bfloat16 for Gemma).
OLMo-2's real configs say float32: sized in fp32 they would have twice the weights and KV the engines hold.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.config_default import ConfigDefault, DefaultKind
from kvtop.domain.config_schema import OuterConfig, TextConfig
from kvtop.domain.errors import InputError

FLOAT32_BYTES = 4  # a float32 element: the logits, sampler and dequantised copies the engines hold in it

DTYPE_BYTES = {
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "float32": FLOAT32_BYTES,
    "fp32": FLOAT32_BYTES,
    "float": FLOAT32_BYTES,
    "fp8": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}
SERVED_16_BIT = 2  # what --dtype auto loads a float32 checkpoint as


UNSTATED = ("torch_dtype", "bfloat16")  # (field, dtype) read where the config states no dtype (`unstated_dtype`)


def _first_stated(outer: OuterConfig, text: TextConfig, prefix: str) -> tuple[str, str] | None:
    """(field, dtype) the config states first; None where it states none."""
    stated = (
        ("torch_dtype", outer.torch_dtype),
        ("dtype", outer.dtype),
        (prefix + "torch_dtype", text.torch_dtype),
        (prefix + "dtype", text.dtype),
    )
    return next(((k, v) for k, v in stated if v is not None), None)


def _stated_dtype(outer: OuterConfig, text: TextConfig, prefix: str) -> tuple[str, str]:
    """(field, dtype) the config states first, bfloat16 when it states none."""
    return _first_stated(outer, text, prefix) or UNSTATED


def checkpoint_half_dtype(outer: OuterConfig, text: TextConfig, prefix: str) -> Literal["bf16", "fp16"]:
    """The 16-bit dtype `--dtype auto` serves the checkpoint in: float16 where the config says so (vLLM 0.33.0
    config/model.py:2423-2465 _resolve_auto_dtype keeps a config dtype the platform supports; SGLang 0.5.23
    configs/model_config.py:2303-2321 keeps any but float32), else bfloat16 (float32 downcast, as vLLM does on
    CUDA; SGLang picks float16 there: the same bytes, not told apart)."""
    return "fp16" if _stated_dtype(outer, text, prefix)[1] in HALF_NAMES else "bf16"


HALF_NAMES = ("float16", "fp16", "half")
#: Why a config that states no dtype is sized at 2 B per parameter: vLLM's `_get_and_verify_dtype` reads a missing
#: torch_dtype as float32 ("config.torch_dtype can be None" → torch.float32), and `--dtype auto` serves float32 as
#: 16-bit: float16 to v0.9.0 ("following the common practice"), the platform's first supported dtype (bfloat16 on
#: CUDA) from v0.9.1 (vllm-project/vllm#18751, reviewed 2025-05-30, after v0.9.0: the release inferred from the
#: PR's date, not read in a 0.9.x wheel; read at v0.10.1 config/__init__.py:2751 and 0.33.0 config/model.py
#: `_resolve_auto_dtype`); SGLang's copy of that function (configs/model_config.py) downcasts float32
#: to float16.
#: Either 16-bit kind holds 2 B per parameter: the bytes kvtop plans, which kind the release picks assumed.
UNSTATED_DTYPE_WHY = (
    "vLLM and SGLang read a missing dtype as float32 and --dtype auto serves that as 16-bit "
    "(vLLM bfloat16 on CUDA from v0.9.1, float16 before; SGLang float16): 2 B per parameter"
)


def unstated_dtype(outer: OuterConfig, text: TextConfig, prefix: str) -> ConfigDefault | None:
    """The assumption a config that states no dtype is planned under (None where it states one)."""
    if _first_stated(outer, text, prefix) is not None:
        return None
    field, dtype = UNSTATED
    return ConfigDefault(field=field, value=dtype, what=UNSTATED_DTYPE_WHY, kind=DefaultKind.ENGINE_ASSUMED)


def checkpoint_dtype_bytes(outer: OuterConfig, text: TextConfig, prefix: str, source: str) -> int:
    """Bytes per element the engine loads the weights in (bfloat16 when the config does not say)."""
    field, dtype = _stated_dtype(outer, text, prefix)
    if dtype not in DTYPE_BYTES:
        known = ", ".join(sorted(DTYPE_BYTES))
        raise InputError(f"unknown dtype {dtype!r} (known: {known})", field=field, source=source)
    return min(DTYPE_BYTES[dtype], SERVED_16_BIT)
