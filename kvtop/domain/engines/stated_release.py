"""The engine release a launch's settings name (`--engine-version`, or the image's tag read into it), resolved once
for every reader: the ledger, `served_model`'s load casts, `explain`'s request and command; and the release a running
engine's endpoint reports, said as the endpoint's."""

from __future__ import annotations

from datetime import date

from kvtop.domain.engines.catalogue import EngineId, engine_module
from kvtop.domain.engines.versions import (
    NOT_STATED,
    ReleaseDate,
    ResolvedVersion,
    VersionSource,
    build_date,
    from_dates,
    from_flag,
    names_no_release,
    reported_release,
)
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.observe import ReportedVersion


def stated_release(settings: LaunchSettings) -> ResolvedVersion:
    """`settings.engine_version` as `from_flag` says it over the engine's calendar (a release newer or older than
    those modelled is said so); none named: `NOT_STATED` (the latest rules apply)."""
    if settings.engine_version is None:
        return NOT_STATED
    # the engine's package through the catalogue, not the registry: the registry's protocols name
    # explain_request, which reads this (tests/test_import_graph.py counts annotation imports too)
    return from_flag(settings.engine_version, engine_module(settings.engine).RULES.calendar)


def endpoint_release(engine: EngineId, reported: ReportedVersion) -> ResolvedVersion:
    """The release a running engine's endpoint reports (`/version`, server info), read by the engine's own
    `RELEASE_NAMES` (PEP 440's '0.5.9', llama.cpp's 'b6980') and said as its endpoint's, not as an
    `--engine-version` nobody typed; a release outside those modelled is said so, as `from_flag` says it. A source
    build dated in its version ('0.1.dev8331+g74e7551.d20250806') takes the release out on that day, or older, as a
    log's does (`versions.resolve`). Words that name no release ('dev', '', an undated source build's) are the
    named state `ENDPOINT_UNREAD`: the latest release's rules, the endpoint's words quoted (redacted)."""
    package = engine_module(engine)
    words = reported.words or reported.said  # read whole (redacted), quoted as said (cut)
    release = package.RELEASE_NAMES.reported(words)
    if release is None:
        return _unread(package.RULES.display_name, package.RULES.calendar, reported.said, words)
    flagged = from_flag(release, package.RULES.calendar)
    detail = flagged.detail.replace(f"--engine-version {release}", f"the engine's endpoint reports {release}", 1)
    return flagged.model_copy(update={"source": VersionSource.ENDPOINT, "detail": detail})


def _unread(name: str, calendar: tuple[ReleaseDate, ...], said: str, words: str) -> ResolvedVersion:
    """An endpoint's words that name no release: a dated source build's day on the calendar (approximate, the
    release out then or older), else `ENDPOINT_UNREAD`; read from `words`, quoted as `said`."""
    built = names_no_release(reported_release(words))
    day = build_date(words) if built else None
    dated = NOT_STATED if day is None else from_dates(calendar, date.fromisoformat(day), name)
    if dated.text is not None:
        return dated.model_copy(update={
            "source": VersionSource.ENDPOINT,
            "detail": f"the engine's endpoint reports {said!r}, a source build: built {day} (the date in its "
                      f"version) → {name} {dated.text} or older",
        })  # fmt: skip
    what = "a source build whose version names no release" if built else "not a release kvtop reads"
    return ResolvedVersion(
        source=VersionSource.ENDPOINT_UNREAD,
        detail=f"the engine's endpoint reports {said!r}, {what}: the latest release's rules",
    )
