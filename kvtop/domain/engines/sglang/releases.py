"""Which SGLang release printed a log: a version line, else the printed `ServerArgs` fields, else the dates.

Each field's first release and each release's first day on PyPI were read at every release tag of
sgl-project/sglang (v0.4.0 … v0.5.18) and in the v0.5.19 … v0.5.23 wheels (docs/engines/sglang.md §14).
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.versions import (
    FIRST_RELEASE,
    Release,
    ReleaseDate,
    ResolvedVersion,
    VersionSource,
    parse_release,
    resolve,
)

# Release tags and the day each was first on PyPI (UTC), to map a log's date to a release.
_RELEASE_DAYS = """
0.4.0 2024-12-03 0.4.0.post1 2024-12-06 0.4.0.post2 2024-12-21 0.4.1 2024-12-25 0.4.1.post1 2024-12-27
0.4.1.post2 2024-12-29 0.4.1.post3 2024-12-29 0.4.1.post4 2025-01-05 0.4.1.post5 2025-01-11
0.4.1.post6 2025-01-15 0.4.1.post7 2025-01-20 0.4.2 2025-01-27 0.4.2.post1 2025-01-31 0.4.2.post2 2025-02-05
0.4.2.post3 2025-02-07 0.4.2.post4 2025-02-10 0.4.3 2025-02-14 0.4.3.post1 2025-02-17 0.4.3.post2 2025-02-17
0.4.3.post3 2025-03-06 0.4.3.post4 2025-03-06 0.4.4 2025-03-13 0.4.4.post1 2025-03-14 0.4.4.post2 2025-03-27
0.4.4.post3 2025-03-29 0.4.4.post4 2025-04-05 0.4.5 2025-04-07 0.4.5.post1 2025-04-16 0.4.5.post2 2025-04-20
0.4.5.post3 2025-04-22 0.4.6 2025-04-27 0.4.6.post1 2025-04-28 0.4.6.post2 2025-05-01 0.4.6.post3 2025-05-09
0.4.6.post4 2025-05-13 0.4.6.post5 2025-05-24 0.4.7 2025-06-10 0.4.7.post1 2025-06-16 0.4.8 2025-06-24
0.4.8.post1 2025-06-26 0.4.9 2025-07-06 0.4.9.post1 2025-07-09 0.4.9.post2 2025-07-12 0.4.9.post3 2025-07-22
0.4.9.post4 2025-07-26 0.4.9.post5 2025-07-28 0.4.9.post6 2025-07-29 0.4.10 2025-07-31 0.4.10.post1 2025-08-01
0.4.10.post2 2025-08-03 0.5.0rc0 2025-08-08 0.5.0rc1 2025-08-13 0.5.0rc2 2025-08-14 0.5.1 2025-08-23
0.5.1.post1 2025-08-24 0.5.1.post2 2025-08-25 0.5.1.post3 2025-08-27 0.5.2rc0 2025-09-01 0.5.2rc1 2025-09-02
0.5.2rc2 2025-09-05 0.5.2 2025-09-11 0.5.3rc0 2025-09-15 0.5.3rc2 2025-10-06 0.5.3 2025-10-06
0.5.3.post1 2025-10-09 0.5.3.post2 2025-10-15 0.5.3.post3 2025-10-16 0.5.4 2025-10-24 0.5.4.post1 2025-10-27
0.5.4.post2 2025-11-01 0.5.4.post3 2025-11-05 0.5.5 2025-11-06 0.5.5.post1 2025-11-10 0.5.5.post2 2025-11-12
0.5.5.post3 2025-11-17 0.5.6 2025-12-03 0.5.6.post1 2025-12-08 0.5.6.post2 2025-12-11 0.5.7 2026-01-01
0.5.8 2026-01-23 0.5.8.post1 2026-02-05 0.5.9 2026-02-23 0.5.10rc0 2026-03-27 0.5.10 2026-04-05
0.5.10.post1 2026-04-08 0.5.11 2026-05-05 0.5.12 2026-05-16 0.5.12.post1 2026-05-23 0.5.13 2026-06-11
0.5.13.post1 2026-06-15 0.5.14 2026-06-26 0.5.15 2026-07-10 0.5.15.post1 2026-07-14 0.5.16 2026-07-25
0.5.17 2026-08-08 0.5.18 2026-08-21 0.5.19 2026-09-04 0.5.20 2026-09-18 0.5.21 2026-10-01 0.5.22 2026-10-16
0.5.23 2026-10-30
"""
CALENDAR: tuple[ReleaseDate, ...] = ReleaseDate.table(_RELEASE_DAYS)

# Fields of the printed `server_args=ServerArgs(…)` that exist only from a release on (each field's first
# release; read with `ast` over `class ServerArgs` at every tag). The newest one present bounds the
# release from below; an absent field that a later release always prints bounds it from above.
_FIELD_SINCE = {
    "ep_size": "0.4.0.post1", "speculative_algorithm": "0.4.1.post4", "enable_hierarchical_cache": "0.4.2.post1",
    "reasoning_parser": "0.4.3.post3", "page_size": "0.4.4", "disaggregation_mode": "0.4.4.post2",
    "pp_size": "0.4.6.post2", "enable_eplb": "0.4.6.post5", "num_reserved_decode_tokens": "0.4.7.post1",
    "swa_full_tokens_ratio": "0.4.9.post3", "prefill_attention_backend": "0.4.9.post5",
    "moe_a2a_backend": "0.4.10.post2", "moe_runner_backend": "0.5.1", "max_mamba_cache_size": "0.5.2",
    "enable_deterministic_inference": "0.5.3rc2", "mamba_full_memory_ratio": "0.5.3.post2",
    "dllm_algorithm": "0.5.6", "language_only": "0.5.7", "admin_api_key": "0.5.8", "attn_cp_size": "0.5.9",
    "enable_hisparse": "0.5.10rc0", "tokenizer_backend": "0.5.11", "detokenizer_worker_num": "0.5.12",
    "dsa_prefill_backend": "0.5.13", "cuda_graph_config": "0.5.14", "dcp_size": "0.5.15",
    "mm_feature_transport": "0.5.16", "dcp_comm_backend": "0.5.17", "language_model_only": "0.5.18",
    "dsv4_prefill_backend": "0.5.19", "dsv4_attn_backend": "0.5.20", "boundary_reduction": "0.5.21",
    "attn_dp_size": "0.5.22", "enable_paged_experts": "0.5.23",
}  # fmt: skip


def _field_range(log: EngineLog) -> tuple[str, str | None] | None:
    """(oldest release, first release not possible) the printed arguments' fields allow; None: no whole line."""
    fields = set(log.server_args)
    if len(fields) < 20:  # not a whole ServerArgs line: absent fields say nothing
        return None
    present = [since for field, since in _FIELD_SINCE.items() if field in fields]
    if not present:
        return None
    low = max(present, key=_key)
    later_absent = [
        since for field, since in _FIELD_SINCE.items() if field not in fields and _key(since) > _key(low)
    ]
    return low, min(later_absent, key=_key, default=None)


def _key(text: str) -> Release:
    return parse_release(text) or FIRST_RELEASE


def resolve_version(log: EngineLog) -> ResolvedVersion:
    """The release whose rules read this log: a version line, else the printed argument fields (the
    newest release within them that the log's dates allow), else the log's dates."""
    found = _field_range(log)
    hint = None
    if found is not None:
        low, high = found
        dated = resolve(engine_name="SGLang", stated=None, stated_line=None, hint=None,
                        first_date=log.first_date, calendar=CALENDAR)  # fmt: skip
        text, detail = (
            low,
            f"from the printed server_args fields: SGLang {low} or later"
            + (f", before {high}" if high else ""),
        )
        if dated.text and _key(dated.text) >= _key(low) and (high is None or _key(dated.text) < _key(high)):
            text, detail = dated.text, f"{detail}; {dated.detail}"
        hint = ResolvedVersion(text=text, approximate=True, source=VersionSource.SERVER_ARGS, detail=detail)
    return resolve(
        engine_name="SGLang",
        stated=log.engine_version,
        stated_line=log.engine_version_line,
        hint=hint,
        first_date=log.first_date,
        calendar=CALENDAR,
    )
