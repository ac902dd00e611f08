"""LMDeploy on a simulated node. TurboMind runs every rank as a thread of the server process, so the
server's pid holds every GPU; the PyTorch engine runs one rank in the server and spawns a worker per
further rank (`multiprocessing` spawn: no title of its own). Both size the cache from the least free
memory after the weights load (docs/engines/lmdeploy.md §2.2, §4.2, §6)."""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.calibration.terms import CalibratedFigures
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import RankLedger

reports_memory_bytes = False  # /metrics states the cache usage only
reports_capacity = False
labels_ranks_by_pid = False  # its metrics label a DP engine by `engine`
evictions_counter: str | None = None
SPAWNED_WORKER = "python -c from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7) --multiprocessing-fork"


def measured_for_truth(
    *, total_bytes: int, taken_before_load: Mapping[int, int], extra_bytes: Mapping[int, int],
    expected: CalibratedFigures | None,
) -> MeasuredInputs:
    """Every rank is sized from the least free GPU (LMDeploy measures after the weights; what was taken
    before the load is still taken then)."""
    return MeasuredInputs(free_before_load_bytes=total_bytes - max(taken_before_load.values()))


def worker_identity(
    server_pid: int, settings: LaunchSettings, rank: RankLedger, position: int
) -> tuple[int, int, str]:
    if settings.backend != "pytorch" or position % settings.tp == 0:
        return server_pid, 1, ""  # TurboMind's threads, or the PyTorch engine's first rank: the server itself
    return server_pid + 10 + position, server_pid, SPAWNED_WORKER


def parent_title(settings: LaunchSettings, dp_rank: int) -> str:
    return "lmdeploy"


def worker_own_bytes(cuda_context: int, extra: int, extra_bytes: Mapping[int, int]) -> int:
    """The ledger counts as context all that was taken before the load on the tightest rank."""
    return cuda_context + extra
