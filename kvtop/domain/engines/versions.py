"""Engine versions: which release a log or a server is, how kvtop knows, and the rules of each era.

Engines change their defaults between releases (SGLang's automatic `mem_fraction_static`, vLLM's
default utilisation, what a log line prints). A rule that changed is a tuple of `Era`s, each with
the first release it holds for and the engine source it comes from; `era_for` picks the era of a
`ResolvedVersion`. A version nobody stated takes the latest era, and says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict

Release = tuple[int, int, int, int, int]
"""A release as a sortable key: (major, minor, patch, stage, n); stage −1 rc, 0 final, 1 post.
'v0.4.3.post2' is (0, 4, 3, 1, 2), '0.5.3rc2' is (0, 5, 3, −1, 2), '0.26' is (0, 26, 0, 0, 0)."""

_RELEASE = re.compile(r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?(?:\.?(rc|post)(\d{1,4}))?")
_STAGES = {"rc": -1, None: 0, "post": 1}
T = TypeVar("T")


def parse_release(text: str | None) -> Release | None:
    """The sortable key of '0.10.2', 'v0.26', '0.4.3.post2', '0.5.3rc2', '0.29.1rc1.dev17+g…', '≈0.4.6'."""
    if not text:
        return None
    match = _RELEASE.search(text[:80])
    if match is None:
        return None
    major, minor, patch, stage, number = match.groups()
    return (int(major), int(minor), int(patch or 0), _STAGES[stage], int(number or 0))


#: what a header prints for no stated version, and what `--engine-version latest` asks for
LATEST = "latest"

class VersionSource(str, Enum):
    """How kvtop knows which release of the engine it is looking at."""

    FLAG = "flag"  # --engine-version
    LOG = "log"  # a version line in the log (banner, `server version`, `LLM engine (vX)`)
    ENDPOINT = "endpoint"  # the running server said it (/version, server info)
    SERVER_ARGS = "server_args"  # the printed arguments hold fields only some releases have
    LOG_DATES = "log_dates"  # the log's dates, mapped to the release out then
    NOT_STATED = "not_stated"  # nothing said it: the latest rules apply


class ResolvedVersion(BaseModel):
    """The engine release whose rules apply, and why kvtop believes it."""

    model_config = ConfigDict(frozen=True)

    text: str | None = None  # as stated ('0.8.2'); None when not stated
    approximate: bool = False  # inferred (from dates or argument fields), not printed
    source: VersionSource = VersionSource.NOT_STATED
    detail: str = "version not stated: the latest release's rules"

    @property
    def release(self) -> Release | None:
        return parse_release(self.text)

    @property
    def label(self) -> str:
        """'0.8.2', '~0.4.6', or 'latest' — for one-line reports."""
        if self.text is None:
            return LATEST
        return f"~{self.text}" if self.approximate else self.text


NOT_STATED = ResolvedVersion()


@dataclass(frozen=True)
class Era(Generic[T]):
    """One era of a rule: its value from release `since` on, and where in the engine it comes from."""

    since: str  # the first release that has it ('0.4.5.post3'); "" for "from the start"
    value: T
    source: str  # engine file and function, or the PR that changed it


def era_for(eras: Sequence[Era[T]], version: ResolvedVersion) -> Era[T]:
    """The era in force at `version` (eras in release order); not stated: the latest era."""
    release = version.release
    if release is None:
        return eras[-1]
    current = eras[0]
    for era in eras:
        if release >= (parse_release(era.since) or (0, 0, 0, 0, 0)):
            current = era
    return current


@dataclass(frozen=True)
class ReleaseDate:
    """A release and the day it was tagged."""

    release: str
    day: date

    @classmethod
    def table(cls, text: str) -> tuple[ReleaseDate, ...]:
        """Releases from 'release YYYY-MM-DD release YYYY-MM-DD …' (whitespace-separated pairs), in date order."""
        words = text.split()
        pairs = [
            cls(release=words[i], day=date.fromisoformat(words[i + 1])) for i in range(0, len(words) - 1, 2)
        ]
        return tuple(sorted(pairs, key=lambda entry: entry.day))


def release_on(calendar: Sequence[ReleaseDate], day: date) -> str | None:
    """The newest release tagged on or before `day` (calendar in date order); None before the first."""
    found: str | None = None
    for entry in calendar:
        if entry.day <= day:
            found = entry.release
    return found


def from_flag(text: str, calendar: Sequence[ReleaseDate] = ()) -> ResolvedVersion:
    """The release `--engine-version` names; outside the releases kvtop models (`calendar`), it says
    which rules apply instead: the newest's above them, the oldest era's below."""
    detail = f"--engine-version {text}"
    release = parse_release(text)
    known = [key for day in calendar if (key := parse_release(day.release)) is not None]
    if release is not None and known:
        newest, oldest = max(known), min(known)
        if release > newest:
            name = next(day.release for day in calendar if parse_release(day.release) == newest)
            detail += f" (newer than {name}, the newest release kvtop models: its rules apply)"
        elif release < oldest:
            name = next(day.release for day in calendar if parse_release(day.release) == oldest)
            detail += f" (older than {name}, the oldest release kvtop models: the oldest rules apply)"
    return ResolvedVersion(text=text, source=VersionSource.FLAG, detail=detail)


def from_dates(calendar: Sequence[ReleaseDate], first_day: date, engine_name: str) -> ResolvedVersion:
    """The release out on the log's first date (the engine could be older, never newer)."""
    release = release_on(calendar, first_day)
    if release is None:
        return NOT_STATED
    return ResolvedVersion(
        text=release,
        approximate=True,
        source=VersionSource.LOG_DATES,
        detail=f"from the log's dates: {first_day.isoformat()} → {engine_name} {release} or older",
    )


def resolve(
    *,
    engine_name: str,
    stated: str | None,
    stated_line: int | None,
    hint: ResolvedVersion | None,
    first_date: str | None,
    calendar: Sequence[ReleaseDate],
) -> ResolvedVersion:
    """The version a log's rules come from, best evidence first: a line that states it, what the
    log's own lines imply (`hint`), the log's first date, else not stated (the latest rules)."""
    if stated:
        where = f"log line {stated_line}" if stated_line else "the log"
        return ResolvedVersion(
            text=stated, source=VersionSource.LOG, detail=f"from {where}: {engine_name} {stated}"
        )
    if hint is not None:
        return hint
    if first_date:
        try:
            day = date.fromisoformat(first_date)
        except ValueError:
            return NOT_STATED
        return from_dates(calendar, day, engine_name)
    return NOT_STATED
