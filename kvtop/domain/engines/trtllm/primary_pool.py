"""TensorRT-LLM's `Number of blocks in KV cache primary pool: B` read as a capacity, and when that reading is an
assumption: B × tokens per block, where the engine build's default tokens per block changed between releases
(`ENGINE_TOKENS_PER_BLOCK_ERAS`: 64 in 2023–2024 builds, 32 by v0.19; docs/engines/trtllm.md §4.2) and a log
that states neither its release nor its tokens per block leaves the product to the release kvtop takes."""

from __future__ import annotations

from kvtop.domain.capacity_assumption import CapacityAssumption, OtherReading, ReleaseSpan
from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.trtllm.budget import runtime
from kvtop.domain.engines.trtllm.eras import ENGINE_TOKENS_PER_BLOCK_ERAS, engine_tokens_per_block
from kvtop.domain.engines.trtllm.log_records import TrtllmRankLog
from kvtop.domain.engines.versions import Era, ResolvedVersion, VersionSource
from kvtop.domain.launch import LaunchSettings


def logged_tokens_per_block(log: EngineLog) -> int | None:
    """The tokens per block the log prints (`tokens_per_block`, or a blocks-per-sequence line's), or None."""
    return log.first(
        TrtllmRankLog,
        lambda r: (
            r.tokens_per_block[-1]
            if r.tokens_per_block
            else next((b.tokens_per_block for b in r.blocks_per_sequence if b.tokens_per_block), None)
        ),
    )


def _allocated(log: EngineLog) -> bool:
    """Whether the log prints an `Allocated … (N)` pool (its own capacity, no product needed)."""
    return any(rank.allocations for rank in log.ranks(TrtllmRankLog))


def primary_pool_assumption(
    log: EngineLog, settings: LaunchSettings, version: ResolvedVersion
) -> CapacityAssumption | None:
    """Which reading of `primary pool: B` blocks kvtop took, where the tokens per block are neither logged nor
    set and the release is not stated (`version` read from the log's wording or dates, or not at all): the
    engine build's default changed between releases (`ENGINE_TOKENS_PER_BLOCK_ERAS`), so the capacity is
    B × the default of the release taken, an assumption with the other readings (#2268: 631 × 32 = 20,192
    as ~0.19.0, 631 × 64 = 40,384 as 0.13)."""
    stated = (
        (version.source in (VersionSource.FLAG, VersionSource.ENDPOINT) and not version.approximate)  # not a build's day
        or (version.source == VersionSource.LOG and not version.approximate)
        or (version.source == VersionSource.NOT_STATED and settings.engine_version is not None)  # the caller's
    )
    if stated or settings.page_size or logged_tokens_per_block(log) or _allocated(log):
        return None
    if log.first(TrtllmRankLog, lambda r: r.legacy_pool_tokens or None) is not None:
        return None
    blocks = log.first(TrtllmRankLog, lambda r: r.primary_pool_blocks[-1] if r.primary_pool_blocks else None)
    resolved = ResolvedVersion(text=settings.engine_version)
    if blocks is None or runtime(settings, resolved) != "tensorrt":
        return None
    taken = engine_tokens_per_block(resolved)
    others = tuple(
        OtherReading(tokens_per_block=era.value, releases=_releases(era), tokens=blocks * era.value)
        for era in ENGINE_TOKENS_PER_BLOCK_ERAS
        if era.value != taken
    )  # fmt: skip
    if not others:
        return None
    return CapacityAssumption(
        blocks=blocks, tokens_per_block=taken, release=version.label, release_source=version.source,
        others=others, settle_flags=SETTLE_FLAGS,
    )  # fmt: skip


# the flags that make the reading a fact: the release, or the tokens per block (trtllm-serve's extra options)
SETTLE_FLAGS = ("--engine-version", "--kv_cache_config.tokens_per_block")


def _releases(era: Era[int]) -> ReleaseSpan:
    """The releases `era` covers: from its first (None: from the start) to where the next era starts (None: the
    latest era)."""
    eras = list(ENGINE_TOKENS_PER_BLOCK_ERAS)
    index = eras.index(era)
    return ReleaseSpan(first=era.since or None, next=eras[index + 1].since if index + 1 < len(eras) else None)
