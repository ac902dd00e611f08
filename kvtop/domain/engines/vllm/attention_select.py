"""Which attention backend vLLM's selector runs a model without MLA on, by release (docs/engines/vllm.md §12): the rule
both FlashInfer's workspace (`attention_pick.py`, read from v0.29.0) and the speculative graphs' mode
(`spec_graph_mode.py`, from v0.20.0) read.

`CudaPlatform.get_valid_backends` runs the first backend of `_get_backend_priorities` whose `validate_configuration`
passes (vllm/platforms/cuda.py :399-427 at v0.30.0). Without MLA the order is FLASHINFER, FLASH_ATTN, TRITON_ATTN on
sm10x (causal attention) and FLASH_ATTN, FLASHINFER, TRITON_ATTN elsewhere (:154-179 at v0.30.0; the same non-MLA
branch in the v0.20.0, v0.24.0, v0.28.0, v0.29.0, v0.31.0, v0.32.0 and v0.34.0 wheels). FLASH_ATTN takes sm80+
(flash_attn.py:404-405 at v0.30.0), head sizes up to 256 (FA2/FA3; FA4 above it not modelled: None) and a quantized
KV only where FA3 runs on sm90 (or FA4 on sm10x), by release (`FLASH_ATTN_E5M2`): any quantized KV, fp8_e5m2 too,
at v0.20.0-v0.21.x (`flash_attn_supports_fp8`), fp8/fp8_e4m3 alone from v0.22.0 (flash_attn.py:183-193 at v0.24.0),
never fp8_e5m2 from v0.27.1 (`flash_attn_supports_kv_cache_dtype`, fa_utils.py:296 at v0.27.1, the first read:
v0.27.0 not read; :282-308 at v0.30.0). FLASHINFER takes sm80 to sm121 from v0.24.0 (flashinfer.py:426-434 at v0.24.0, :508-518 at v0.30.0: the floor raised from sm75
while flashinfer#3620 is open; :704 at v0.34.0), sm75 to sm121 at v0.20.0-v0.23.x (flashinfer.py:405 at v0.20.0,
:407 at v0.23.0: `FLASHINFER_FLOORS`), head sizes 64, 128 and 256, and 512 from v0.22.0
(`FLASHINFER_HEAD_SIZE_ERAS`), and every fp8 KV dtype (:414-423). So FLASHINFER runs on sm10x, and elsewhere where
FLASH_ATTN declines the KV or the GPU: an FP8 KV on sm80, sm86, sm89 and sm12x (FA2 there), fp8_e5m2 on sm90 from
v0.22.0, and sm75 at v0.20.0-v0.23.x.

Layers whose head sizes differ: Gemma-4's `Gemma4Config.verify_and_update_config` names the backend where none is
named (`GEMMA4_OVERRIDE`): TRITON_ATTN at v0.20.0-v0.23.x where the larger head exceeds 256; from v0.24.0 FA4 for
every layer where FA4 runs (sm9x to sm11x: not modelled, and at v0.33.0 on sm90 with an fp8 KV FA3/FA4 per layer),
TRITON_ATTN elsewhere. Any other model whose layers' head sizes differ is not modelled (vLLM picks per layer).

Not modelled (None): MLA (its own selector, `backends.py`), sinks, a multimodal prefix LM, head sizes FLASH_ATTN or
FLASHINFER may decline, an unknown GPU, a KV dtype other than the model's or fp8. Not read (the pick as if unset):
`--attention-config` (use_trtllm_attention, flash_attn_version), a DFlash drafter's `use_non_causal` (from v0.28.0
sm10x orders FLASH_ATTN first for it), and the drafter's own `speculative_config.attention_backend` /
`kv_cache_dtype`: the pick is the target model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.backends import (
    ATTENTION_BACKEND_FLAG,
    FLASHINFER_CEILING,
    FLASHINFER_FLOORS,
    FLASHINFER_HEAD_SIZE_ERAS,
    FP8_NATIVE,
    MM_PREFIX_LM_MODELS,
    falls_to_triton,
)
from kvtop.domain.engines.vllm.eras import TRITON_ATTN_FP8_SM89_ERAS
from kvtop.domain.engines.vllm.kv_storage import kv_storage_for
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.kv import FP8_KV_FORMATS, KvFormat
from kvtop.domain.kv_format import resolve_kv_format
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

Backend = Literal["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"]
BACKENDS: tuple[Backend, ...] = ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN")
FLASH_ATTN_FLOOR = (8, 0)  # FlashAttentionBackend.supports_compute_capability (flash_attn.py:404-405 at v0.30.0)
FA_HEAD_CEILING = 256  # FA2 and FA3 take head sizes up to 256; FA4 above it (not modelled)
# Whether FLASH_ATTN (FA3 on sm90) takes an fp8_e5m2 KV: any quantized KV through `flash_attn_supports_fp8` before
# v0.22.0, fp8/fp8_e4m3 alone after (the rule's words by release, for the pick's why)
FLASH_ATTN_E5M2: Eras[bool] = Eras((
    Era("", True, "flash_attn.py:188-193 at v0.20.0, :191-196 at v0.21.0: any quantized KV where "
                  "flash_attn_supports_fp8 (fa_utils.py:187-193 at v0.20.0: FA3 on sm90 only)"),
    Era("0.22.0", False, "flash_attn.py:183-193 at v0.22.0, :186 v0.23.0, :183-193 v0.24.0, :169 v0.25.0, :181 "
                         "v0.26.0: fp8 and fp8_e4m3 only, FA3 on sm90 only"),
    Era("0.27.1", False, "fa_utils.py flash_attn_supports_kv_cache_dtype (:296 at v0.27.1, the first read: v0.27.0 "
                         "not read, held in the era before; :223 v0.28.0, :282 v0.29.0, :282-308 v0.30.0): no "
                         "fp8_e5m2, FA3 on sm90 or FA4 on sm10x only"),
))  # fmt: skip
# The words for FLASH_ATTN's quantized-KV rule, by release (sources: FLASH_ATTN_E5M2's)
FA_KV_RULE: Eras[str] = Eras((
    Era("", "flash_attn_supports_fp8: FA3 on sm90 only", "fa_utils.py:187-193 at v0.20.0"),
    Era("0.22.0", "flash_attn.py supports_kv_cache_dtype: fp8 or fp8_e4m3 on FA3, sm90 only",
        "flash_attn.py:183-193 at v0.22.0 and v0.24.0"),
    Era("0.27.1", "fa_utils.py flash_attn_supports_kv_cache_dtype: FA3 on sm90 or FA4 on sm10x only",
        "fa_utils.py:296 at v0.27.1 (v0.27.0 not read), :282-308 at v0.30.0"),
))  # fmt: skip
# Gemma4Config.verify_and_update_config (model_executor/models/config.py; MODELS_CONFIG_MAP's Gemma4ForCausalLM and
# Gemma4ForConditionalGeneration) where no backend is named and the layers' head sizes differ: "triton_above_256"
# forces TRITON_ATTN where the larger exceeds 256, "fa4_else_triton" forces FA4 for every layer where FA4 runs
# (sm9x to sm11x: not modelled, None; v0.33.0 on sm90 with an fp8 KV picks FA3/FA4 per layer) and TRITON_ATTN
# elsewhere, whatever the sizes; None: not read
GEMMA4_ARCHITECTURES = ("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration")
GEMMA4_OVERRIDE: Eras[str | None] = Eras((
    Era("", None, "not read before v0.20.0 (the selector is not read there)"),
    Era("0.20.0", "triton_above_256", "models/config.py:58-107 at v0.20.0, :57-106 at v0.22.0 and v0.23.0 "
                                      "Gemma4Config: TRITON_ATTN where head_dim != global_head_dim and the larger > 256"),
    Era("0.24.0", "fa4_else_triton", "models/config.py:57-105 at v0.24.0, :209-256 at v0.30.0, :301-368 at v0.33.0 "
                                     "Gemma4Config: FA4 for every layer where FA4 runs, else TRITON_ATTN"),
))  # fmt: skip
# where vllm_flash_attn's FA4 runs (is_fa_version_supported(4): flash_attn_interface.py:72-84 at v0.24.0)
FA4_MAJORS = (9, 10, 11)


@dataclass(frozen=True)
class AttentionPick:
    """The backend the selector runs, and why (its rule and source)."""

    backend: Backend
    why: str


def fp8_kv(model: ModelSpec, settings: LaunchSettings, gpu_name: str | None, version: ResolvedVersion) -> str | None:
    """The fp8 KV the launch stores, as its flag spells it ('fp8' for a checkpoint's FP8 KV read under `auto`), ''
    for the model's dtype, None for another (not modelled): the format is `kv_format.resolve_kv_format`'s over vLLM's KV
    storage (kv_storage.py), the one rule the KV book reads."""
    storage = kv_storage_for(model, settings, version)
    fmt = resolve_kv_format(settings.kv_cache_dtype, model, storage, gpu_name=gpu_name)
    if fmt in ("bf16", "fp16", "fp32"):
        return ""
    if fmt not in FP8_KV_FORMATS:
        return None
    requested = settings.kv_cache_dtype.strip().lower()
    return "fp8" if requested == "auto" else requested


def _head_sizes(model: ModelSpec) -> set[tuple[int, int]]:
    """The (K, V) head sizes of the model's layers (one pair where its layers do not differ)."""
    layers = model.layer_geometry or (model.own_geometry,)
    return {(layer.head_dim, layer.v_head_dim) for layer in layers}


def _mixed_heads(model: ModelSpec, cap: tuple[int, int], version: ResolvedVersion) -> AttentionPick | None:
    """The pick where the layers' head sizes differ: Gemma-4's override by release (`GEMMA4_OVERRIDE`), None (not
    modelled: vLLM picks per layer) elsewhere."""
    override = GEMMA4_OVERRIDE.at(version) if model.architecture in GEMMA4_ARCHITECTURES else None
    source = GEMMA4_OVERRIDE.era(version).source
    largest = max(max(pair) for pair in _head_sizes(model))
    where = f"sm{cap[0]}{cap[1]}"
    if override == "triton_above_256" and largest > FA_HEAD_CEILING:
        return AttentionPick("TRITON_ATTN", f"Gemma-4's head sizes differ, the larger {largest} > 256 ({source})")
    if override == "fa4_else_triton" and cap[0] not in FA4_MAJORS:
        return AttentionPick("TRITON_ATTN", f"Gemma-4's head sizes differ, no FA4 on {where} ({source})")
    return None


def selected_backend(inputs: CalibrationInputs) -> AttentionPick | None:
    """The backend vLLM's selector runs this launch's attention on at its release (module docstring); None where
    not modelled."""
    if inputs.model is None:
        return None
    return pick_backend(inputs.model, inputs.settings, inputs.gpu_name, inputs.version)


def pick_backend(
    model: ModelSpec, settings: LaunchSettings, gpu_name: str | None, version: ResolvedVersion
) -> AttentionPick | None:
    """`selected_backend` from the launch's parts (the budget's refusals read it before any calibration input)."""
    if model.mla is not None or model.attention_free:
        return None
    stated = str(settings.flags.get(ATTENTION_BACKEND_FLAG.lstrip("-")) or "auto").upper()
    if stated != "AUTO":
        named = next((backend for backend in BACKENDS if backend == stated), None)
        return AttentionPick(named, f"named by {ATTENTION_BACKEND_FLAG}") if named else None
    cap = compute_capability(gpu_name)
    kv = fp8_kv(model, settings, gpu_name, version)
    if cap is None or kv is None:
        return None
    if len(_head_sizes(model)) > 1:
        return _mixed_heads(model, cap, version)
    mm_prefix = model.multimodal and model.model_type.removesuffix("_text") in MM_PREFIX_LM_MODELS
    if model.attention_sinks or mm_prefix:
        return None
    if model.head_dim not in FLASHINFER_HEAD_SIZE_ERAS.at(version) or model.v_head_dim != model.head_dim:
        return None  # FLASHINFER declines it, FLASH_ATTN's own head sizes not read
    high = FLASHINFER_CEILING
    low = FLASHINFER_FLOORS.at(version)
    where = f"sm{cap[0]}{cap[1]}"
    if cap[0] == 10:
        return AttentionPick("FLASHINFER", f"first on {where} (platforms/cuda.py _get_backend_priorities)")
    if cap < FLASH_ATTN_FLOOR:
        if cap >= low:
            return AttentionPick("FLASHINFER", f"FLASH_ATTN takes sm80+; FLASHINFER sm75+ at this release ({where})")
        return AttentionPick("TRITON_ATTN", f"FLASH_ATTN and FLASHINFER take sm80+ ({where})")
    fa_takes_kv = not kv or (cap[0] == 9 and (kv != "fp8_e5m2" or FLASH_ATTN_E5M2.at(version)))
    if fa_takes_kv:
        if model.head_dim > FA_HEAD_CEILING:
            return None  # FA2/FA3 take up to 256: FA4 (or FLASHINFER after it) not modelled
        return AttentionPick("FLASH_ATTN", f"first on {where}" + (" (FA3 takes the FP8 KV)" if kv else ""))
    rule = FA_KV_RULE.at(version)
    if cap <= high:
        return AttentionPick("FLASHINFER", f"FLASH_ATTN declines the {kv} KV on {where}, {rule}")
    return AttentionPick("TRITON_ATTN", f"FLASH_ATTN declines the {kv} KV on {where}; FLASHINFER takes up to sm121")


def check_triton_fp8(
    model: ModelSpec, fmt: KvFormat, settings: LaunchSettings, gpu_name: str | None, version: ResolvedVersion
) -> None:
    """Raise where vLLM runs TRITON_ATTN with an FP8 KV below sm89 from v0.24.0 (`TRITON_ATTN_FP8_SM89_ERAS`:
    TritonAttentionImpl.__init__ raises "FP8 KV cache is not supported by the Triton attention backend"): where the
    selector picks TRITON_ATTN (Gemma-4's override, `--attention-backend TRITON_ATTN`, the GPU), or where it is not
    modelled and FLASH_ATTN and FLASHINFER decline the model (`backends.falls_to_triton`)."""
    cap = compute_capability(gpu_name)
    if cap is None or not fmt.startswith("fp8") or model.mla is not None or model.attention_free:
        return
    if not TRITON_ATTN_FP8_SM89_ERAS.at(version) or cap >= FP8_NATIVE:
        return
    pick = pick_backend(model, settings, gpu_name, version)
    if pick is None and falls_to_triton(model, cap, version):
        pick = AttentionPick("TRITON_ATTN", "FLASH_ATTN and FLASHINFER decline it")
    if pick is None or pick.backend != "TRITON_ATTN":
        return
    raise InputError(
        f"vLLM {version.label} refuses FP8 KV for this model on {gpu_name} (sm{cap[0]}{cap[1]}): it runs TRITON_ATTN "
        f"there ({pick.why}), whose FP8 (native fp8e4nv) needs sm89+; use --kv-cache-dtype auto",
        field="--kv-cache-dtype",
    )
