"""How fresh the shown data is, in the words both headers use (node dashboard and cluster view).

'● live · every 1 s' while data arrives on time (the text stays the same, so a clock tick
redraws nothing), '● late · 4 s ago' once it is two intervals (at least 2 s) late, '▲ STALE …'
after three intervals (at least 3 s) or while the source fails, '… waiting …' before any data.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content

STALE_AFTER_INTERVALS = 3
LATE_AFTER_INTERVALS = 2


def is_stale(age_s: float | None, failing: bool, interval_s: float) -> bool:
    """The source is failing, or nothing arrived for three intervals (at least 3 s)."""
    return failing or (age_s is not None and age_s > max(3.0, STALE_AFTER_INTERVALS * interval_s))


@dataclass(frozen=True)
class Wording:
    """What a header calls its source: 'the source has not answered' / 'the first snapshot' (a failure comes
    worded whole, naming its source: 'source failing: …', the cluster's `ClusterFailure.said`)."""

    silent: str
    first: str
    fresh: str = "live"  # on time: 'live', or 'simulated' for a demo node (no real GPU is read)


def freshness(age_s: float | None, failure: str | None, interval_s: float, wording: Wording) -> Content:
    """The freshness marker for data `age_s` old (None: nothing yet), given the last failure as the header words it
    ('source failing: …', 'prometheus unreachable: …'). A demo's marker
    names it simulated in every state (late, stale, waiting): its figures are never a real GPU's."""
    marker = _marker(age_s, failure, interval_s, wording)
    if wording.fresh == "live" or marker.plain.startswith(f"● {wording.fresh}"):
        return marker
    return Content.assemble(simulated_badge(wording.fresh), " · ", marker)


def simulated_badge(fresh: str = "simulated") -> Content:
    """'● simulated': the badge a demo's header always carries (also while paused)."""
    return Content.styled(f"● {fresh}", "bold $warning")


def _marker(age_s: float | None, failure: str | None, interval_s: float, wording: Wording) -> Content:
    if failure is not None:
        shown = "nothing shown yet" if age_s is None else f"showing data {age_s:.0f} s old"
        return Content.styled(f"▲ STALE · {failure} · {shown}", "bold $error")
    if age_s is None:
        return Content.styled(f"… waiting for {wording.first}", "$warning")
    if is_stale(age_s, False, interval_s):
        return Content.styled(f"▲ STALE {age_s:.0f} s · {wording.silent}", "bold $warning")
    if age_s < max(2.0, LATE_AFTER_INTERVALS * interval_s):
        style = "$success" if wording.fresh == "live" else "bold $warning"
        return Content.styled(f"● {wording.fresh} · every {interval_s:g} s", style)
    return Content.styled(f"● late · {age_s:.0f} s ago", "$warning")


_ANY_WORDING = Wording(silent="silent", first="first")


def reading(age_s: float | None, failure: str | None, interval_s: float) -> str:
    """What a marker says at this age, whatever its wording: the clock redraws when this changes."""
    return freshness(age_s, failure, interval_s, _ANY_WORDING).plain
