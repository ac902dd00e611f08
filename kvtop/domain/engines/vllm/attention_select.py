"""Which attention backend vLLM's selector runs a model without MLA on, by release (docs/engines/vllm.md §12): the rule
both FlashInfer's workspace (`attention_pick.py`, read from v0.29.0) and the speculative graphs' mode
(`spec_graph_mode.py`, from v0.20.0) read.

`CudaPlatform.get_valid_backends` runs the first backend of `_get_backend_priorities` whose `validate_configuration`
passes (vllm/platforms/cuda.py :399-427 at v0.30.0). Without MLA the order is FLASHINFER, FLASH_ATTN, TRITON_ATTN on
sm10x (causal attention) and FLASH_ATTN, FLASHINFER, TRITON_ATTN elsewhere (:154-179 at v0.30.0; the same non-MLA
branch in the v0.20.0, v0.24.0, v0.28.0, v0.29.0, v0.31.0, v0.32.0 and v0.34.0 wheels). FLASH_ATTN takes sm80+
(flash_attn.py:404-405 at v0.30.0) and a quantized KV only where FA3 runs on sm90 or FA4 on sm10x, never fp8_e5m2
(`flash_attn_supports_kv_cache_dtype`, fa_utils.py:282-308; v0.20.0's `flash_attn_supports_fp8`, fa_utils.py:187-193,
and v0.24.0's `supports_kv_cache_dtype`, flash_attn.py:183-193: FA3 on sm90 only). FLASHINFER takes sm80 to sm121
from v0.24.0 (flashinfer.py:426-434 at v0.24.0, :508-518 at v0.30.0: the floor raised from sm75 while
flashinfer#3620 is open; :704 at v0.34.0), sm75 to sm121 at v0.20.0-v0.23.x (flashinfer.py:405 at v0.20.0, :407 at
v0.23.0: `FLASHINFER_FLOORS`), head sizes 64, 128, 256 and 512, and every fp8 KV dtype (:414-423). So FLASHINFER runs
on sm10x, and elsewhere where FLASH_ATTN declines the KV or the GPU: an FP8 KV on sm80, sm86, sm89 and sm12x (FA2
there), fp8_e5m2 on sm90 too, and sm75 at v0.20.0-v0.23.x. Not modelled (None): MLA (its own selector,
`backends.py`), sinks, a multimodal prefix LM, head sizes FLASH_ATTN or FLASHINFER may decline, an unknown GPU, a KV
dtype other than the model's or fp8.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.backends import (
    ATTENTION_BACKEND_FLAG,
    FLASHINFER_HEAD_SIZES,
    MM_PREFIX_LM_MODELS,
)
from kvtop.domain.engines.vllm.kv_storage import kv_storage_for
from kvtop.domain.gpus import compute_capability
from kvtop.domain.kv import FP8_KV_FORMATS
from kvtop.domain.kv_format import resolve_kv_format
from kvtop.domain.model import ModelSpec

Backend = Literal["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"]
BACKENDS: tuple[Backend, ...] = ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN")
FLASHINFER_CAPABILITIES = ((8, 0), (12, 1))  # FlashInferBackend.supports_compute_capability, v0.24.0-v0.34.0
FLASH_ATTN_FLOOR = (8, 0)  # FlashAttentionBackend.supports_compute_capability (flash_attn.py:404-405 at v0.30.0)
# FlashInfer's lowest compute capability by release (FlashInferBackend.supports_compute_capability)
FLASHINFER_FLOORS: Eras[tuple[int, int]] = Eras((
    Era("", (7, 5), "flashinfer.py:405 at v0.20.0, :409 v0.21.0, :408 v0.22.0, :407 v0.23.0: sm75 to sm121"),
    Era("0.24.0", (8, 0), "flashinfer.py:426-434 at v0.24.0 (flashinfer#3620: sm75 broken, floor raised to sm80), "
                          ":442 v0.25.0, :461 v0.26.0, :462 v0.27.1, :532 v0.28.0, :508-518 v0.30.0"),
))  # fmt: skip


@dataclass(frozen=True)
class AttentionPick:
    """The backend the selector runs, and why (its rule and source)."""

    backend: Backend
    why: str


def fp8_kv(inputs: CalibrationInputs, model: ModelSpec) -> str | None:
    """The fp8 KV the launch stores, as its flag spells it ('fp8' for a checkpoint's FP8 KV read under `auto`), ''
    for the model's dtype, None for another (not modelled): the format is `kv_format.resolve_kv_format`'s over vLLM's KV
    storage (kv_storage.py), the one rule the KV book reads."""
    storage = kv_storage_for(model, inputs.settings, inputs.version)
    fmt = resolve_kv_format(inputs.settings.kv_cache_dtype, model, storage, gpu_name=inputs.gpu_name)
    if fmt in ("bf16", "fp16", "fp32"):
        return ""
    if fmt not in FP8_KV_FORMATS:
        return None
    requested = inputs.settings.kv_cache_dtype.strip().lower()
    return "fp8" if requested == "auto" else requested


def selected_backend(inputs: CalibrationInputs) -> AttentionPick | None:
    """The backend vLLM's selector runs this launch's attention on at its release (module docstring); None where
    not modelled."""
    model = inputs.model
    if model is None or model.mla is not None or model.attention_free:
        return None
    stated = str(inputs.settings.flags.get(ATTENTION_BACKEND_FLAG.lstrip("-")) or "auto").upper()
    if stated != "AUTO":
        named = next((backend for backend in BACKENDS if backend == stated), None)
        return AttentionPick(named, f"named by {ATTENTION_BACKEND_FLAG}") if named else None
    cap = compute_capability(inputs.gpu_name)
    kv = fp8_kv(inputs, model)
    mm_prefix = model.multimodal and model.model_type.removesuffix("_text") in MM_PREFIX_LM_MODELS
    if cap is None or kv is None or model.attention_sinks or mm_prefix:
        return None
    if model.head_dim not in FLASHINFER_HEAD_SIZES or model.v_head_dim != model.head_dim:
        return None  # FLASHINFER declines it, FLASH_ATTN's own head sizes not read
    high = FLASHINFER_CAPABILITIES[1]
    low = FLASHINFER_FLOORS.at(inputs.version)
    where = f"sm{cap[0]}{cap[1]}"
    if cap[0] == 10:
        return AttentionPick("FLASHINFER", f"first on {where} (platforms/cuda.py _get_backend_priorities)")
    if cap < FLASH_ATTN_FLOOR:
        if cap >= low:
            return AttentionPick("FLASHINFER", f"FLASH_ATTN takes sm80+, FLASHINFER sm75+ at this release ({where})")
        return AttentionPick("TRITON_ATTN", f"FLASH_ATTN and FLASHINFER take sm80+ ({where})")
    if not kv or (cap[0] == 9 and kv != "fp8_e5m2"):
        return AttentionPick("FLASH_ATTN", f"first on {where}" + (" (FA3 takes the FP8 KV)" if kv else ""))
    if cap <= high:
        return AttentionPick(
            "FLASHINFER",
            f"FLASH_ATTN declines the {kv} KV on {where} (fa_utils.py "
            "flash_attn_supports_kv_cache_dtype: FA3 on sm90 or FA4 on sm10x only)",
        )
    return AttentionPick(
        "TRITON_ATTN", f"FLASH_ATTN declines the {kv} KV on {where}, FLASHINFER takes up to sm121"
    )
