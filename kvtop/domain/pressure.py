"""An engine's pressure now, from its own metrics: how full its KV pool is, who waits, and whether it
preempts (vLLM), retracts (SGLang), swaps or evicts to make room, with the drafts' acceptance.

Counters are cumulative since the engine started, so a rate needs two readings: the live source keeps
the previous reading's counters (`EngineLive.previous`) and `pressure_of` divides the difference by the
time between them; a counter that went down (the engine restarted) gives no rate, never a negative one.
The dashboard's pressure line, `snapshot --json` and the preemption finding all read `pressure_of`.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from kvtop.domain.observe import EndpointState, EngineCounters, EngineLive, NodeObservation
from kvtop.domain.wording import percent

#: KV usage from which preemption is the pool being full, not a burst.
FULL_POOL_FRACTION = 0.9


class EnginePressure(BaseModel):
    """What an engine's metrics say about its pool's pressure (None: the engine reports no such figure)."""

    model_config = ConfigDict(frozen=True)

    running: int | None = None
    waiting: int | None = None
    kv_usage: float | None = None  # 0..1, the fullest rank
    swapped: int | None = None
    preemptions_per_min: float | None = None  # vLLM's preempted requests (None: not reported, or one reading)
    retractions_per_min: float | None = None  # SGLang's retracted requests
    evicted_tokens_per_min: float | None = None  # SGLang's tokens evicted from the GPU pool
    spec_acceptance: float | None = None  # drafts accepted ÷ proposed, 0..1
    window_s: float | None = None  # the time the rates are over

    @property
    def evicting_requests_per_min(self) -> float | None:
        """Requests the engine evicts for room per minute (preempted or retracted); None: not reported."""
        rates = [r for r in (self.preemptions_per_min, self.retractions_per_min) if r is not None]
        return sum(rates) if rates else None

    @property
    def preempting(self) -> bool:
        return (self.evicting_requests_per_min or 0) > 0 or (self.swapped or 0) > 0

    @property
    def notable(self) -> bool:
        """Worth a line of its own: requests wait, the pool is full, it preempts, or it drafts."""
        return bool(self.waiting) or self.pool_full or self.preempting or self.spec_acceptance is not None

    @property
    def pool_full(self) -> bool:
        return self.kv_usage is not None and self.kv_usage >= FULL_POOL_FRACTION

    def line(self) -> str:
        """'running 162 · waiting 2,826 · KV 97% · preempting 14.0/min · drafts accepted 71%'."""
        parts = []
        if self.running is not None:
            parts.append(f"running {self.running:,}")
        if self.waiting is not None:
            parts.append(f"waiting {self.waiting:,}")
        if self.kv_usage is not None:
            parts.append(f"KV {percent(self.kv_usage)}")
        if self.swapped:
            parts.append(f"swapped {self.swapped:,}")
        if self.preemptions_per_min is not None:
            parts.append(f"preempting {self.preemptions_per_min:,.1f}/min")
        if self.retractions_per_min is not None:
            parts.append(f"retracting {self.retractions_per_min:,.1f}/min")
        if self.evicted_tokens_per_min:
            parts.append(f"evicting {self.evicted_tokens_per_min:,.0f} tok/min")
        if self.spec_acceptance is not None:
            parts.append(f"drafts accepted {percent(self.spec_acceptance)}")
        return " · ".join(parts)


def _rate(now: int | None, before: int | None, minutes: float) -> float | None:
    if now is None or before is None or now < before or minutes <= 0:
        return None
    return (now - before) / minutes


def pressure_of(live: EngineLive) -> EnginePressure | None:
    """The engine's pressure from its endpoint's reading (None: it answered with no pressure figure)."""
    if live.state is not EndpointState.OK:
        return None
    now, before = live.counters, live.previous
    minutes = (now.taken_at - before.taken_at) / 60 if now is not None and before is not None else 0.0
    rates: dict[str, float | None] = {"preemptions_per_min": None, "retractions_per_min": None,
                                      "evicted_tokens_per_min": None}  # fmt: skip
    acceptance = live.spec_acceptance
    if now is not None and before is not None:
        rates = {
            "preemptions_per_min": _rate(now.preemptions, before.preemptions, minutes),
            "retractions_per_min": _rate(now.retractions, before.retractions, minutes),
            "evicted_tokens_per_min": _rate(now.evicted_tokens, before.evicted_tokens, minutes),
        }
        acceptance = _window_acceptance(now, before) if acceptance is None else acceptance
    if acceptance is None and live.spec_draft_tokens_total:
        acceptance = (live.spec_accepted_tokens_total or 0) / live.spec_draft_tokens_total
    pressure = EnginePressure(
        running=live.running_requests, waiting=live.waiting_requests, kv_usage=live.kv_usage_fraction,
        swapped=live.swapped_requests, spec_acceptance=acceptance, window_s=minutes * 60 if minutes else None,
        **rates,
    )  # fmt: skip
    return pressure if pressure.line() else None


def _window_acceptance(now: EngineCounters, before: EngineCounters) -> float | None:
    """vLLM: accepted ÷ drafted tokens between two readings (None: no drafts in the window)."""
    if None in (now.spec_accepted, now.spec_drafted, before.spec_accepted, before.spec_drafted):
        return None
    drafted = (now.spec_drafted or 0) - (before.spec_drafted or 0)
    accepted = (now.spec_accepted or 0) - (before.spec_accepted or 0)
    return accepted / drafted if drafted > 0 and accepted >= 0 else None


#: Rates are over about this long: the newest earlier reading at least this old (else the oldest kept).
RATE_WINDOW_S = 60.0
#: Readings kept per engine (a poll every second keeps two minutes).
HISTORY_READINGS = 120


def with_counter_history(
    node: NodeObservation, history: Mapping[str, tuple[EngineCounters, ...]]
) -> tuple[NodeObservation, dict[str, tuple[EngineCounters, ...]]]:
    """Each engine's reading stamped with the node's time and handed the earlier counters its rates are over
    (`RATE_WINDOW_S` back, else the oldest kept), and the history for the next call: what a source keeps
    between collections. Counters are integers, so a window of one poll would jump between 0 and a burst."""
    engines, kept = [], {}
    for engine in node.engines:
        earlier = history.get(engine.engine_id, ())
        old_enough = [c for c in earlier if c.taken_at <= node.taken_at - RATE_WINDOW_S]
        previous = old_enough[-1] if old_enough else (earlier[0] if earlier else None)
        live = engine.live.model_copy(update={"taken_at": node.taken_at, "previous": previous})
        counters = live.counters
        if counters is not None:
            kept[engine.engine_id] = (*earlier, counters)[-HISTORY_READINGS:]
        engines.append(engine.model_copy(update={"live": live}))
    return node.model_copy(update={"engines": tuple(engines)}), kept
