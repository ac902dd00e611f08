"""Findings from an engine's live pressure (kvtop.domain.pressure): a pool that preempts, priced in tokens.

`preempting_with_room`: the engine preempts (vLLM) or retracts (SGLang) requests with its pool nearly
full while NVML shows free memory on every one of its GPUs; the fix is a larger memory share, found by
re-solving the engine's own rules (`Replay`) at shares 0.01 apart, up to the one whose extra pool still
fits the least free GPU less a safety margin and keeps the engine's own runtime reserve.
`preempting_pool_full`: it preempts with no room to grow: admit fewer requests, as many as the pool
holds at the requests' observed length (vLLM PR 44594 cut preemptions 1,065 → 187 that way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.diagnose_findings import Finding, Rule, Severity
from kvtop.domain.launch_change import change_words, set_words, setting_name
from kvtop.domain.ledger import Ledger
from kvtop.domain.observe import HostMemory
from kvtop.domain.pressure import EnginePressure, pressure_of
from kvtop.domain.whatif import Replay
from kvtop.domain.wording import GIB, gib, percent

if TYPE_CHECKING:
    from kvtop.domain.diagnose_engine import EngineOnNode

#: Free memory a larger share leaves on the least free GPU (fragmentation, a late allocation).
SAFETY_MARGIN_BYTES = 1 * GIB
FRACTION_STEP = 0.01
#: The admitted requests the pool-full fix aims at: this share of what the pool holds.
ADMISSION_SHARE = 0.95


def pressure_findings(engine: EngineOnNode) -> list[Finding]:
    """The engine's pressure finding, if it preempts with a full pool (none while it does not)."""
    pressure = pressure_of(engine.view.engine.live)
    ledger = engine.view.explained or engine.ledger
    if pressure is None or ledger is None or not pressure.preempting or not pressure.pool_full:
        return []
    free = [gpu.free_bytes for gpu in engine.gpus.values() if gpu.free_bytes is not None]
    room = min(free) - SAFETY_MARGIN_BYTES if free else 0
    field = _share_field(ledger)  # None: the engine takes no share of memory to grow (llama.cpp: -c sizes it)
    grown = _larger_share(ledger, field, room) if room > 0 and field is not None else None
    if field is not None and grown is not None:
        return [_with_room(engine, ledger, pressure, field, grown, room)]
    return [_pool_full(engine, ledger, pressure, room)]


def _larger_share(ledger: Ledger, field: str, room: int) -> Ledger | None:
    """The ledger at the largest memory share, 0.01 apart, whose pool grows by at most `room` and that keeps
    the engine's own reserve (None: not even one step fits)."""
    current = ledger.engine.memory_fraction
    replay, best = Replay(ledger), None
    share = round(current + FRACTION_STEP, 2)
    while share <= 0.99:
        alt = replay.solve(ledger.settings.model_copy(update={field: share}))
        if alt is None or not alt.engine.fits or alt.engine.reserve_short_bytes:
            break
        if alt.engine.kv_pool_bytes - ledger.engine.kv_pool_bytes > room:
            break
        best = alt
        share = round(share + FRACTION_STEP, 2)
    return best if best is not None and best.token_capacity > ledger.token_capacity else None


def _share_field(ledger: Ledger) -> str | None:
    from kvtop.domain.engines.registry import engine_rules

    return engine_rules(ledger.settings.engine).memory_fraction_field


def _evidence(pressure: EnginePressure, ledger: Ledger) -> tuple[str, ...]:
    window = f" over the last {pressure.window_s:.0f} s" if pressure.window_s else ""
    return (
        f"the engine's metrics{window}: {pressure.line()}",
        f"the pool holds {ledger.token_capacity:,} tokens per rank at {ledger.kv_bytes_per_token:,} B per token",
    )


