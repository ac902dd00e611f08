"""The values LMDeploy's startup log states (read by its `log_lines`).

TurboMind prints its block size in MiB (`block_size_ >> 20` as an integer up to v0.7.x, `%.3f` from
v0.8.0), its block count and chunk size once per TP rank thread, and the session length it had to
truncate; v0.15+ prints the object-cache budget and the free memory it came from. The PyTorch engine
prints its `CacheConfig(…)` and, at DEBUG, the free memory and runtime reserve it sized from
(docs/engines/lmdeploy.md §2.4, §3, §4.4). MiB figures are kept as `Measured` with their own interval.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engine_log_records import Measured, RankLog


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def mib_figure(text: str, *, floor: bool = False) -> Measured:
    """A printed MiB figure (`Measured.from_mib`). `floor`: the integer print of ≤ v0.7.x (`block_size_ >> 20`),
    '75' is [75, 76) MiB; otherwise `%.3f`, '0.844' is [0.8435, 0.8445] MiB, its point the byte below."""
    return Measured.from_mib(text, printed="floored" if floor else "rounded", point="down")


class SessionTruncation(_Frozen):
    """TurboMind shortened `session_len` to what the blocks hold.

    `no_enough_blocks` (v0.2 – v0.11): "No enough blocks for `session_len` (S), `session_len` truncated to T.";
    `limited_memory` (v0.12+): "`session_len` truncated to T due to limited KV cache memory"."""

    requested: int | None = None
    truncated: int
    wording: Literal["no_enough_blocks", "limited_memory"]


class ObjectCacheBudget(_Frozen):
    """v0.15+: `Object cache budget: C MB from free F MB and ratio R` (main after v0.16: 'from cacheable')."""

    budget: Measured
    free: Measured
    ratio: float


class PytorchCacheConfig(_Frozen):
    """The PyTorch engine's `CacheConfig(…)` line: the figures kvtop reads from it."""

    num_gpu_blocks: int
    block_size: int | None = None
    num_cpu_blocks: int | None = None
    max_batches: int | None = None
    cache_max_entry_count: float | None = None
    max_prefill_token_num: int | None = None


class LmdeployRankLog(RankLog):
    """Everything LMDeploy printed (TurboMind prints once per TP rank thread, unranked)."""

    block_sizes: tuple[Measured, ...] = ()  # `[BlockManager] block_size = … MB`
    max_block_counts: tuple[int, ...] = ()  # `[BlockManager] max_block_count = N`
    chunk_sizes: tuple[int, ...] = ()  # `[BlockManager] chunk_size = C`
    session_truncations: tuple[SessionTruncation, ...] = ()
    max_cached_tokens: tuple[int, ...] = ()  # v0.12+: `max cached tokens: N`
    object_cache_budgets: tuple[ObjectCacheBudget, ...] = ()
    cache_configs: tuple[PytorchCacheConfig, ...] = ()
    free_memory: tuple[Measured, ...] = ()  # PyTorch DEBUG: `minimal free gpu memory: X mb` (`>> 20`)
    runtime_memory: tuple[Measured, ...] = ()  # PyTorch DEBUG: `estimated max runtime memory: Y mb`
    prefill_updates: tuple[int, ...] = ()  # `No enough memory. Update max_prefill_token_num=N`
    gpu_blocks_initialised: tuple[int, ...] = ()  # PyTorch DEBUG: `Initialize cache engine with N gpu blocks`
    dsa_workspaces: tuple[Measured, ...] = ()  # 0.17.0+: `Reserve N MiB for DSA prefill score workspace.`
