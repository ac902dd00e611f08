"""Which SGLang releases have each flag, in one table, and the one reader that refuses a flag typed at a release
without it (docs/engines/sglang.md §5).

The table is the 40-wheel flag tables (flags_table.RELEASES_READ: flags_unmodelled.py, flags_neutral.py) and, in
`READ`, the rows of the flags kvtop reads whose span is shorter than the releases read, written the same way: a flag's
first and last release live in its row alone. A release before the first one read (v0.4.0) is not known, so not
refused; a release after a flag's last one is refused from the next release read (a release between two reads takes
the earlier read); an estimated release is not checked (the launch's log says the engine took the flag).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engines.sglang.flags_neutral import NEUTRAL_GROUPS
from kvtop.domain.engines.sglang.flags_table import RELEASES_READ, FlagRow, merged
from kvtop.domain.engines.sglang.flags_unmodelled import UNMODELLED
from kvtop.domain.engines.versions import Release, ResolvedVersion, parse_release
from kvtop.domain.errors import InputError

_EXEC = "srt/arg_groups/fields/exec_.py"
# the flags kvtop reads whose first or last release is inside the releases read (the wheels' argparse calls)
READ: Mapping[str, FlagRow] = {
    "--enable-deterministic-inference": FlagRow("0.5.3", None, "srt/server_args.py:2826 (v0.5.3); "
                                                 f"{_EXEC}:1153 (v0.5.23)"),  # prefill_graphs_off.py
    "--enable-dp-lm-head": FlagRow("0.4.6.post5", None, "srt/server_args.py:169 (v0.4.6.post5); "
                                   "srt/arg_groups/fields/parallel.py:199 (v0.5.23)"),  # vocab_launch.py
    "--cuda-graph-backend-decode": FlagRow("0.5.14", None, f"srt/server_args.py:1925 (v0.5.14); {_EXEC}:613 (v0.5.23)"),
    "--cuda-graph-backend-prefill": FlagRow("0.5.14", None, f"srt/server_args.py:1932 (v0.5.14); {_EXEC}:621 (v0.5.23)"),
    "--cuda-graph-bs": FlagRow("0.4.3", "0.5.19", "srt/server_args.py:852 (v0.4.3) … :6367 (v0.5.14, an alias of "
                               "--cuda-graph-bs-decode) … :3937 (v0.5.19); none at v0.4.0 or from v0.5.20"),
    "--cuda-graph-bs-decode": FlagRow("0.5.14", None, f"srt/server_args.py:1947 (v0.5.14); {_EXEC}:640 (v0.5.23)"),
    "--cuda-graph-max-bs": FlagRow("0.4.0", "0.5.19", "srt/server_args.py:691 (v0.4.0) … :6507 (v0.5.13); an alias of "
                                   "--cuda-graph-max-bs-decode :6358 (v0.5.14) … :3928 (v0.5.19); from v0.5.20 argparse's "
                                   "prefix match finds -decode and -prefill (:701): 'ambiguous option'"),
    "--cuda-graph-max-bs-decode": FlagRow("0.5.14", None, f"srt/server_args.py:1939 (v0.5.14); {_EXEC}:629 (v0.5.23)"),
    "--disable-decode-cuda-graph": FlagRow("0.5.14", None, f"srt/server_args.py:1963 (v0.5.14); {_EXEC}:666 (v0.5.23)"),
    "--disable-prefill-cuda-graph": FlagRow("0.5.14", None, f"srt/server_args.py:1959 (v0.5.14); {_EXEC}:662 (v0.5.23)"),
    "--decode-attention-backend": FlagRow("0.4.9.post5", None, "srt/server_args.py:1229-1255 (v0.4.9.post5; none in "
                                          "v0.4.9.post4); srt/arg_groups/fields/exec_.py:215-230 (v0.5.23)"),
    "--prefill-attention-backend": FlagRow("0.4.9.post5", None, "srt/server_args.py:1229-1255 (v0.4.9.post5; none in "
                                           "v0.4.9.post4); srt/arg_groups/fields/exec_.py:215-230 (v0.5.23)"),
    # mamba_slots.py reads both (moved from flags_unmodelled_late.py, their rows as generated from the wheels)
    "--mamba-full-memory-ratio": FlagRow("0.5.4", None, "srt/arg_groups/fields/schedule.py:220 (v0.5.23)"),
    "--max-mamba-cache-size": FlagRow("0.5.2", None, "srt/arg_groups/fields/schedule.py:216 (v0.5.23)"),
    # ssm_dtype.py reads it (moved from flags_unmodelled_late.py; none at 0.5.1.post3)
    "--mamba-ssm-dtype": FlagRow("0.5.2", None, "srt/server_args.py:1732-1737 (v0.5.2); "
                                 f"{_EXEC}:490 (v0.5.23)"),
    "--enable-piecewise-cuda-graph": FlagRow("0.5.4", "0.5.13", "srt/server_args.py:2976 (v0.5.4) … :6665 (v0.5.13); "
                                             "none at v0.5.3.post1 or v0.5.14"),
}  # fmt: skip
_NEUTRAL: Mapping[str, FlagRow] = merged(group for _, group in NEUTRAL_GROUPS.values())
FLAG_RELEASES: Mapping[str, FlagRow] = merged((UNMODELLED, _NEUTRAL, READ))
_READ_RELEASES = tuple((text, key) for text in RELEASES_READ if (key := parse_release(text)) is not None)
_FIRST_READ = _READ_RELEASES[0][1]


def _gone(last: str) -> tuple[str, Release] | None:
    """The first release read after `last` (None: `last` is the newest read)."""
    end = parse_release(last)
    return next(((text, key) for text, key in _READ_RELEASES if end is not None and key > end), None)


def missing_reason(flag: str, version: ResolvedVersion) -> str | None:
    """Why `version` has no `flag` ('first in v0.5.14: …'), or None where it has it, the row is unknown, or the
    release is not known exactly."""
    row, release = FLAG_RELEASES.get(flag), version.release
    if row is None or release is None or version.approximate:
        return None
    first = parse_release(row.first)
    if first is not None and first != _FIRST_READ and release < first:
        return f"first in v{row.first}: {row.source}"
    gone = _gone(row.last) if row.last else None
    if gone is not None and release >= gone[1]:
        return f"last in v{row.last}, none in v{gone[0]}: {row.source}"
    return None


def check_flag_release(flag: str, version: ResolvedVersion, instead: str = "") -> None:
    """Refuse `flag`, typed, at a release that has no such flag (`instead`: what to type there)."""
    reason = missing_reason(flag, version)
    if reason is not None:
        raise InputError(f"SGLang {version.label} has no {flag} ({reason}){instead}", field=flag)


def check_neutral_flag_releases(flags: Mapping[str, object], version: ResolvedVersion) -> None:
    """Refuse a memory-neutral flag (flags_neutral.py) typed at a release whose argparse has no such flag: SGLang
    stops on it ('unrecognized arguments') before it sizes anything, so a plan would be of a launch that never
    starts. (No neutral flag is negatable: each is typed as its row names it.)"""
    for key in flags:
        if "--" + key in _NEUTRAL:
            check_flag_release("--" + key, version)
