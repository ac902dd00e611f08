"""vLLM on a simulated node: an engine core per DP rank (`VLLM::EngineCore_DPn`) and its
`VLLM::Worker_TPn` processes; each worker budgets a share of the total and profiles its own
non-KV memory (docs/engines/vllm.md §2–§4)."""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engine_simulation import StartFigures, budget_left_room_for_extra
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm.budget import ESTIMATED_NON_KV_BYTES
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger_values import RankLedger

reports_memory_bytes = False
reports_capacity = True
labels_ranks_by_pid = False
evictions_counter: str | None = "preemptions_total"  # vllm:num_preemptions_total


def measured_for_truth(
    *, total_bytes: int, taken_before_load: Mapping[int, int], extra_bytes: Mapping[int, int],
    start: StartFigures,
) -> MeasuredInputs:
    """What a worker's profile measured: CUDA's total (`total_gpu_memory`, the total its share is of), the
    free memory before its weights (what its rank holds then), and its non-KV runtime memory, the largest
    rank's extra bytes counted in it (docs/engines/vllm.md §2)."""
    base = start.non_kv_bytes if start.non_kv_bytes is not None else ESTIMATED_NON_KV_BYTES
    return MeasuredInputs(
        gpu_total_bytes=start.cuda_total_bytes,
        free_before_load_bytes=total_bytes - max(taken_before_load.values()),
        non_kv_bytes=base + max(extra_bytes.values(), default=0),
    )


def parent_title(settings: LaunchSettings, dp_rank: int) -> str:
    return f"VLLM::EngineCore_DP{dp_rank}" if settings.dp > 1 else "VLLM::EngineCore"


def worker_identity(
    server_pid: int, settings: LaunchSettings, rank: RankLedger, position: int
) -> tuple[int, int, str]:
    core = server_pid + 1 + rank.dp_rank
    if settings.tp * settings.pp == 1:  # the engine core runs the model itself
        return core, server_pid, parent_title(settings, rank.dp_rank)
    parts = [f"PP{rank.pp_rank}"] if settings.pp > 1 else []
    parts.append(f"TP{rank.tp_rank}")
    if settings.effective_ep > 1:
        parts.append(f"EP{rank.tp_rank + settings.tp * rank.dp_rank}")
    return server_pid + 100 + position, core, "VLLM::Worker_" + "_".join(parts)


worker_own_bytes = budget_left_room_for_extra
