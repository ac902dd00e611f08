"""The KV memory each vLLM worker logged, read per process: which records are workers, the least figure of an
untagged record's workers, and each pipeline stage's least (docs/engines/vllm.md §4: every worker sizes its blocks
from its own memory and layers; the engine takes the least)."""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog, Measured, RankedValue, min_over_ranks
from kvtop.domain.engines.vllm.log_records import VllmRankLog


def rank_available(rank: VllmRankLog, workers: int = 1) -> Measured | None:
    """`Available KV cache memory`, else the ledger's `kv cache memory in use`, else V0's `kv_cache_size`.
    Untagged workers (Ray actors behind one prefix) print into one record: the least of its first
    `workers` (TP × PP) figures is the pool's."""
    if rank.available_kv_cache_memory:
        return min(rank.available_kv_cache_memory[: max(workers, 1)], key=lambda m: m.value_bytes)
    in_use = next((s.kv_in_use for s in rank.startup_ledgers if s.kv_in_use), None)
    if in_use is not None:
        return in_use
    profiled = [p.figures["kv_cache_size"] for p in rank.v0_profiles if "kv_cache_size" in p.figures]
    return min(profiled[: max(workers, 1)], key=lambda m: m.value_bytes) if profiled else None


def least_available(log: EngineLog, workers: int = 1) -> RankedValue | None:
    """The least KV memory any record states (`rank_available`), with the rank that stated it: the pool's."""
    return log.least(VllmRankLog, lambda r: rank_available(r, workers))


def is_worker(rank: VllmRankLog) -> bool:
    """A process that printed a per-rank memory figure (a worker; not the EngineCore's totals)."""
    return bool(
        rank.model_loading
        or rank.available_kv_cache_memory
        or rank.startup_ledgers
        or rank.startup_shortfalls
        or rank.v0_profiles
        or rank.kv_memory_reserved
    )


def _stage_of(rank: VllmRankLog, tp: int, stages: int) -> int | None:
    """The pipeline stage a process belongs to: its `PPn` tag (`Worker_PP1_TP0`), else the stage its own
    `… is assigned as DP rank d, PP rank p …` line states, else its global worker rank (`VllmWorker rank=N`,
    numbered TP-fastest: rank = stage × TP + TP rank, §4), else none."""
    if rank.rank.pp is not None:
        return rank.rank.pp
    if rank.pipeline_stages:
        return rank.pipeline_stages[-1]
    if rank.rank.worker is not None:
        return (rank.rank.worker // tp) % stages
    return None


def least_by_stage(log: EngineLog, stages: int, tp: int) -> tuple[RankedValue, ...] | None:
    """Each pipeline stage's least KV memory (its TP ranks), when every stage printed its own."""
    if stages < 2:
        return None
    found = []
    for stage in range(stages):
        ranks = [r for r in log.ranks(VllmRankLog) if _stage_of(r, tp, stages) == stage]
        least = min_over_ranks((r.rank, rank_available(r)) for r in ranks)
        if least is None:
            return None
        found.append(least)
    return tuple(found)
