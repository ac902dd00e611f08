"""llama-server on a simulated node: one process, one GPU, its cache the -c it was given
(docs/engines/llamacpp.md §1). It measures nothing before sizing its cache: what another process holds
does not shrink the cache, it makes the allocation fail."""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.calibration.terms import CalibratedFigures
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import RankLedger

reports_memory_bytes = False  # /props and /slots state contexts, not bytes
reports_capacity = True  # /props' per-slot context (one slot: the whole cache)
labels_ranks_by_pid = False
evictions_counter: str | None = None


def measured_for_truth(
    *, total_bytes: int, taken_before_load: Mapping[int, int], extra_bytes: Mapping[int, int],
    expected: CalibratedFigures | None,
) -> MeasuredInputs:  # fmt: skip
    """The memory free before its weights load on its GPU (it decides nothing from it but whether it fits)."""
    return MeasuredInputs(free_before_load_bytes=total_bytes - max(taken_before_load.values()))


def worker_identity(server_pid: int, settings: LaunchSettings, rank: RankLedger, position: int) -> tuple[int, int, str]:
    return server_pid, 1, ""  # the server process holds its GPU itself


def parent_title(settings: LaunchSettings, dp_rank: int) -> str:
    return "llama-server"


def worker_own_bytes(cuda_context: int, extra: int, extra_bytes: Mapping[int, int]) -> int:
    return cuda_context + extra
