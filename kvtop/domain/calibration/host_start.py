"""Whether a plan's engine starts on a unified-memory host that holds its assumed share (`HostStart`).

An engine that sizes from the total (vLLM) asks its share of the total free at its start and refuses to start with
less (host_memory.py). On a unified-memory host the host's share is assumed (29.34 % ± 23.51 %), so the plan's one
answer to 'does it start?' is the verdict at that span. Only where even the share's low end leaves less than it asks
is the start refused (the headline, with the largest share that starts at the centre by the engine's own rule,
`fraction_that_starts`, and its tokens); where the centre or the high end leaves less, an assumed share is no refusal:
the start 'may not start', the headline stays the capacity and the interval's low end is 0 (adadrag's 0.95 start of
Qwen3.5-35B-A3B on a GB10 ran where kvtop's centre, 14.04 GiB held, would refuse it). An engine that sizes from the
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
    """The verdict in full, once (the headline where refused across the span): every figure through `wording.gib`."""
    host = start.host
    low, high = host.held_bytes - host.error_bytes, host.held_bytes + host.error_bytes
    needs = (f"{display_name(engine)} needs {gib(start.needs_bytes)} free at its start ({start.fraction:g} × "
             f"{gib(host.total_bytes)}), so the host may hold at most {gib(start.most_held_bytes)}")  # fmt: skip
    assumed = (f"the host share assumed {gib(host.held_bytes)} ± {gib(host.error_bytes)} "
               f"({gib(max(low, 0))} – {gib(high)})")  # fmt: skip
    if start.verdict is StartVerdict.STARTED_ACROSS_SPAN:
        return f"starts across the assumed host share: {needs}; {assumed}"
    if start.starting_fraction is None:
        suggestion = f"no {start.fraction_flag} starts at its centre"
    elif not start.starting_tokens:
        suggestion = f"{start.fraction_flag} {start.starting_fraction:g} starts at its centre but leaves no KV cache"
    else:
        suggestion = (f"{start.fraction_flag} {start.starting_fraction:g} starts at its centre: "
                      f"{start.starting_tokens:,} tokens per rank")  # fmt: skip
    if start.verdict is StartVerdict.REFUSED_AT_HIGH_END:
        return f"may not start: {needs}; {assumed}: it starts at the centre, not at the high end"
    if start.verdict is StartVerdict.REFUSED_AT_CENTRE:
        return (f"may not start: {needs}; {assumed}: it starts at the low end, not at the centre (which "
                f"leaves {gib(start.left_bytes)}); {suggestion}")  # fmt: skip
    return f"refused across the assumed host share: {needs}; {assumed}: even its low end holds more; {suggestion}"


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