def _with_room(
    engine: EngineOnNode, ledger: Ledger, pressure: EnginePressure, field: str, grown: Ledger, room: int
) -> Finding:
    before, after = ledger.engine.memory_fraction, grown.engine.memory_fraction
    flag = setting_name(ledger.settings, field, after)  # the engine's names at the plan's release
    gain = grown.token_capacity - ledger.token_capacity
    rate = pressure.evicting_requests_per_min or 0.0
    usage = pressure.kv_usage or 0.0
    return engine.finding(
        rule=Rule.PREEMPTING_WITH_ROOM, severity=Severity.WARNING, bytes=grown.engine.kv_pool_bytes - ledger.engine.kv_pool_bytes,
        summary=f"preempting {rate:,.1f}/min at {percent(usage)} KV usage with {gib(room + SAFETY_MARGIN_BYTES)} free on "
        f"the least free GPU: +{after - before:.2f} {flag} buys {gain:,} tokens per rank",
        fix=f"{change_words(ledger.settings, grown.settings)} (from {before:g}; restart)", gain_tokens=gain, gain_needs_restart=True,
        fix_settings=grown.settings,
        evidence=(*_evidence(pressure, ledger),
                  f"{flag} {before:g} → {after:g}: {ledger.token_capacity:,} → {grown.token_capacity:,} tokens per rank, "
                  f"the pool {gib(grown.engine.kv_pool_bytes - ledger.engine.kv_pool_bytes)} larger; "
                  f"{gib(SAFETY_MARGIN_BYTES)} stays free and the engine's own runtime reserve is kept"),
    )  # fmt: skip


def _pool_full(engine: EngineOnNode, ledger: Ledger, pressure: EnginePressure, room: int) -> Finding:
    rate = pressure.evicting_requests_per_min or 0.0
    usage = pressure.kv_usage or 0.0
    used = engine.view.engine.live.used_tokens or round(usage * ledger.token_capacity * ledger.layout.replicas)
    per_request = used / pressure.running if pressure.running else 0
    admit = int(ledger.token_capacity * ledger.layout.replicas * ADMISSION_SHARE // per_request) if per_request else 0
    fix = (f"{set_words(ledger.settings, max_running_requests=admit)} (the requests the pool holds at their observed "
           f"{per_request:,.0f} tokens each)" if admit else
           f"a lower {setting_name(ledger.settings, 'max_running_requests', 1)}, or more KV per rank (FP8 KV, more GPUs)")  # fmt: skip
    return engine.finding(
        rule=Rule.PREEMPTING_POOL_FULL, severity=Severity.WARNING,
        summary=f"preempting {rate:,.1f}/min at {percent(usage)} KV usage and no GPU has room to grow the pool: admit fewer requests",
        fix=fix, gain_needs_restart=True,
        evidence=(*_evidence(pressure, ledger),
                  f"the least free GPU has {gib(max(room + SAFETY_MARGIN_BYTES, 0))} free: under "
                  f"{gib(SAFETY_MARGIN_BYTES)} beyond one more step of the memory share"),
    )  # fmt: skip


def host_tier_findings(engine: EngineOnNode, host: HostMemory | None) -> list[Finding]:
    """`host_tier_would_not_fit`: a restart would ask the host for the engine's host KV tier again (what it
    pins now comes back first) and for the free memory the engine keeps beside it; the host has less."""
    ledger = engine.ledger
    tier = ledger.host_tier if ledger is not None else None
    if tier is None or host is None or not tier.host_reserve_bytes:
        return []
    if host.available_bytes >= tier.host_reserve_bytes:
        return []
    return [engine.finding(
        rule=Rule.HOST_TIER_WOULD_NOT_FIT, severity=Severity.CRITICAL, bytes=tier.total_bytes,
        summary=f"{tier.connector} would not start again: the host has {gib(host.available_bytes)} available beside "
        f"the tier's {gib(tier.total_bytes)}, and the engine keeps {gib(tier.host_reserve_bytes)} free",
        fix=f"free host memory, or a smaller tier than {tier.setting}", gain_needs_restart=True,
        evidence=(f"host memory: {gib(host.available_bytes)} available of {gib(host.total_bytes)}",
                  f"{tier.connector}: {tier.tokens_per_rank:,} tokens per rank, {gib(tier.bytes_per_rank)} per rank "
                  f"over {tier.ranks} ranks", tier.detail),
    )]  # fmt: skip
