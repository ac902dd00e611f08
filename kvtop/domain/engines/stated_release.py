"""The engine release a launch's settings name (`--engine-version`, or the image's tag read into it), resolved once
for every reader: the ledger, `served_model`'s load casts, `explain`'s request and command; and the release a running
engine's endpoint reports, said as the endpoint's."""

from __future__ import annotations

from kvtop.domain.engines.catalogue import EngineId, engine_module
from kvtop.domain.engines.versions import (
    NOT_STATED,
    ResolvedVersion,
    VersionSource,
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
    """The release a running engine's endpoint reports (`/version`, server info), said as its endpoint's, not as
    an `--engine-version` nobody typed; a release outside those modelled is said so, as `from_flag` says it. Words
    that name no release ('dev', '', a source build's '0.1.dev7548+g…') are the named state `ENDPOINT_UNREAD`: the
    latest release's rules, the endpoint's words quoted (redacted) so the operator sees what it said."""
    release = reported.release
    if release is None:
        built = names_no_release(reported_release(reported.said))
        what = "a source build whose version names no release" if built else "not a release kvtop reads"
        return ResolvedVersion(
            source=VersionSource.ENDPOINT_UNREAD,
            detail=f"the engine's endpoint reports {reported.said[:40]!r}, {what}: the latest release's rules",
        )
    flagged = from_flag(release, engine_module(engine).RULES.calendar)
    detail = flagged.detail.replace(f"--engine-version {release}", f"the engine's endpoint reports {release}", 1)
    return flagged.model_copy(update={"source": VersionSource.ENDPOINT, "detail": detail})
