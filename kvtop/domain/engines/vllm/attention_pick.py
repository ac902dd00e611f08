"""Which attention backend vLLM's selector runs a model without MLA on, and FlashInfer's workspace where it is
FLASHINFER (docs/engines/vllm.md §12, "FlashInfer's workspace inside the graph estimate").

The backend is `attention_select.selected_backend`'s (vLLM's selector by release), read here from v0.29.0
(`PICK_READ`).

FlashInfer's metadata builder allocates its workspace on its first build (`_get_workspace_buffer`, flashinfer.py
:1014-1037 at v0.30.0, :1017-1036 at v0.29.0, :1033-1052 at v0.31.0, :1107-1126 at v0.32.0, :1282-1301 at v0.34.0):
max(`VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE`, 394 MiB by default: envs.py:220 at v0.30.0; max_num_batched_tokens × the
rank's query heads × head size × 16 B, `FLASHINFER_PREFILL_WORKSPACE_BYTES_PER_ELEM`). The variable is not seen by a
plan: its default is charged.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.attention_select import AttentionPick, selected_backend
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.wording import MIB, mib

FLASHINFER_WORKSPACE_DEFAULT = 394 * MIB  # envs.VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE's default
FLASHINFER_PREFILL_WORKSPACE_BYTES_PER_ELEM = 16  # flashinfer.py:95 at v0.30.0 (:93 v0.29.0, :106 v0.34.0)
PICK_READ: Eras[bool] = Eras((
    Era("", False, "not read before v0.29.0 (the non-MLA order and FLASHINFER's sm80 floor read in v0.24.0-v0.28.0 "
                   "too, attention_select.py, but no plan reads the workspace there)"),
    Era("0.29.0", True, "platforms/cuda.py _get_backend_priorities, non-MLA branch: v0.30.0:154-179, the same in the "
                        "v0.29.0, v0.31.0, v0.32.0 and v0.34.0 wheels"),
))  # fmt: skip


def attention_pick(inputs: CalibrationInputs) -> AttentionPick | None:
    """The backend vLLM runs this launch's attention on where the workspace is read (`PICK_READ`,
    attention_select.selected_backend); None where not modelled."""
    return selected_backend(inputs) if PICK_READ.at(inputs.version) else None


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
