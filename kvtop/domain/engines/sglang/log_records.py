"""The values SGLang's startup log states, per rank (read by its `log_lines`).

Every memory figure is a `Measured` (bytes and the interval that prints the same text); counts are
ints; each rank keeps its values in printed order, because a log can hold two weight loads (target
+ speculative draft), several KV pools, or two runs (docs/engines/sglang.md §2, §11, §14).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engine_log_records import Measured, RankLog, Rounded


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Stamped(_Frozen):
    """A line that states a capacity, with the time its prefix carries (`[2025-10-07 23:17:19 TP0]`, None without a
    date): a log of two runs pasted out of order is read by it (docs/engines/sglang.md §11)."""

    at: datetime | None = None


class WeightLoad(_Stamped):
    """One `Load weight begin` / `Load weight end` pair (the second pair of a start is a speculative draft).
    `at`: its first line's time; `start`: which start of the rank it belongs to (0, 1, …), the same for every load
    of one start (target and draft); `pool_after`: a pool line (KV allocated, memory pool end, the scheduler's
    summary) was printed after it, so the next load opens the next start."""

    start: int = 0
    pool_after: bool = False
    avail_before: Measured | None = None
    avail_after: Measured | None = None
    mem_usage: Measured | None = None
    elapsed_s: float | None = None
    model_class: str | None = None
    dtype: str | None = None
    quant: str | None = None


class KvAllocation(_Stamped):
    """`KV Cache is allocated`: one pool (MHA K and V, or MLA/DSA one KV buffer)."""

    dtype: str | None = None
    tokens: int | None = None
    k_size: Measured | None = None
    v_size: Measured | None = None
    kv_size: Measured | None = None


class SwaPoolUsage(_Stamped):
    """`SWAKVPool mem usage: X GB, swa size: S, full size: F`."""

    mem_usage: Measured | None = None
    swa_tokens: int | None = None
    full_tokens: int | None = None


class SlidingWindowSplit(_Stamped):
    """`Use sliding window memory pool. full_layer_tokens=F, swa_layer_tokens=S`."""

    full_layer_tokens: int | None = None
    swa_layer_tokens: int | None = None


class MambaAllocation(_Frozen):
    """`Mamba Cache is allocated. max_mamba_cache_size: N, conv_state size: …, ssm_state size: …`."""

    max_mamba_cache_size: int | None = None
    conv_state: Measured | None = None
    ssm_state: Measured | None = None


class GraphCapture(_Frozen):
    """A CUDA-graph capture: `phase` is '' (decode, old wording), 'target decode', 'piecewise', …"""

    phase: str = ""
    avail_before: Measured | None = None
    mem_usage: Measured | None = None
    avail_after: Measured | None = None
    elapsed_s: float | None = None


class SchedulerSummary(_Stamped):
    """The scheduler's `max_total_num_tokens=…, …, available_gpu_mem=… GB` line (TP0 only)."""

    max_total_num_tokens: int | None = None
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int | None = None
    max_running_requests: int | None = None
    context_len: int | None = None
    available_gpu_mem: Measured | None = None


class ProfiledTokenOverride(_Frozen):
    """`max_total_tokens=A is larger than the profiled value B. Use the profiled value instead.`"""

    max_total_tokens: int
    profiled_tokens: int


class PostCaptureResize(_Stamped):
    """`Post-capture KV sizing: max_total_num_tokens=N, free memory=X GB`."""

    max_total_num_tokens: int | None = None
    free_memory: Measured | None = None


class KvBudgetError(_Frozen):
    """SGLang refused to size the KV cache: 'no_memory_for_kv' (rest ≤ 0) or 'not_enough_memory'."""

    kind: Literal["no_memory_for_kv", "not_enough_memory"]
    mem_fraction_static: float | None = None
    minimum_viable: Rounded | None = None
    message: str


class SglangRankLog(RankLog):
    """Everything one SGLang rank printed, each kind of line in printed order."""

    init_dist_mem_usage: tuple[Measured, ...] = ()
    weight_loads: tuple[WeightLoad, ...] = ()
    kv_cache_dtype: str | None = None
    kv_allocations: tuple[KvAllocation, ...] = ()
    swa_pools: tuple[SwaPoolUsage, ...] = ()
    sliding_window_splits: tuple[SlidingWindowSplit, ...] = ()
    mamba_allocations: tuple[MambaAllocation, ...] = ()
    memory_pool_end_avail: tuple[Measured, ...] = ()
    graph_captures: tuple[GraphCapture, ...] = ()
    scheduler_summaries: tuple[SchedulerSummary, ...] = ()
    profiled_token_overrides: tuple[ProfiledTokenOverride, ...] = ()
    post_capture_resizes: tuple[PostCaptureResize, ...] = ()
    mm_reserves: tuple[Measured, ...] = ()
    budget_errors: tuple[KvBudgetError, ...] = ()
    max_allowed_input_lengths: tuple[int, ...] = ()
    """From a rejected request: `maximum allowed length (N tokens)` (SGLang's max_req_input_len)."""

    @property
    def started_loads(self) -> tuple[WeightLoad, ...]:
        """The weight loads of the latest start (`latest` over the starts, each by its first load's time): a log of
        two runs pasted in one file states the free memory and weights of the start its capacity is read from."""
        starts: dict[int, list[WeightLoad]] = {}
        for load in self.weight_loads:
            starts.setdefault(load.start, []).append(load)
        chosen = latest(list(starts.values()), lambda loads: loads[0].at)
        return tuple(chosen or ())

    @property
    def target_load(self) -> WeightLoad | None:
        """The latest start's first weight load (the served model)."""
        loads = self.started_loads
        return loads[0] if loads else None

    @property
    def draft_load(self) -> WeightLoad | None:
        """The latest start's second weight load, when a speculative draft model was loaded."""
        loads = self.started_loads
        return loads[1] if len(loads) > 1 else None


_Record = TypeVar("_Record")


def latest(records: Sequence[_Record], at: Callable[[_Record], datetime | None]) -> _Record | None:
    """The record of the latest start, THE rule for every figure a log of several starts states (capacity, free
    memory, weights): by the time its line carries (`at`) when every one carries a date (a log of two runs pasted
    out of order, C09, printed the later run first), else the last printed; equal times, the last printed."""
    if not records:
        return None
    times = [at(record) for record in records]
    if any(time is None for time in times):
        return records[-1]
    return records[max(range(len(records)), key=lambda index: (times[index], index))]
