"""What an engine's startup log says, as frozen values (parsed by `kvtop.sources.engine_logs`).

Every memory figure SGLang and vLLM print is bytes / 2**30, whatever the label ("GB" in SGLang,
"GiB" in vLLM, "GB" in old vLLM), and it is rounded, so a figure is kept as `Measured`: the bytes
it stands for and the interval of bytes that print the same text. Counts are exact ints. Each
rank keeps its own values in printed order (`engine_log_records`); `EngineLog` holds them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engine_log_records import (
    GIB_BYTES,
    BlocksOverride,
    Concurrency,
    GraphAdvisory,
    GraphCapture,
    GraphCaptureFinished,
    GraphPool,
    KvAdmissionError,
    KvAllocation,
    KvBudgetError,
    KvMemoryReserved,
    KvTokenShortfall,
    MambaAllocation,
    Measured,
    ModelLoading,
    PostCaptureResize,
    ProfiledTokenOverride,
    RankKey,
    Rounded,
    SchedulerSummary,
    SglangRankLog,
    SlidingWindowSplit,
    StartupFailure,
    StartupLedger,
    StartupShortfall,
    SwaPoolUsage,
    V0MemoryProfile,
    VllmRankLog,
    WeightLoad,
)
from kvtop.domain.errors import InputError

EngineKind = Literal["sglang", "vllm"]
ArgValue = str | int | float | bool | None

_R = TypeVar("_R")
_T = TypeVar("_T")

__all__ = [
    "ArgValue",
    "EngineKind",
    "EngineLog",
    "RankedValue",
    "first_over_ranks",
    "min_over_ranks",
    "GIB_BYTES",
    "Measured",
    "Rounded",
    "RankKey",
    "WeightLoad",
    "KvAllocation",
    "SwaPoolUsage",
    "SlidingWindowSplit",
    "MambaAllocation",
    "GraphCapture",
    "SchedulerSummary",
    "ProfiledTokenOverride",
    "PostCaptureResize",
    "KvBudgetError",
    "SglangRankLog",
    "ModelLoading",
    "Concurrency",
    "BlocksOverride",
    "GraphAdvisory",
    "GraphCaptureFinished",
    "GraphPool",
    "StartupLedger",
    "StartupShortfall",
    "StartupFailure",
    "KvAdmissionError",
    "KvTokenShortfall",
    "KvMemoryReserved",
    "V0MemoryProfile",
    "VllmRankLog",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RankedValue(_Frozen):
    """A value together with the rank that printed it."""

    rank: RankKey
    value: Measured


def first_over_ranks(ranks: Sequence[_R], pick: Callable[[_R], _T | None]) -> _T | None:
    """The first non-None `pick(rank)` in rank order (unranked first, then DP/PP/TP/EP)."""
    for rank in ranks:
        value = pick(rank)
        if value is not None:
            return value
    return None


def min_over_ranks(values: Iterable[tuple[RankKey, Measured | None]]) -> RankedValue | None:
    """The smallest figure over ranks (what SGLang's MIN all-reduce would see), with its rank."""
    best: RankedValue | None = None
    for rank, value in values:
        if value is not None and (best is None or value.value_bytes < best.value.value_bytes):
            best = RankedValue(rank=rank, value=value)
    return best


_SGLANG_FACTS: dict[str, Callable[[SglangRankLog], object]] = {
    "load_weight_begin": lambda r: r.target_load and r.target_load.avail_before,
    "load_weight_end": lambda r: r.target_load and r.target_load.avail_after,
    "kv_allocation": lambda r: r.kv_allocations or r.swa_pools or None,
    "memory_pool_end": lambda r: r.memory_pool_end_avail or None,
    "scheduler_summary": lambda r: r.scheduler_summaries or None,
}
_VLLM_FACTS: dict[str, Callable[[VllmRankLog], object]] = {
    "model_loading": lambda r: r.model_loading or None,
    "available_kv_cache_memory": lambda r: r.available_kv_cache_memory or None,
    "kv_cache_tokens": lambda r: r.kv_cache_tokens or r.num_gpu_blocks or None,
    "max_concurrency": lambda r: r.max_concurrency or None,
}


class EngineLog(_Frozen):
    """A parsed startup log: engine, settings, and each rank's printed figures."""

    source: str = "<log>"
    engine: EngineKind | None = None
    engine_version: str | None = None
    model_path: str | None = None
    server_args: dict[str, ArgValue] = {}
    """SGLang `server_args=ServerArgs(…)`, vLLM `non-default args: {…}` or `Namespace(…)`."""
    engine_config: dict[str, ArgValue] = {}
    """vLLM `Initializing a V1 LLM engine (vX) with config: k=v, …`."""
    launch_command: str | None = None
    """A `python -m sglang.launch_server …` / `vllm serve …` line pasted into the log, verbatim."""
    sglang_ranks: tuple[SglangRankLog, ...] = ()
    vllm_ranks: tuple[VllmRankLog, ...] = ()
    lines_total: int = 0
    lines_parsed: int = 0
    """Physical lines that gave at least one value."""
    unrecognised_engine_lines: int = 0
    """Lines with an engine prefix (`[… TP0]`, `INFO mm-dd …`, `(… pid=N)`) that gave nothing."""
    sglang_lines: int = 0
    """Lines recognised as SGLang's (a value or a launch command was read from them)."""
    vllm_lines: int = 0
    """Lines recognised as vLLM's."""
    startup_failures: tuple[StartupFailure, ...] = ()
    """Error lines showing the engine refused to start, in printed order."""

    def recognised_lines(self, engine: EngineKind) -> int:
        """How many lines were recognised as `engine`'s."""
        return self.sglang_lines if engine == "sglang" else self.vllm_lines

    @property
    def startup_error(self) -> str | None:
        """The most specific error of a refused start (an exception over `failed to start`)."""
        failures = [failure.text for failure in self.startup_failures]
        return next((text for text in failures if "Error:" in text), failures[0] if failures else None)

    def engine_for(self, requested: EngineKind | None = None) -> EngineKind:
        """The engine whose rules explain this log: `requested`, unless the log is clearly the other's.

        A log with no recognised line of either engine, or whose lines are all the other engine's,
        is an `InputError` (one line) rather than an explanation of nothing.
        """
        if self.sglang_lines + self.vllm_lines == 0:
            raise InputError("no SGLang or vLLM startup lines", field="log", source=self.source)
        if requested is None:
            return self.engine or ("sglang" if self.sglang_lines >= self.vllm_lines else "vllm")
        other: EngineKind = "vllm" if requested == "sglang" else "sglang"
        if self.recognised_lines(requested) == 0:
            names = {"sglang": "SGLang", "vllm": "vLLM"}
            raise InputError(
                f"the lines of {self.source} are {names[other]}'s ({self.recognised_lines(other)} recognised, "
                f"none {names[requested]}'s): pass --engine {other} or leave --engine out",
                field="--engine",
            )
        return requested

    def sglang_rank(self, rank: RankKey) -> SglangRankLog | None:
        """The SGLang record of `rank`, if it printed anything."""
        return next((record for record in self.sglang_ranks if record.rank == rank), None)

    def vllm_rank(self, rank: RankKey) -> VllmRankLog | None:
        """The vLLM record of `rank`, if it printed anything."""
        return next((record for record in self.vllm_ranks if record.rank == rank), None)

    def sglang_first(self, pick: Callable[[SglangRankLog], _T | None]) -> _T | None:
        """`pick` from the first SGLang rank that has it."""
        return first_over_ranks(self.sglang_ranks, pick)

    def vllm_first(self, pick: Callable[[VllmRankLog], _T | None]) -> _T | None:
        """`pick` from the first vLLM process that has it."""
        return first_over_ranks(self.vllm_ranks, pick)

    def sglang_min(self, pick: Callable[[SglangRankLog], Measured | None]) -> RankedValue | None:
        """The smallest `pick` over SGLang ranks, with the rank that printed it."""
        return min_over_ranks((record.rank, pick(record)) for record in self.sglang_ranks)

    def vllm_min(self, pick: Callable[[VllmRankLog], Measured | None]) -> RankedValue | None:
        """The smallest `pick` over vLLM processes, with the process that printed it."""
        return min_over_ranks((record.rank, pick(record)) for record in self.vllm_ranks)

    def missing(self) -> tuple[str, ...]:
        """Headline facts of the detected engine that the log does not state."""
        if self.engine == "sglang":
            absent = [name for name, pick in _SGLANG_FACTS.items() if self.sglang_first(pick) is None]
        elif self.engine == "vllm":
            absent = [name for name, pick in _VLLM_FACTS.items() if self.vllm_first(pick) is None]
        else:
            return ("engine",)
        if not self.server_args:
            absent.append("server_args")
        return tuple(absent)
