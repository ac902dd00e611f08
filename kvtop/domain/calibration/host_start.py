"""Whether a plan's engine starts on a unified-memory host that holds its assumed share (`HostStart`).

An engine that sizes from the total (vLLM) asks its share of the total free at its start and refuses to start with
less (host_memory.py). On a unified-memory host the host's share is assumed (29.34 % ± 23.51 %), so the plan's one
answer to 'does it start?' is the verdict at that span: where the asked share is refused at the assumed centre, the
headline is the refusal, with the largest share that starts there (the engine's own rule, `fraction_that_starts`)
and the tokens it gives; where part of the span refuses, the interval's low end is 0. An engine that sizes from the
free memory it finds, or a GPU of its own, has no such check: None.
"""

from __future__ import annotations

from collections.abc import Callable

from kvtop.domain.calibration.host_estimate import HostStart, StartVerdict, UnifiedHost
from kvtop.domain.engines.registry import display_name, engine_rules
from kvtop.domain.launch_change import setting_name
from kvtop.domain.ledger import Ledger
from kvtop.domain.wording import gib


def _reason(start: HostStart, engine: str) -> str:
    """The verdict in full, once (the headline where refused at the centre): every figure through `wording.gib`."""
    host = start.host
    asked = (f"{display_name(engine)} asks {start.fraction:g} × {gib(host.total_bytes)} = {gib(start.needs_bytes)} "
             f"free at its start, so the host may hold at most {gib(start.most_held_bytes)}")  # fmt: skip
    assumed = f"it is assumed to hold {gib(host.held_bytes)} ± {gib(host.error_bytes)}"
    if start.verdict is StartVerdict.STARTED_ACROSS_SPAN:
        return f"starts across the assumed host share: {asked}; {assumed}"
    if start.verdict is StartVerdict.REFUSED_AT_HIGH_END:
        return f"starts at the assumed host share, refused at its high end: {asked}; {assumed}"
    span = "across the assumed host share" if start.refused_across_span else "at the assumed host share"
    if start.starting_fraction is None:
        suggestion = f"no {start.fraction_flag} starts there"
    elif not start.starting_tokens:
        suggestion = f"{start.fraction_flag} {start.starting_fraction:g} starts there but leaves no KV cache"
    else:
        suggestion = f"{start.fraction_flag} {start.starting_fraction:g} starts there: {start.starting_tokens:,} tokens per rank"
    return f"refused {span}: {asked}; {assumed}, leaving {gib(start.left_bytes)}; {suggestion}"


def host_start(ledger: Ledger, host: UnifiedHost | None, solve: Callable[[float], Ledger]) -> HostStart | None:
    """The start verdict of `ledger`'s launch on the unified-memory `host` (None: no share of the total is asked free
    at its start, or the GPU is its own); `solve` re-solves the plan at another share, for the tokens at the largest
    share that starts at the assumed centre."""
    if host is None or host.start_verdict is None or host.start_needs_bytes is None:
        return None  # its start asks no share of the total free (`EngineRules.start_needs_bytes`), or no such host
    rules = engine_rules(ledger.settings.engine)
    field = rules.memory_fraction_field  # its name as the engine's launch writes it at the plan's release
    flag = setting_name(ledger.settings, field, ledger.engine.memory_fraction / 2) if field else rules.memory_fraction_flag
    start = HostStart(host=host, fraction=ledger.engine.memory_fraction, fraction_flag=flag, reason="")
    if not start.starts_at_centre:
        starting = rules.fraction_that_starts(host.total_bytes, start.left_bytes)
        if starting:
            at = solve(starting)
            start = start.model_copy(update={"starting_fraction": starting,
                                             "starting_tokens": at.token_capacity if at.engine.fits else 0})  # fmt: skip
    return start.model_copy(update={"reason": _reason(start, ledger.settings.engine)})
