"""How a row of vLLM's flag tables (flags_neutral.py, flags_unmodelled.py) is written and read: the releases read,
the span of releases that have a flag, and the refusal of a flag the launch's release does not have.

The tables come from the argparse calls of each wheel in `RELEASES_READ` (vllm/engine/arg_utils.py and the OpenAI
server's cli_args.py); a release between two read ones is not known to lack a flag, so only a release at or before
the last read one without it (or at or after the first read one that dropped it) is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from kvtop.domain.engines.versions import parse_release
from kvtop.domain.errors import InputError

# every vLLM wheel whose command line was read for the tables (session 51): v0.14.x, v0.16–v0.18 and v0.31.0 were not.
# v0.34.0 (session 59): engine/arg_utils.py and entrypoints/*/cli_args.py add seven flags and drop none.
# v0.11.1 (session 58): every file of its wheel with an argparse call (engine/arg_utils.py, entrypoints/openai/
# cli_args.py, …) is byte-identical to v0.11.2's, so a flag first read at v0.11.2 is first at v0.11.1
RELEASES_READ = (
    "0.6.3.post1", "0.6.4", "0.6.4.post1", "0.6.5", "0.7.1", "0.7.3", "0.8.0", "0.8.5.post1", "0.9.0", "0.9.1",
    "0.9.2", "0.10.0", "0.10.1", "0.10.1.1", "0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.13.0", "0.15.1", "0.19.0",
    "0.20.0", "0.20.1", "0.21.0", "0.22.0", "0.23.0", "0.24.0", "0.25.0", "0.26.0", "0.27.0", "0.27.1", "0.28.0",
    "0.29.0", "0.30.0", "0.32.0", "0.33.0", "0.34.0",
)  # fmt: skip


class FlagSpan(NamedTuple):
    """The releases read that have one flag, and where the newest of them declares it."""

    first: str  # the first release read that has it
    last: str | None  # the last release read that has it; None: still in the newest read (v0.34.0)
    source: str  # file:line (release) under vllm/ of its argparse call or its dataclass field
    negatable: bool = False  # a bool field: argparse's BooleanOptionalAction takes `--no-NAME` too


def spellings(table: Mapping[str, FlagSpan]) -> frozenset[str]:
    """Every spelling of the table's flags: each flag, and `--no-NAME` of a negatable one."""
    return frozenset(
        spelling for flag, span in table.items() for spelling in (flag, "--no-" + flag[2:]) if spelling == flag or span.negatable
    )  # fmt: skip


def row_of(table: Mapping[str, FlagSpan], spelling: str) -> tuple[str, FlagSpan] | None:
    """(flag, its row) for a spelling as vLLM's parser reads it (`--no-NAME` of a negatable `--NAME`), or None."""
    if spelling in table:
        return spelling, table[spelling]
    flag = "--" + spelling.removeprefix("--no-")
    span = table.get(flag) if spelling.startswith("--no-") else None
    return (flag, span) if span is not None and span.negatable else None


def _neighbour(release: str, step: int) -> str | None:
    index = RELEASES_READ.index(release) + step
    return RELEASES_READ[index] if 0 <= index < len(RELEASES_READ) else None


def missing_at(flag: str, span: FlagSpan, version: str) -> str | None:
    """Why vLLM `version` has no `flag` (its argparse rejects it: "unrecognized arguments"), or None where it has it
    or no read release says it lacks it."""
    at = parse_release(version)
    before = _neighbour(span.first, -1)  # the newest read release without it, before it came
    after = (
        _neighbour(span.last, 1) if span.last is not None else None
    )  # the first read release after it went
    if at is None:
        return None
    if before is not None and at <= (parse_release(before) or at):
        return f"vLLM {version} has no {flag} (first in v{span.first} of the releases read; {span.source})"
    if after is not None and span.last is not None and at >= (parse_release(after) or at):
        return f"vLLM {version} has no {flag} (last in v{span.last} of the releases read; gone in v{after})"
    return None


def refuse_missing(flags: Mapping[str, object], version: str, table: Mapping[str, FlagSpan]) -> None:
    """The first of the launch's flags (keyed as LaunchSettings keeps them, without dashes; a dotted `--a.b` by its
    `--a`, `-cc.b` by its `-cc`) whose row in `table` says the release lacks it (`missing_at`): InputError naming it as
    typed, as vLLM's argparse rejects it ("unrecognized arguments")."""
    for name in flags:
        head = name.partition(".")[0]
        for dashes in ("--", "-"):
            found = row_of(table, dashes + name) or row_of(table, dashes + head)
            why = missing_at(found[0], found[1], version) if found is not None else None
            if why is not None:
                raise InputError(why, field=dashes + name)
            if found is not None:
                break


def merged(groups: Iterable[Mapping[str, FlagSpan]]) -> Mapping[str, FlagSpan]:
    """One table of several groups' rows."""
    return {flag: span for group in groups for flag, span in group.items()}
