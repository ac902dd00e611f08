"""llama-server on a simulated node: one process, one GPU, its cache the -c it was given
(docs/engines/llamacpp.md §1). It measures nothing before sizing its cache: what another process holds
does not shrink the cache, it makes the allocation fail."""

from __future__ import annotations

from kvtop.domain.engine_simulation import context_holds_extra, sized_from_least_free_before_load
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger_values import RankLedger

reports_memory_bytes = False  # /props and /slots state contexts, not bytes
reports_capacity = True  # /props' per-slot context (one slot: the whole cache)
labels_ranks_by_pid = False
evictions_counter: str | None = None


def worker_identity(server_pid: int, settings: LaunchSettings, rank: RankLedger, position: int) -> tuple[int, int, str]:
    return server_pid, 1, ""  # the server process holds its GPU itself


def parent_title(settings: LaunchSettings, dp_rank: int) -> str:
    return "llama-server"


# the memory free before its weights load on its one GPU (it decides nothing from it but whether it fits)
measured_for_truth = sized_from_least_free_before_load
worker_own_bytes = context_holds_extra
