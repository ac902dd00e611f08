"""vLLM's rules that changed between releases: each era with the first release it holds for and its
source (docs/engines/vllm.md §2, §5, §9), and how a log says which release printed it.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.versions import (
    Era,
    ReleaseDate,
    ResolvedVersion,
    VersionSource,
    era_for,
    resolve,
)
from kvtop.domain.engines.vllm.log_records import VllmRankLog

DEFAULT_UTILIZATION_ERAS: tuple[Era[float], ...] = (
    Era((), 0.9, "vllm/config/cache.py CacheConfig.gpu_memory_utilization = 0.9"),
    Era(
        (0, 21),
        0.92,
        "PR #38284 (2026-04-21, v0.21.0): CUDA-graph memory profiling on by default, 0.9 → 0.92",
    ),
)

TokenPrint = Literal["concurrency", "blocks", "either"]
# `GPU KV cache size: N tokens` (§5 History). v0.21.0 shipped PR #38284 of 2026-04-21, before #41069
# (2026-04-28); whether any v0.21.x carries #41069 is not known, so a v0.21.x log is "either".
TOKEN_PRINT_ERAS: tuple[Era[TokenPrint], ...] = (
    Era((), "blocks", "vllm/v1/core/kv_cache_utils.py: num_blocks // len(groups) × block_size (× dcp)"),
    Era(
        (0, 21),
        "either",
        "v0.21.x: released around PR #41069 (2026-04-28); which print it carries is not known",
    ),
    Era(
        (0, 22), "concurrency", "PR #41069 (2026-04-28): int(num_blocks / blocks_per_request × max_model_len)"
    ),
)

# Release tags and their dates (github.com/vllm-project/vllm/releases), to map a log's date to a release.
CALENDAR: tuple[ReleaseDate, ...] = ()

V0_SINCE_RELEASE = "0.7"  # what a V0 log with no version line is read as (V0's last defaults: 0.9, blocks)


def default_utilization(version: ResolvedVersion) -> tuple[float, str]:
    """vLLM's default gpu_memory_utilization for its version (not stated: the current default)."""
    era = era_for(DEFAULT_UTILIZATION_ERAS, version)
    if version.text is None:
        return (
            era.value,
            f"default {era.value:g} (0.9 before v0.21; give --engine-version for an older server)",
        )
    return era.value, f"default of vLLM {version.label}: {era.value:g} ({era.source})"


def token_print_rule(version: ResolvedVersion) -> TokenPrint:
    """Which expression `GPU KV cache size: N tokens` prints in this version (not stated: the current)."""
    return era_for(TOKEN_PRINT_ERAS, version).value


def _v0_lines(log: EngineLog) -> bool:
    """V0's own lines: `# GPU blocks` / `# cuda blocks` with no `GPU KV cache size`, or its profiling summary."""
    ranks = log.ranks(VllmRankLog)
    blocks = any(r.num_gpu_blocks for r in ranks) and not any(r.kv_cache_tokens for r in ranks)
    return blocks or any(r.v0_profiles for r in ranks)


def resolve_version(log: EngineLog) -> ResolvedVersion:
    """The release whose rules read this log: its version line, else V0's lines, else its dates."""
    hint = None
    if not log.engine_version and _v0_lines(log):
        hint = ResolvedVersion(
            text=V0_SINCE_RELEASE,
            approximate=True,
            source=VersionSource.LOG,
            detail="V0 lines (`# GPU blocks`, `Memory profiling results`): the V0 engine, before v0.8's V1 default",
        )
    return resolve(
        engine_name="vLLM",
        stated=log.engine_version,
        stated_line=log.engine_version_line,
        hint=hint,
        first_date=log.first_date,
        calendar=CALENDAR,
    )
