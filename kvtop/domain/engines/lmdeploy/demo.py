"""LMDeploy on a simulated node. TurboMind runs every rank as a thread of the server process, so the
server's pid holds every GPU; the PyTorch engine runs one rank in the server and spawns a worker per
further rank (`multiprocessing` spawn: no title of its own). Both size the cache from the least free
memory after the weights load (docs/engines/lmdeploy.md §2.2, §4.2, §6)."""

from __future__ import annotations

from kvtop.domain.engine_simulation import context_holds_extra, sized_from_least_free_before_load
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger_values import RankLedger

reports_memory_bytes = False  # /metrics states the cache usage only
reports_capacity = False
labels_ranks_by_pid = False  # its metrics label a DP engine by `engine`
evictions_counter: str | None = None
SPAWNED_WORKER = "python -c from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7) --multiprocessing-fork"


def worker_identity(
    server_pid: int, settings: LaunchSettings, rank: RankLedger, position: int
) -> tuple[int, int, str]:
    if settings.backend != "pytorch" or position % settings.tp == 0:
        return server_pid, 1, ""  # TurboMind's threads, or the PyTorch engine's first rank: the server itself
    return server_pid + 10 + position, server_pid, SPAWNED_WORKER


def parent_title(settings: LaunchSettings, dp_rank: int) -> str:
    return "lmdeploy"


measured_for_truth = sized_from_least_free_before_load  # every rank from the least free GPU
worker_own_bytes = context_holds_extra
