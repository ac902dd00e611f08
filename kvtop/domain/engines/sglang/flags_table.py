"""How a row of SGLang's flag tables (flags_neutral.py, flags_unmodelled.py) is written and read.

The tables come from the wheels in `RELEASES_READ`: the argparse calls of `ServerArgs.add_cli_args`
(python/sglang/srt/server_args.py) and, from v0.5.14, the annotated fields `add_cli_args_from_dataclass` turns
into flags (srt/arg_groups/fields/*.py, srt/arg_groups/arg_utils.py). A release between two read ones is not read:
the span is what the read wheels show. flag_releases.py joins these tables and the rows of the flags kvtop reads
by release into one table, with the one reader that refuses a flag typed at a release without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

# every SGLang wheel whose command line was read for the tables (7 in session 51, b2; all 40 below in session 60, e:
# the same scan of add_argument calls and A[...] fields, which gives the session-51 rows back on its 7 wheels)
RELEASES_READ = (
    "0.4.0", "0.4.3", "0.4.3.post4", "0.4.4.post2", "0.4.6.post5", "0.4.9.post6", "0.4.10", "0.4.10.post1",
    "0.4.10.post2", "0.5.1", "0.5.1.post3", "0.5.2", "0.5.3", "0.5.3.post1", "0.5.4", "0.5.5", "0.5.5.post1",
    "0.5.5.post3", "0.5.6", "0.5.6.post2", "0.5.7", "0.5.8", "0.5.9", "0.5.10rc0", "0.5.10", "0.5.10.post1", "0.5.11",
    "0.5.12", "0.5.13", "0.5.14", "0.5.15", "0.5.15.post1", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21",
    "0.5.22", "0.5.23",
)  # fmt: skip


class FlagRow(NamedTuple):
    """The releases read that have one flag, and where the newest of them declares it."""

    first: str  # the first release read that has it
    last: str | None  # the last release read that has it; None: still in the newest read (v0.5.23)
    source: str  # file:line (release) under python/sglang/ of its argparse call or its annotated field
    negatable: bool = False  # argparse's BooleanOptionalAction: `--no-NAME` too


def spellings(table: Mapping[str, FlagRow]) -> frozenset[str]:
    """Every spelling of the table's flags: each flag, and `--no-NAME` of a negatable one."""
    return frozenset(
        spelling for flag, row in table.items() for spelling in (flag, "--no-" + flag[2:]) if spelling == flag or row.negatable
    )  # fmt: skip


def merged(groups: Iterable[Mapping[str, FlagRow]]) -> Mapping[str, FlagRow]:
    """One table of several groups' rows."""
    return {flag: row for group in groups for flag, row in group.items()}
