"""Which attention backend vLLM's selector runs a model without MLA on, and FlashInfer's workspace where it is
FLASHINFER (docs/engines/vllm.md §12, "FlashInfer's workspace inside the graph estimate").

`CudaPlatform.get_valid_backends` runs the first backend of `_get_backend_priorities` whose `validate_configuration`
passes (vllm/platforms/cuda.py :399-427 at v0.30.0). Without MLA the order is FLASHINFER, FLASH_ATTN, TRITON_ATTN on
sm10x (causal attention) and FLASH_ATTN, FLASHINFER, TRITON_ATTN elsewhere (:154-179 at v0.30.0; the same non-MLA
branch in the v0.29.0, v0.31.0, v0.32.0 and v0.34.0 wheels). FLASH_ATTN takes sm80+ (flash_attn.py:404-405 at
v0.30.0) and a quantized KV only where FA3 runs on sm90 or FA4 on sm10x, never fp8_e5m2
(`flash_attn_supports_kv_cache_dtype`, fa_utils.py:282-308). FLASHINFER takes sm80 to sm121 (flashinfer.py:508-518 at
v0.30.0: the floor raised from sm75 while flashinfer#3620 is open; :512 at v0.29.0, :520 at v0.31.0, :577 at v0.32.0,
:704 at v0.34.0), head sizes 64, 128, 256 and 512, and every fp8 KV dtype (:414-423). So FLASHINFER runs on sm10x, and
elsewhere where FLASH_ATTN declines the KV: an FP8 KV on sm80, sm86, sm89 and sm12x (FA2 there), fp8_e5m2 on sm90
too. Not modelled (None): MLA (its own selector, `backends.py`), sinks, a multimodal prefix LM, head sizes FLASH_ATTN
or FLASHINFER may decline, an unknown GPU, a KV dtype other than the model's or fp8, a release before v0.29.0.

FlashInfer's metadata builder allocates its workspace on its first build (`_get_workspace_buffer`, flashinfer.py
:1014-1037 at v0.30.0, :1017-1036 at v0.29.0, :1033-1052 at v0.31.0, :1107-1126 at v0.32.0, :1282-1301 at v0.34.0):
max(`VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE`, 394 MiB by default: envs.py:220 at v0.30.0; max_num_batched_tokens × the
rank's query heads × head size × 16 B, `FLASHINFER_PREFILL_WORKSPACE_BYTES_PER_ELEM`). The variable is not seen by a
plan: its default is charged.
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
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.gpus import compute_capability
from kvtop.domain.kv import FP8_KV_FORMATS
from kvtop.domain.kv_format import resolve_kv_format
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import MIB, mib

Backend = Literal["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"]
BACKENDS: tuple[Backend, ...] = ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN")
FLASHINFER_CAPABILITIES = ((8, 0), (12, 1))  # FlashInferBackend.supports_compute_capability, v0.29.0-v0.34.0
FLASHINFER_WORKSPACE_DEFAULT = 394 * MIB  # envs.VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE's default
FLASHINFER_PREFILL_WORKSPACE_BYTES_PER_ELEM = 16  # flashinfer.py:95 at v0.30.0 (:93 v0.29.0, :106 v0.34.0)
PICK_READ: Eras[bool] = Eras((
    Era("", False, "not read before v0.29.0 (the non-MLA order and FLASHINFER's sm80 floor read in v0.26.0-v0.28.0 "
                   "too, but no plan reads the pick there)"),
    Era("0.29.0", True, "platforms/cuda.py _get_backend_priorities, non-MLA branch: v0.30.0:154-179, the same in the "
                        "v0.29.0, v0.31.0, v0.32.0 and v0.34.0 wheels"),
))  # fmt: skip


@dataclass(frozen=True)
class AttentionPick:
    """The backend the selector runs, and why (its rule and source)."""

    backend: Backend
    why: str


def _fp8_kv(inputs: CalibrationInputs, model: ModelSpec) -> str | None:
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


def attention_pick(inputs: CalibrationInputs) -> AttentionPick | None:
    """The backend vLLM runs this launch's attention on (module docstring); None where not modelled."""
    model = inputs.model
    if model is None or model.mla is not None or model.attention_free or not PICK_READ.at(inputs.version):
        return None
    stated = str(inputs.settings.flags.get(ATTENTION_BACKEND_FLAG.lstrip("-")) or "auto").upper()
    if stated != "AUTO":
        named = next((backend for backend in BACKENDS if backend == stated), None)
        return AttentionPick(named, f"named by {ATTENTION_BACKEND_FLAG}") if named else None
    cap = compute_capability(inputs.gpu_name)
    kv = _fp8_kv(inputs, model)
    mm_prefix = model.multimodal and model.model_type.removesuffix("_text") in MM_PREFIX_LM_MODELS
    if cap is None or kv is None or model.attention_sinks or mm_prefix:
        return None
    if model.head_dim not in FLASHINFER_HEAD_SIZES or model.v_head_dim != model.head_dim:
        return None  # FLASHINFER declines it, FLASH_ATTN's own head sizes not read
    low, high = FLASHINFER_CAPABILITIES
    where = f"sm{cap[0]}{cap[1]}"
    if cap[0] == 10:
        return AttentionPick("FLASHINFER", f"first on {where} (platforms/cuda.py _get_backend_priorities)")
    if cap < low:
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


def flashinfer_workspace(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) of FlashInfer's workspace where FLASHINFER runs the launch (`attention_pick`), else None."""
    pick = attention_pick(inputs)
    model = inputs.model
    if pick is None or pick.backend != "FLASHINFER" or model is None:
        return None
    tokens = batch_limits(inputs)[0]
    heads = max(model.num_attention_heads // inputs.layout.tp, 1)
    sized = tokens * heads * model.head_dim * FLASHINFER_PREFILL_WORKSPACE_BYTES_PER_ELEM
    size = max(FLASHINFER_WORKSPACE_DEFAULT, sized)
    return size, (
        f"FlashInfer's workspace, allocated on its builder's first metadata build ({mib(size)}: the larger of "
        f"394 MiB and {tokens:,} tokens × {heads} query heads × {model.head_dim} × 16 B; flashinfer.py "
        f"_get_workspace_buffer); FLASHINFER runs here: {pick.why}"
    )
