"""The probe planned from a predicted ledger: the buffers the engine would allocate, and the TUI's request.

Pure, so that `kvtop probe` (kvtop.commands) and the TUI's `P` (kvtop.ui), which may not import
each other, build the same buffers and keep the same reserve.
"""

from __future__ import annotations

from pydantic import ValidationError

from kvtop.domain.errors import InputError
from kvtop.domain.ledger import Ledger
from kvtop.domain.probe import (
    ProbeBuffer,
    ProbeRequest,
    bytes_for_tokens,
    default_chunk_tokens,
    dsa_index_buffer,
    mha_buffers,
)
from kvtop.domain.wording import GIB

#: The smallest reserve a GPU probe keeps free when none is given.
MIN_GPU_RESERVE_BYTES = 2 * GIB
#: The parent kills the probe's child process after this long.
DEFAULT_TIMEOUT_S = 120.0


def buffers_from_ledger(ledger: Ledger) -> tuple[list[ProbeBuffer], int]:
    """The buffers the engine would allocate on the tightest rank, and its page size."""
    model, kv = ledger.model, ledger.ranks[0].kv
    buffers: list[ProbeBuffer] = []
    for pool in kv.pools:
        if pool.per_request:  # a state or a ring: no token buffer
            continue
        if pool.name == "dsa_index" and model.dsa_index_head_dim:
            buffers.append(dsa_index_buffer(pool.layers, model.dsa_index_head_dim))
        elif model.mla is not None:
            buffers.append(
                ProbeBuffer(
                    name=f"{pool.name}_kv",
                    tensors=pool.layers,
                    row_shape=pool.row_shape,
                    dtype=pool.torch_dtype,
                )
            )
        else:
            k, v = mha_buffers(
                pool.layers,
                kv.kv_heads_per_rank,
                model.head_dim,
                pool.torch_dtype,
                v_head_dim=model.v_head_dim,
            )
            if pool.torch_dtype == "uint8":  # packed FP4: the row as the engine stores it
                k = ProbeBuffer(name="k", tensors=pool.layers, row_shape=pool.row_shape, dtype="uint8")
                v = ProbeBuffer(name="v", tensors=pool.layers, row_shape=pool.row_shape, dtype="uint8")
            ratio = 1.0
            if pool.name == "swa" and ledger.engine.swa_token_capacity and ledger.engine.token_capacity:
                ratio = ledger.engine.swa_token_capacity / ledger.engine.token_capacity
            buffers += [
                b.model_copy(update={"name": f"{pool.name}_{b.name}", "token_ratio": ratio}) for b in (k, v)
            ]
    return buffers, ledger.engine.page_size


def default_reserve_bytes(ledger: Ledger, device: str) -> int:
    """What a probe keeps free unless told otherwise (`reserve_for` with the ledger's runtime reserve)."""
    return reserve_for(device, ledger.engine.reserve_bytes)


def reserve_for(device: str, runtime_reserve_bytes: int) -> int:
    """On a GPU the larger of 2 GiB and the engine's runtime reserve (the engine still needs it
    after the probe); on cpu nothing."""
    return 0 if device == "cpu" else max(MIN_GPU_RESERVE_BYTES, runtime_reserve_bytes)


def validated_request(**fields: object) -> ProbeRequest:
    """A `ProbeRequest` from these fields, or an InputError naming the first field that is wrong."""
    try:
        return ProbeRequest.model_validate(fields)
    except ValidationError as error:
        first = error.errors()[0]
        raise InputError(str(first["msg"]), field=".".join(str(p) for p in first["loc"]) or "probe") from None


def tui_probe_request(
    ledger: Ledger,
    gpu_index: int,
    free_bytes: int | None,
    *,
    tokens: int | None = None,
    reserve_bytes: int | None = None,
    device: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ProbeRequest:
    """The TUI's probe of GPU `gpu_index` (device `cuda:N`): fill by default, or prove `tokens` fit.

    `free_bytes` is the GPU's free memory as last read; on a GPU the worker reads it again
    itself, on `device="cpu"` (tests, demos) it becomes the stand-in memory limit. The reserve
    defaults to `default_reserve_bytes`. Raises InputError when no request can be built.
    """
    if gpu_index < 0:
        raise InputError(f"must be a GPU index >= 0 (got {gpu_index})", field="gpu")
    buffers, page_size = buffers_from_ledger(ledger)
    if not buffers:
        raise InputError("the plan has no KV buffers to probe on this rank", field="probe")
    target_device = device or f"cuda:{gpu_index}"
    memory_limit: int | None = None
    if target_device == "cpu":
        if free_bytes is None:
            raise InputError(
                "a cpu probe needs the free bytes that stand in for the GPU's", field="free_bytes"
            )
        memory_limit = free_bytes
    reserve = default_reserve_bytes(ledger, target_device) if reserve_bytes is None else reserve_bytes
    return validated_request(
        device=target_device,
        buffers=tuple(buffers),
        page_size=page_size,
        target_tokens=tokens,
        fill=tokens is None,
        reserve_bytes=reserve,
        memory_limit_bytes=memory_limit,
        chunk_tokens=default_chunk_tokens(buffers, page_size),
        timeout_s=timeout_s,
    )


def fill_budget_bytes(free_bytes: int, reserve_bytes: int) -> int:
    """What a fill may take: free memory less the reserve, never below zero."""
    return max(0, free_bytes - reserve_bytes)


def tokens_within(request: ProbeRequest, budget_bytes: int) -> int:
    """The most tokens (whole pages) whose buffers, padding page included, fit in `budget_bytes`.

    What a fill can reach at best: the worker stops a page short of it when the driver rounds up.
    """
    page = request.page_size
    per_page_floor = sum(b.bytes_per_row for b in request.buffers if b.token_ratio == 1.0) * page
    per_page_floor = per_page_floor or request.bytes_per_token_predicted * page or 1
    low, high = 0, budget_bytes // per_page_floor + 1  # pages; `high` never fits
    while high - low > 1:
        middle = (low + high) // 2
        if bytes_for_tokens(request.buffers, middle * page, page) <= budget_bytes:
            low = middle
        else:
            high = middle
    return low * page
