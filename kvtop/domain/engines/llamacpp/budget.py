"""llama.cpp's KV cache for one launch: cells × layers × row bytes, K and V apart (docs/engines/llamacpp.md §1, §2).

    K bytes = cells × Σ full layers ggml_row_size(type_k, n_embd_k_gqa)     (+ SWA cells × Σ SWA layers)
    V bytes = cells × Σ full layers ggml_row_size(type_v, n_embd_v_gqa)
    host    = the KV of the layers llama.cpp keeps on the CPU (-nkvo: all; -ngl N: the first n_layer + 1 − N;
              no -ngl: the build's default, §10)
    fits    = the GGUF's tensors (else the predicted weights) + the GPU's K + V ≤ free memory

The pool is what `-c` asks for, not what memory allows: a launch that does not fit fails to allocate
(or, with `--fit`, is shrunk: not modelled). Compute buffers are not in this plan.
"""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.llamacpp.cells import cache_cells
from kvtop.domain.engines.llamacpp.eras import build_number
from kvtop.domain.engines.llamacpp.flags import FIT_FLAGS, SPLIT_FLAGS, LlamacppFlags, cache_types, flag_value
from kvtop.domain.engines.llamacpp.placement import SOURCE, KvPlacement, cpu_layers, host_bytes, planned
from kvtop.domain.engines.llamacpp.slot_context import slot_context
from kvtop.domain.errors import InputError
from kvtop.domain.model import MLA_KINDS, LayerKind

NOT_MODELLED_FIT = ("--fit may lower the context (and the GPU layers) when memory is short: kvtop does not model "
                    "its search and plans the context asked for")  # fmt: skip


def _offload_notes(inputs: EngineInputs) -> list[str]:
    """What the launch asks that kvtop does not model, said rather than guessed."""
    notes: list[str] = []
    if flag_value(inputs.settings, SPLIT_FLAGS) is not None:
        notes.append("not modelled: a multi-GPU split (-sm/-ts) puts each layer's KV on its own GPU; this plan is one GPU")
    if flag_value(inputs.settings, FIT_FLAGS) is not None or inputs.settings.context_length is None:
        notes.append(NOT_MODELLED_FIT)
    return notes


