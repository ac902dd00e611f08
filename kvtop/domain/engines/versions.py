"""Engine versions: which release a log or a server is, how kvtop knows, and the rules of each era.

Engines change their defaults between releases (SGLang's automatic `mem_fraction_static`, vLLM's
default utilisation, what a log line prints). A rule that changed is a tuple of `Era`s, each with
the first release it holds for and the engine source it comes from; `era_for` picks the era of a
`ResolvedVersion`. A version nobody stated takes the latest era, and says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from enum import Enum
from functools import lru_cache
from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from kvtop.domain.redact import quoted

Release = tuple[int, int, int, int, int, int, int, int]
"""A release as a sortable key, in PEP 440 order: (major, minor, micro, fourth, pre stage, pre number,
post number, dev number). Pre stage: −4 a dev build of the release itself (`0.13.0.dev2024082000`),
−3 alpha, −2 beta, −1 rc, 0 none; post −1 when none; dev `NO_DEV` when none, so that
`0.6.4.dev3 < 0.6.4rc1.dev2 < 0.6.4rc1 < 0.6.4 < 0.6.4.post1.dev1 < 0.6.4.post1`. A local part
(`+gbaba038`) does not order."""

_RELEASE = re.compile(
    r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?(?:\.(\d{1,4}))?"
    r"(?:[-_.]?(alpha|a|beta|b|rc)[-_.]?(\d{0,4})(?![a-z]))?"
    r"(?:[-_.]?post[-_.]?(\d{0,4})(?![a-z]))?"
    r"(?:[-_.]?dev[-_.]?(\d{0,12})(?![a-z]))?"
    r"(?:\+([a-z0-9][a-z0-9.]{0,60}))?",
    re.IGNORECASE,
)
_PRE_STAGES = {"a": -3, "alpha": -3, "b": -2, "beta": -2, "rc": -1}
_DEV_ONLY = -4
NO_DEV = 1 << 40
FIRST_RELEASE: Release = (0, 0, 0, 0, _DEV_ONLY, 0, -1, 0)
"""Below every release: the key of an era that holds "from the start"."""
T = TypeVar("T")


@lru_cache(maxsize=4096)
def parse_release(text: str | None) -> Release | None:
    """The PEP 440 sortable key of '0.10.2', 'v0.26', '0.4.3.post2', '0.5.3rc2', '0.9.0.1',
    '0.29.1rc1.dev17+g…', '0.13.0.dev2024082000', '≈0.4.6' (the first release-like text in it). Cached: a pure
    function of the text (a tuple), asked for every era of every table at every release a plan reads."""
    if not text:
        return None
    match = _RELEASE.search(text[:80])
    if match is None:
        return None
    major, minor, micro, fourth, pre, pre_n, post, dev, _ = match.groups()
    stage = _PRE_STAGES[pre.lower()] if pre else 0
    if stage == 0 and post is None and dev is not None:
        stage = _DEV_ONLY
    return (
        int(major), int(minor), int(micro or 0), int(fourth or 0),
        stage, int(pre_n or 0), -1 if post is None else int(post or 0), NO_DEV if dev is None else int(dev or 0),
    )  # fmt: skip


def names_no_release(text: str | None) -> bool:
    """A source build whose version names no release: setuptools-scm's fallback for a checkout without
    tags (`0.1.dev7548+gbaba038`, `0.0.0.dev0`): its number says nothing of the code it was built from."""
    match = _RELEASE.search(text[:80]) if text else None
    if match is None:
        return False
    major, minor, micro, fourth, pre, _, post, dev, _ = match.groups()
    base = (int(major), int(minor), int(micro or 0), int(fourth or 0))
    return dev is not None and pre is None and post is None and base in ((0, 1, 0, 0), (0, 0, 0, 0))


_DIRTY_DATE = re.compile(r"\+[\w.]{0,60}?\bd(20\d\d)([01]\d)([0-3]\d)\b")


def build_date(text: str | None) -> str | None:
    """The day a source build was made, where its version says (setuptools-scm's `.dYYYYMMDD` of a build from
    a modified checkout, `0.1.dev8331+g74e7551.d20250806`), as ISO; None when it does not."""
    match = _DIRTY_DATE.search(text[:120]) if text else None
    if match is None:
        return None
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3))).isoformat()
    except ValueError:
        return None


#: what a header prints for no stated version, and what `--engine-version latest` asks for
LATEST = "latest"

class VersionSource(str, Enum):
    """How kvtop knows which release of the engine it is looking at."""

    FLAG = "flag"  # --engine-version
    LOG = "log"  # a version line in the log (banner, `server version`, `LLM engine (vX)`)
    ENDPOINT = "endpoint"  # the running server said it (/version, server info)
    # the running server reported a version that names no release kvtop reads ('dev', ''; a source build's
    # '0.1.dev7548+g…'): a named state, the latest rules apply, never read as an `--engine-version`
    ENDPOINT_UNREAD = "endpoint_unread"
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
    # the rules picked where they are keyed by something other than a release (llama.cpp's builds: 'b3673',
    # 'builds before b5400'); `text` stays None, so rules keyed by release stay the latest
    build: str | None = None

    @property
    def release(self) -> Release | None:
        return parse_release(self.text)

    @property
    def label(self) -> str:
        """'0.8.2', '~0.4.6', 'b3673', 'builds before b5400', or 'latest' — for one-line reports."""
        if self.text is None:
            return self.build or LATEST
        return f"~{self.text}" if self.approximate else self.text


NOT_STATED = ResolvedVersion()


ReleaseOrder = Callable[[str | None], tuple[int, ...] | None]
"""How an engine's release names sort: a release name → its sortable key (None: it names no release).
`parse_release` (PEP 440) unless an engine names its releases otherwise (numbered builds: `b6980`)."""


@dataclass(frozen=True)
class ReleaseNames:
    """What an engine calls a release, as `--engine-version` takes it: how a name reads (`order`: None for a
    text that names none of its releases) and examples for the refusal. PEP 440 releases (`PEP440_NAMES`)
    unless the engine's package states its own `RELEASE_NAMES` (llama.cpp's numbered builds: `b6980`)."""

    order: ReleaseOrder
    examples: tuple[str, ...]  # written in a refusal: 'write e.g. 0.5.9, v0.10.2 … or latest'
    noun: str = "release"  # what one is called: 'release', 'build'
    why: str = ""  # said before the examples where the names are not PEP 440's ('llama.cpp names …')
    # whether a typed text is a release as a whole, not one inside other words ('9.9.9x' holds '9.9.9'); None:
    # `order` reads whole texts only already
    whole: Callable[[str], bool] | None = None
    # the release an engine's own words start with (an endpoint's `version`, `reported`); None: PEP 440's
    # (`reported_release`)
    said: Callable[[str | None], str | None] | None = None

    def reported(self, text: str | None) -> str | None:
        """The release an engine's own words start with, as its rules name it: PEP 440's `reported_release`
        ('0.5.9 build 1a2b' → '0.5.9') less a source build's, which names none (`names_no_release`), unless the
        engine reads its own (`said`: llama.cpp's 'b6980'); None where the words name none ('dev', '')."""
        if self.said is not None:
            return self.said(text)
        found = reported_release(text)
        return None if names_no_release(found) else found

    def names_one(self, text: str) -> bool:
        """Whether `text` names one of the engine's releases, or `latest`."""
        typed = text.strip()
        if typed.lower() == LATEST:
            return True
        return self.order(typed) is not None and (self.whole is None or self.whole(typed))

    def refusal(self, text: str) -> str:
        """The one line that refuses `text`: "not a build: '0.5.9' (llama.cpp names its releases by build
        number: write e.g. b6980, b5400 or latest)"."""
        why = f"{self.why}: " if self.why else ""
        return f"not a {self.noun}: {quoted(text)} ({why}write e.g. {', '.join(self.examples)} or {LATEST})"


def _whole_release(text: str, *, words_follow: bool) -> re.Match[str] | None:
    """The release `text` starts with, where no letter, digit or dot runs on from it: what may follow is nothing, an
    image's build suffix after '-', a local label after '+', and where `words_follow`, a space and other words."""
    match = _RELEASE.match(text)
    if match is None:
        return None
    follows = text[match.end():match.end() + 1]
    return match if follows in ("", "-", "+") or (words_follow and follows.isspace()) else None


def typed_release(text: str) -> bool:
    """Whether a typed text (`--engine-version`, the planner's field, an image's tag) starts with a release that
    no letter, digit or dot runs on from: '0.10.2', 'v0.4.3.post2', '0.5.4-cu129' (an image's build suffix) are
    releases; '9.9.9x' and '0.10.2abc' are not, though `parse_release`, which finds a release inside a log's
    words, reads 9.9.9 in the first (packaging's `Version` refuses both). What may follow the release: nothing, an
    image's build suffix after '-', or a local label after '+' ('0.10.2+cu128', which packaging takes); any other
    character ('0.10.2/x', '0.10.2_1', '0.10.2 x': packaging refuses them) is more written onto it. Surrounding
    whitespace is the caller's to strip (`ReleaseNames.names_one`, `LaunchSettings`), as PEP 440 ignores it."""
    return _whole_release(text, words_follow=False) is not None


def reported_release(text: str | None) -> str | None:
    """The release an engine reports in its own words (an endpoint's `version`, a log banner's): '0.5.9' of
    '0.5.9', 'v0.5.9', '0.5.9 build 1a2b' (a word after a space ends it: SGLang's server info may carry more),
    '0.5.4-cu129' (a build suffix); a local label stays ('0.29.1rc1.dev17+g1234abc'). None where the text does not
    start with a whole release ('dev', '', 'nightly', '9.9.9x', '0.10.2_1'): the caller names that state, and never
    hands the words on as if an operator had typed them as `--engine-version`."""
    typed = (text or "").strip()
    match = _whole_release(typed, words_follow=True)
    return match.group(0).lstrip("vV") if match is not None else None


PEP440_NAMES = ReleaseNames(
    order=parse_release, examples=("0.5.9", "v0.10.2", "0.4.3.post2"), whole=typed_release
)


@dataclass(frozen=True)
class Era(Generic[T]):
    """One era of a rule: its value from release `since` on, and where in the engine it comes from."""

    since: str  # the first release that has it ('0.4.5.post3', 'b6980'); "" for "from the start"
    value: T
    source: str  # engine file and function, or the PR that changed it


class Eras(tuple[Era[T], ...]):
    """A rule's eras in release order, as one value: `RULE_ERAS.at(version)` is the rule in force at
    `version`, `RULE_ERAS.era(version)` the era itself (its first release and its source).

    `order` sorts the engine's release names (PEP 440 releases unless the engine says otherwise), so an
    engine whose releases are numbered builds keeps its eras in the same value, read the same way."""

    order: ReleaseOrder

    def __new__(cls, eras: Iterable[Era[T]] = (), order: ReleaseOrder = parse_release) -> Eras[T]:
        made = super().__new__(cls, eras)
        made.order = order
        return made

    def era(self, version: ResolvedVersion) -> Era[T]:
        return era_for(self, version)

    def at(self, version: ResolvedVersion) -> T:
        return era_for(self, version).value


def era_for(eras: Sequence[Era[T]], version: ResolvedVersion) -> Era[T]:
    """The era in force at `version` (eras in release order, sorted by the eras' `order`); not stated, or
    a release that order cannot read: the latest era."""
    order: ReleaseOrder = eras.order if isinstance(eras, Eras) else parse_release
    release = order(version.text)
    if release is None:
        return eras[-1]
    current = eras[0]
    for era in eras:
        if release >= (order(era.since) or ()):  # () sorts below every release: "from the start"
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


def newest_release(calendar: Sequence[ReleaseDate]) -> str | None:
    """The newest release `calendar` names, by release order (not by day: a patch of an older line may be tagged
    later); None where it names none (llama.cpp's builds)."""
    known = [(key, day.release) for day in calendar if (key := parse_release(day.release)) is not None]
    return max(known)[1] if known else None


def from_flag(text: str, calendar: Sequence[ReleaseDate] = ()) -> ResolvedVersion:
    """The release `--engine-version` names; outside the releases kvtop models (`calendar`), it says
    which rules apply instead: the newest's above them, the oldest era's below, and those around it for a
    line inside them the calendar has no release of (TensorRT-LLM's '0.99.0', between 0.21 and 1.0)."""
    detail = f"--engine-version {text}"
    release = parse_release(text)
    known = [key for day in calendar if (key := parse_release(day.release)) is not None]
    if release is not None and known:
        newest, oldest = max(known), min(known)
        if release > newest:
            detail += f" (newer than {newest_release(calendar)}, the newest release kvtop models: its rules apply)"
        elif release < oldest:
            name = next(day.release for day in calendar if parse_release(day.release) == oldest)
            detail += f" (older than {name}, the oldest release kvtop models: the oldest rules apply)"
        elif release[:2] not in {key[:2] for key in known}:
            line = f"{release[0]}.{release[1]}"
            detail += f" (no {line} release on the engine's calendar: the rules of the releases around it apply)"
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
    log's own lines imply (`hint`), the log's first date, else not stated (the latest rules).

    A stated version that names no release (a source build without tags, `0.1.dev7548+gbaba038`), or words that do
    not start with one (`reported_release`), is no evidence: the rest decides, and the detail says why the stated
    text was not used."""
    if stated and names_no_release(stated):
        built = None if first_date or hint else build_date(stated)
        found = resolve(
            engine_name=engine_name, stated=None, stated_line=None, hint=hint,
            first_date=first_date or built, calendar=calendar,
        )  # fmt: skip
        where = f"log line {stated_line}" if stated_line else "the log"
        why = f"{engine_name} {stated} ({where}) is a source build whose version names no release"
        detail = found.detail
        if built and found.text:
            detail = f"built {built} (the date in its version) → {engine_name} {found.text} or older"
        return found.model_copy(update={"detail": f"{why}; {detail}"})
    where = f"log line {stated_line}" if stated_line else "the log"
    release = reported_release(stated)
    if stated and release is None:  # words a version line holds that name no release: no evidence either
        found = resolve(
            engine_name=engine_name, stated=None, stated_line=None, hint=hint, first_date=first_date, calendar=calendar
        )
        return found.model_copy(
            update={"detail": f"{engine_name} {stated!r} ({where}) is not a release kvtop reads; {found.detail}"}
        )
    if release:
        return ResolvedVersion(
            text=release, source=VersionSource.LOG, detail=f"from {where}: {engine_name} {release}"
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
