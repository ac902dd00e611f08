"""`headroom_short`: what later phases allocate after the KV pool (the deployment's after-pool terms, e.g.
DeepEP's buffers under SGLang releases whose reserve does not count them) overruns what the pool leaves:
an out-of-memory risk at the first batch that needs them, found before it happens. The fix is the largest
memory share, 0.005 apart, that leaves room, priced by re-solving the engine's rules (`Replay`)."""

from __future__ import annotations

from kvtop.domain.diagnose_findings import Finding, Rule, Severity, Thresholds, all_ranks
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.headroom import after_pool_short_bytes, headroom_of
from kvtop.domain.launch_change import change_words, setting_name
from kvtop.domain.ledger import Ledger
from kvtop.domain.ledger_values import WhatIf
from kvtop.domain.wording import gib

SHARE_STEP = 0.005


def headroom_short(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    short = after_pool_short_bytes(ledger)
    headroom = headroom_of(ledger)
    if short <= 0 or headroom is None:
        return None
    field = engine_rules(ledger.settings.engine).memory_fraction_field
    if field is None:  # no share of memory to lower (llama.cpp: its context sizes the pool)
        return None
    share, fixed = ledger.engine.memory_fraction, None
    while share > SHARE_STEP:
        share = round(share - SHARE_STEP, 3)
        alt = replay.solve(ledger.settings.model_copy(update={field: share}))
        if alt is not None and alt.engine.fits and after_pool_short_bytes(alt) == 0:
            fixed = alt
            break
    # the share's name and the fix as the engine's launch at the plan's release writes them
    flag = setting_name(ledger.settings, field, round(ledger.engine.memory_fraction - SHARE_STEP, 3))
    fix = f"{change_words(ledger.settings, fixed.settings)} (leaves room; restart)" if fixed else f"a lower {flag}"
    gpus, ranks = all_ranks(ledger)
    after = list(headroom.needs[1:])
    return Finding(
        rule=Rule.HEADROOM_SHORT, severity=Severity.WARNING, gpus=gpus, ranks=ranks, bytes=short,
        summary=f"{', '.join(n.label for n in after)} need {gib(sum(n.bytes or 0 for n in after))} after the pool, "
        f"{gib(short)} more than the runtime reserve leaves: out-of-memory risk once they are allocated",
        fix=fix,
        tokens=0, gain_tokens=(fixed.token_capacity - ledger.token_capacity) if fixed else 0, gain_needs_restart=True,
        fix_settings=fixed.settings if fixed else None,
        evidence=(f"runtime reserve {gib(headroom.left_bytes)} per rank; the engine's own rule keeps "
                  f"{gib(headroom.needs[0].bytes or 0)} of it for activations and CUDA graphs",
                  *(f"{n.label}: {gib(n.bytes) if n.bytes is not None else 'not modelled'}" for n in after),
                  *(f"{r.label}: {gib(r.bytes)}, against which {gib(headroom.held_bytes(r))} of them count"
                    for r in headroom.reserves),
                  *((f"{flag} {ledger.engine.memory_fraction:g} → {fixed.engine.memory_fraction:g}: "
                     f"{ledger.token_capacity:,} → {fixed.token_capacity:,} tokens per rank",) if fixed else ())),
    )  # fmt: skip