def solve(inputs: EngineInputs) -> EngineResult:
    model, kv = inputs.model, inputs.kv
    LlamacppFlags().check_parallel(inputs.settings)  # one GPU: kvtop's --tp/--pp/--dp are refused by name
    if model.mla is not None or model.attention_kind in MLA_KINDS:
        raise InputError("llama.cpp's MLA cache (the latent as K, V a view of it) is not modelled by kvtop", field="--model")
    if kv.state_bytes_per_request:
        raise InputError("llama.cpp's recurrent (state) cache of hybrid models is not modelled by kvtop", field="--model")
    build = build_number(inputs.settings.engine_version)
    cells = cache_cells(model, inputs.settings, build)
    slot = slot_context(model, inputs.settings, cells, build)
    full, swa = kv.full_bytes_per_token, kv.swa_bytes_per_token
    full_pool = kv.pool("full")
    steps = [
        BudgetStep(label="context asked (-c)", value=cells.requested_ctx, note="; ".join(cells.said)),
        BudgetStep(label=f"slots (-np), {'one unified stream' if cells.unified else 'one stream per slot'}",
                   value=cells.n_seq_max),  # fmt: skip
        BudgetStep(label="cells per stream (n_ctx_seq, padded to 256)", value=cells.kv_size),
        BudgetStep(label="context one slot may fill (n_ctx_slot)", value=slot.tokens,
                   note="; ".join((*slot.said, slot.source)), role="slot_context"),  # fmt: skip
        BudgetStep(label=f"bytes per cell, {full_pool.layers if full_pool else 0} full-attention layers",
                   value=full),  # fmt: skip
    ]
    pool = cells.total_cells * full
    if cells.swa_cells is not None and swa:
        steps.append(BudgetStep(label="sliding-window cells per stream", value=cells.swa_cells,
                                note=f"window {model.sliding_window}"))  # fmt: skip
        steps.append(BudgetStep(label="bytes per sliding-window cell", value=swa))
        pool += cells.total_swa_cells * swa
    steps.append(BudgetStep(label="KV cache (K + V, every stream)", bytes=pool))
    placement = planned(model, inputs.settings, build)
    k_type, v_type = cache_types(inputs.settings)
    cells_of = {LayerKind.FULL: cells.total_cells, LayerKind.SLIDING: cells.total_swa_cells}
    host = min(host_bytes(model, placement, cells_of, k_type, v_type), pool)
    gpu_pool = pool - host
    if placement.any_on_host:
        steps.append(BudgetStep(label=f"of which in host memory, {len(placement.host_layers)} layers", bytes=host,
                                note=f"{placement.why} ({SOURCE})"))  # fmt: skip
        steps.append(BudgetStep(label="KV on the GPU", bytes=gpu_pool))
    gguf_weights = model.weights_as_stored and inputs.measured.weights_bytes is None  # the weights book's one row
    weights = inputs.weights_bytes
    free = inputs.measured.free_before_load(inputs.gpu_total_bytes)
    steps.append(BudgetStep(label="free before the weights load", bytes=free,
                            source=inputs.measured.free_before_load_source()))  # fmt: skip
    steps.append(inputs.weights_step("− weights" + (" (the GGUF's tensors)" if gguf_weights else "")))
    room = free - weights
    fits = gpu_pool <= room
    notes = _offload_notes(inputs)
    if placement.any_on_host:
        notes.append(f"{host:,} B of KV ({len(placement.host_layers)} of {model.num_layers} layers' K and V) is in host "
                     f"memory ({placement.why}): not in the GPU ledger; kvtop does not check that the host has it")  # fmt: skip
    if placement.assumed and placement.otherwise is not None:
        other = KvPlacement(host_layers=placement.otherwise, why="")
        other_host = min(host_bytes(model, other, cells_of, k_type, v_type), pool)
        notes.append(f"assumed: {placement.assumed}; there {other_host:,} B of KV would be in host memory and "
                     f"{pool - other_host:,} B on the GPU")  # fmt: skip
    if cpu_layers(model, inputs.settings, build):
        notes.append("not modelled: the weights of CPU layers stay in host memory; this plan counts every weight "
                     "on the GPU")  # fmt: skip
    if not model.weights_as_stored and inputs.measured.weights_bytes is None:
        notes.append("weights predicted from config.json at the model's dtype: a quantised GGUF is smaller "
                     "(pass the .gguf file as --model)")  # fmt: skip
    notes.append("compute buffers (sized at start from n_ubatch and the context) are not in this plan")
    if not fits:
        notes.append(f"-c {cells.requested_ctx:,} needs {gpu_pool:,} B of KV on the GPU where {max(room, 0):,} B is free "
                     "after the weights: llama.cpp would fail to allocate its KV buffer")  # fmt: skip
    return EngineResult(
        engine="llamacpp", token_capacity=cells.total_cells if fits else 0, swa_token_capacity=cells.total_swa_cells or None,
        page_size=1, num_blocks=None, kv_budget_bytes=gpu_pool, kv_pool_bytes=gpu_pool, max_running_requests=cells.n_seq_max,
        max_concurrency=None, reserve_bytes=0, memory_fraction=1.0,
        memory_fraction_source="llama.cpp sizes its KV cache by -c, not by a share of memory", fits=fits,
        shortfall_bytes=0 if fits else gpu_pool - max(room, 0), steps=tuple(steps), notes=tuple(notes),
        capacity_fixed_by="-c", capacity_setting=cells.setting, not_modelled=() if slot.not_modelled is None else (slot.not_modelled,),
    )  # fmt: skip
