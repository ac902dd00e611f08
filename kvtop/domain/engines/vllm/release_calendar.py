"""Which vLLM release printed a log: its version line, else V0's lines or a cache sized without v0.34.0's
'Memory after warmup' line, else its dates read against the release calendar.
"""

from __future__ import annotations

import json

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.versions import ReleaseDate, ResolvedVersion, VersionSource, resolve
from kvtop.domain.engines.vllm.extensible_kv import OFF_FIELDS, children_read, connector_off_in
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.engines.vllm.v0_charge import CALENDAR_BEFORE_06

# Release tags and the day each was first on PyPI (UTC), to map a log's date to a release.
CALENDAR: tuple[ReleaseDate, ...] = CALENDAR_BEFORE_06 + ReleaseDate.table("""
0.6.0 2024-09-05 0.6.1 2024-09-11 0.6.1.post1 2024-09-13 0.6.1.post2 2024-09-13 0.6.2 2024-09-25
0.6.3 2024-10-14 0.6.3.post1 2024-10-17 0.6.4 2024-11-15 0.6.4.post1 2024-11-15 0.6.5 2024-12-18
0.6.6 2024-12-27 0.6.6.post1 2024-12-27 0.7.0 2025-01-27 0.7.1 2025-02-01 0.7.2 2025-02-06 0.7.3 2025-02-20
0.8.0 2025-03-18 0.8.1 2025-03-19 0.8.2 2025-03-25 0.8.3 2025-04-06 0.8.4 2025-04-15 0.8.5 2025-04-28
0.8.5.post1 2025-05-02 0.9.0 2025-05-28 0.9.0.1 2025-05-30 0.9.1 2025-06-10 0.9.2 2025-07-08
0.10.0 2025-07-25 0.10.1 2025-08-19 0.10.1.1 2025-08-20 0.10.2 2025-09-13 0.11.0 2025-10-04
0.11.1 2025-11-19 0.11.2 2025-11-20 0.12.0 2025-12-03 0.13.0 2025-12-19 0.14.0 2026-01-20 0.14.1 2026-01-24
0.15.0 2026-01-29 0.15.1 2026-02-05 0.16.0 2026-02-26 0.17.0 2026-03-07 0.17.1 2026-03-11 0.18.0 2026-03-20
0.18.1 2026-03-31 0.19.0 2026-04-03 0.19.1 2026-04-18 0.20.0 2026-04-27 0.20.1 2026-05-03 0.20.2 2026-05-10
0.21.0 2026-05-15 0.22.0 2026-05-29 0.22.1 2026-06-05 0.23.0 2026-06-13 0.24.0 2026-06-30 0.25.0 2026-07-11
0.25.1 2026-07-14 0.26.0 2026-07-25 0.27.0 2026-08-10 0.27.1 2026-08-11 0.28.0 2026-08-26 0.29.0 2026-09-09
0.30.0 2026-09-22 0.31.0 2026-10-05 0.32.0 2026-10-18 0.33.0 2026-11-02 0.34.0 2026-11-16
""")

V0_RELEASE = "0.7.3"  # what a V0 log with no version line or date is read as (V0's defaults: 0.9, blocks)


def _v0_lines(log: EngineLog) -> bool:
    """V0's own lines: `# GPU blocks` / `# cuda blocks` with no `GPU KV cache size`, its profiling summary, or its
    refusal `The model's max seq len (L) is larger than … stored in KV cache (N)` (V1 words it `To serve at least
    one request …`)."""
    ranks = log.ranks(VllmRankLog)
    blocks = any(r.num_gpu_blocks for r in ranks) and not any(r.kv_cache_tokens for r in ranks)
    return blocks or any(r.v0_profiles or r.token_shortfalls for r in ranks)


# what a sized log without v0.34.0's 'Memory after warmup' line is read as, with no version line or date
PRE_EXTENSIBLE_RELEASE = "0.33.0"
# launch arguments under which v0.34.0 sizes the cache without the extensible KV cache, and so prints no 'Memory after
# warmup' line, are `extensible_kv.OFF_FIELDS`; a KV connector's config is asked of `extensible_kv.connector_off_in`
# (`_connector_may_turn_it_off`)
TRANSFER_ARG = "kv_transfer_config"


def _connector_may_turn_it_off(log: EngineLog) -> bool:
    """Whether the logged KV connector config turns the extensible cache off by default (`connector_off_in`: legacy
    CUDA IPC, a custom_mem_pool, NIXL's FABRIC export with no IMEX channel assumed); a value kvtop cannot read as a
    JSON object (log_facts turns KVTransferConfig's repr into one), or whose MultiConnector children it cannot read,
    may, so it counts as off."""
    text = log.server_args.get(TRANSFER_ARG)
    if text is None:
        return False
    try:
        transfer = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return True
    if not isinstance(transfer, dict) or not children_read(transfer):
        return True
    return connector_off_in(transfer, stated_on=False) is not None


def _sized_without_warmup_line(log: EngineLog) -> bool:
    """The cache was sized (`GPU KV cache size`) and no 'Memory after warmup' line came, which v0.34.0 prints whenever
    its default extensible KV cache sizes it (v1/worker/extensible_kv_cache.py:693-708): so a release before v0.34.0,
    unless the arguments turned the extensible cache off (or named it)."""
    ranks = log.ranks(VllmRankLog)
    sized = any(r.kv_cache_tokens for r in ranks)
    measured = any(r.warmup_sizings for r in ranks)
    off = any(key in log.server_args for key in OFF_FIELDS) or _connector_may_turn_it_off(log)
    return sized and not measured and not off


def resolve_version(log: EngineLog) -> ResolvedVersion:
    """The release whose rules read this log: its version line, else V0's lines (or a sized cache without v0.34.0's
    'Memory after warmup' line), else its dates."""
    hint = None
    if not log.release_version and not log.first_date and _sized_without_warmup_line(log):
        hint = ResolvedVersion(
            text=PRE_EXTENSIBLE_RELEASE,
            approximate=True,
            source=VersionSource.LOG,
            detail="the KV cache sized ('GPU KV cache size') with no 'Memory after warmup' line, which v0.34.0 prints "
            "under its default extensible KV cache (v1/worker/extensible_kv_cache.py:693-708): a release before "
            f"v0.34.0, read as {PRE_EXTENSIBLE_RELEASE}",
        )
    if not log.release_version and not log.first_date and _v0_lines(log):
        early_v1 = any(r.v1_gpu_blocks for r in log.ranks(VllmRankLog))
        hint = ResolvedVersion(
            text=V0_RELEASE,
            approximate=True,
            source=VersionSource.LOG,
            detail=(
                "early V1 lines (`kv_cache_utils.py] # GPU blocks`, before `GPU KV cache size` came): the V1 engine "
                "before v0.8.0 (opt-in), whose defaults (0.9, blocks × block size) are V0's"
                if early_v1
                else "V0 lines (`# GPU blocks`, `Memory profiling results`, or its `max seq len … larger than` "
                "refusal): the V0 engine (the default before v0.8.0)"
            ),
        )
    return resolve(
        engine_name="vLLM",
        stated=log.engine_version,
        stated_line=log.engine_version_line,
        hint=hint,
        first_date=log.first_date,
        calendar=CALENDAR,
    )
