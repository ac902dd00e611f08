"""TensorRT-LLM on a simulated node: trtllm-serve and, under it, one MPI worker per rank
(`python3 -m mpi4py.futures.server`, no title of its own); every rank is sized from the least memory
free at the profiled peak over all ranks (docs/engines/trtllm.md §3, §5)."""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engine_simulation import StartFigures, budget_left_room_for_extra
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.trtllm.budget import ESTIMATED_NON_KV_BYTES
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger_values import RankLedger

reports_memory_bytes = False  # trtllm-serve reports blocks, not bytes
reports_capacity = True  # /prometheus/metrics: its KV gauges state the blocks
labels_ranks_by_pid = False
evictions_counter: str | None = None
WORKER_COMMAND = "python3 -m mpi4py.futures.server"


def measured_for_truth(
    *, total_bytes: int, taken_before_load: Mapping[int, int], extra_bytes: Mapping[int, int],
    start: StartFigures,
) -> MeasuredInputs:
    """The least free GPU before the weights, and the profiled runtime reserve, a rank's extra bytes (outside
    torch at the profiled peak) counted in it (docs/engines/trtllm.md §3)."""
    base = start.non_kv_bytes if start.non_kv_bytes is not None else ESTIMATED_NON_KV_BYTES
    return MeasuredInputs(
        free_before_load_bytes=total_bytes - max(taken_before_load.values()),
        non_kv_bytes=base + max(extra_bytes.values(), default=0),
    )


def worker_identity(
    server_pid: int, settings: LaunchSettings, rank: RankLedger, position: int
) -> tuple[int, int, str]:
    """MPI workers spawned under trtllm-serve, in rank order (their command line is all they show)."""
    return server_pid + 10 + position, server_pid, WORKER_COMMAND


def parent_title(settings: LaunchSettings, dp_rank: int) -> str:
    return WORKER_COMMAND


worker_own_bytes = budget_left_room_for_extra
