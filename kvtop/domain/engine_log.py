"""What an engine's startup log says, as frozen values (parsed by `kvtop.sources.engine_logs`).

Every memory figure the engines print is bytes / 2**30, whatever the label ("GB" in SGLang,
"GiB" in vLLM, "GB" in old vLLM), and it is rounded, so a figure is kept as `Measured`: the bytes
it stands for and the interval of bytes that print the same text. Counts are exact ints. Each rank
keeps its own values in printed order, as its engine's `RankLog` subclass; `EngineLog` holds them
all, and `ranks(SglangRankLog)` hands an engine package back its own records, typed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, SerializeAsAny

from kvtop.domain.engine_log_records import Measured, RankKey, RankLog, Rounded, StartupFailure
from kvtop.domain.engines.catalogue import EngineId, display_name, display_names
from kvtop.domain.engines.versions import names_no_release, reported_release
from kvtop.domain.errors import InputError

ArgValue = str | int | float | bool | None

_R = TypeVar("_R", bound=RankLog)
_T = TypeVar("_T")

__all__ = [
    "ArgValue",
    "EngineLog",
    "LogText",
    "Measured",
    "RankKey",
    "RankLog",
    "RankedValue",
    "Rounded",
    "StartupFailure",
    "first_over_ranks",
    "min_over_ranks",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RankedValue(_Frozen):
    """A value together with the rank that printed it."""

    rank: RankKey
    value: Measured


def first_over_ranks(ranks: Sequence[_R], pick: Callable[[_R], _T | None]) -> _T | None:
    """The first non-None `pick(rank)` in rank order (unranked first, then DP/PP/TP/EP)."""
    for rank in ranks:
        value = pick(rank)
        if value is not None:
            return value
    return None


def min_over_ranks(values: Iterable[tuple[RankKey, Measured | None]]) -> RankedValue | None:
    """The smallest figure over ranks (what SGLang's MIN all-reduce would see), with its rank."""
    best: RankedValue | None = None
    for rank, value in values:
        if value is not None and (best is None or value.value_bytes < best.value.value_bytes):
            best = RankedValue(rank=rank, value=value)
    return best


class LogText(str, Enum):
    """What a log file holds before any engine's line is looked for: an empty or blank file is its own state, never
    "no … startup lines" (C06's engine.log is one newline: `kvtop explain` said it held no engine's lines)."""

    TEXT = "text"
    EMPTY = "empty"  # not one byte
    BLANK = "blank"  # whitespace only

    @classmethod
    def of(cls, text: str) -> LogText:
        if not text:
            return cls.EMPTY
        return cls.TEXT if text.strip() else cls.BLANK

    @property
    def said(self) -> str | None:
        """'no text (the file is empty)', 'no text (blank lines only)'; None for a file with text."""
        return {LogText.EMPTY: "no text (the file is empty)", LogText.BLANK: "no text (blank lines only)"}.get(self)


class EngineLog(_Frozen):
    """A parsed startup log: engine, settings, and each rank's printed figures."""

    source: str = "<log>"
    engine: EngineId | None = None
    engine_version: str | None = None
    engine_version_line: int | None = None  # the physical line (1-based) that stated the version
    first_date: str | None = None  # the first date a line carries (ISO, 'YYYY-MM-DD'), for the version era
    model_path: str | None = None
    server_args: dict[str, ArgValue] = {}
    """SGLang `server_args=ServerArgs(…)`, vLLM `non-default args: {…}` or `Namespace(…)`."""
    engine_config: dict[str, ArgValue] = {}
    """vLLM `Initializing a V1 LLM engine (vX) with config: k=v, …`."""
    launch_command: str | None = None
    """A launch command pasted into the log (continuation lines joined), verbatim."""
    decisions: tuple[str, ...] = ()
    """Decisions the engine printed that change sizing (`disable_hybrid_swa_memory`, `page_size=64`…),
    as `field=value` for LaunchSettings fields."""
    desktop: str | None = None
    """Why the log proves a desktop shares the card (a line only an engine's Windows build prints): explain reads
    it as `--desktop` says it (`MeasuredInputs.desktop`), measured rather than said."""
    records: tuple[SerializeAsAny[RankLog], ...] = ()
    """Every rank's printed figures, of every engine whose lines appear (each its own record type)."""
    lines_total: int = 0
    lines_parsed: int = 0
    """Physical lines that gave at least one value."""
    unrecognised_engine_lines: int = 0
    """Lines with an engine prefix (`[… TP0]`, `INFO mm-dd …`, `(… pid=N)`) that gave nothing."""
    lines_by_engine: dict[EngineId, int] = {}
    """Lines recognised as each engine's (a value or a launch command was read from them)."""
    startup_failures: tuple[StartupFailure, ...] = ()
    """Error lines showing the engine refused to start, in printed order."""
    cut_at_bytes: int | None = None
    """The log was longer than kvtop reads: only its first `cut_at_bytes` bytes were parsed."""
    content: LogText = LogText.TEXT
    """Whether the file held any text at all (an empty or blank file is said so, not as a foreign file)."""

    @property
    def release_version(self) -> str | None:
        """The release the stated version names (`reported_release`); None for a source build's `0.1.dev7548+g…`
        or a text that starts with no release."""
        return None if names_no_release(self.engine_version) else reported_release(self.engine_version)

    def recognised_lines(self, engine: EngineId) -> int:
        """How many lines were recognised as `engine`'s."""
        return self.lines_by_engine.get(engine, 0)

    @property
    def startup_error(self) -> str | None:
        """The most specific error of a refused start (an exception over `failed to start`)."""
        failures = [failure.text for failure in self.startup_failures]
        return next((text for text in failures if "Error:" in text), failures[0] if failures else None)

    @property
    def no_startup_lines(self) -> str | None:
        """'no SGLang, vLLM … startup lines' where no line is any engine's (a binary or foreign file), 'no text (the file
        is empty)' where it holds none (`LogText`), else None: the one wording of `kvtop explain`'s refusal
        (`engine_for`) and of `--engine-log`'s notice."""
        if any(self.lines_by_engine.values()):
            return None
        return self.content.said or f"no {display_names()} startup lines"

    def engine_for(self, requested: EngineId | None = None) -> EngineId:
        """The engine whose rules explain this log: `requested`, unless the log is clearly another's.

        A log with no recognised line of any engine, or whose lines are all another engine's, is an
        `InputError` (one line) rather than an explanation of nothing.
        """
        if self.no_startup_lines is not None:
            raise InputError(self.no_startup_lines, field="log", source=self.source, value_is_file=True)
        seen = {engine: count for engine, count in self.lines_by_engine.items() if count}
        if requested is None:
            return self.engine or max(seen, key=lambda engine: seen[engine])
        if self.recognised_lines(requested) == 0:
            other = max(seen, key=lambda engine: seen[engine])
            raise InputError(
                f"the lines of {self.source} are {display_name(other)}'s ({seen[other]} recognised, "
                f"none {display_name(requested)}'s): pass --engine {other} or leave --engine out",
                field="--engine",
            )
        return requested

    @property
    def prefix_tp(self) -> tuple[int, tuple[int, ...]] | None:
        """The TP size the rank prefixes name, the highest `TPn` + 1 (ranks count from 0: `[… TP7]` means at least 8;
        an excerpt may leave ranks out, never add one), with the TP ranks seen; None where no prefix names TP1 or
        more."""
        seen = sorted({record.rank.tp for record in self.records if record.rank.tp is not None})
        return (seen[-1] + 1, tuple(seen)) if seen and seen[-1] > 0 else None

    def ranks(self, kind: type[_R]) -> tuple[_R, ...]:
        """The records of one engine's kind (`SglangRankLog`, `VllmRankLog`…), in rank order."""
        return tuple(record for record in self.records if isinstance(record, kind))

    def first(self, kind: type[_R], pick: Callable[[_R], _T | None]) -> _T | None:
        """`pick` from the first rank of `kind` that has it."""
        return first_over_ranks(self.ranks(kind), pick)

    def least(self, kind: type[_R], pick: Callable[[_R], Measured | None]) -> RankedValue | None:
        """The smallest `pick` over the ranks of `kind`, with the rank that printed it."""
        return min_over_ranks((record.rank, pick(record)) for record in self.ranks(kind))

    def rank_record(self, kind: type[_R], rank: RankKey) -> _R | None:
        """The record of `kind` that `rank` printed, if any."""
        return next((record for record in self.ranks(kind) if record.rank == rank), None)
