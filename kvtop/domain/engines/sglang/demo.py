"""SGLang on a simulated node: `sglang::scheduler_TPn` workers under the server, sized from the least
free GPU before weights load (docs/engines/sglang.md §2)."""

from __future__ import annotations

from kvtop.domain.engine_simulation import context_holds_extra, sized_from_least_free_before_load
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger_values import RankLedger

reports_memory_bytes = True
reports_capacity = True
labels_ranks_by_pid = True
evictions_counter: str | None = "retractions_total"  # sglang:num_retracted_requests_total


def worker_identity(
    server_pid: int, settings: LaunchSettings, rank: RankLedger, position: int
) -> tuple[int, int, str]:
    parts = [f"DP{rank.dp_rank}"] if settings.dp > 1 or settings.enable_dp_attention else []
    parts += [f"PP{rank.pp_rank}"] if settings.pp > 1 else []
    return (
        server_pid + 10 + position,
        server_pid,
        "sglang::scheduler_" + "_".join([*parts, f"TP{rank.tp_rank}"]),
    )


def parent_title(settings: LaunchSettings, dp_rank: int) -> str:
    return "sglang::data_parallel_controller"


measured_for_truth = sized_from_least_free_before_load  # every rank from the least free GPU
worker_own_bytes = context_holds_extra
