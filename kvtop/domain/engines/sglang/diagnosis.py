"""How SGLang's rules price a cause and what its fixes are (docs/engines/sglang.md §2–§7).

SGLang sizes every rank from the least free GPU of its world (a MIN all-reduce before weights
load): memory held by anyone on one GPU costs every rank, and a restart plans with the least free
GPU as it is now.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kvtop.domain.diagnose_findings import (
    Finding,
    LayoutOptions,
    LedgerRule,
    Severity,
    Thresholds,
    advice_severity,
    all_ranks,
)
from kvtop.domain.engines.least_free import restart_capacity as restart_capacity  # the least free sizes all
from kvtop.domain.engines.least_free import restart_ledger as restart_ledger
from kvtop.domain.engines.restart import restart_without_kv
from kvtop.domain.engines.sglang.budget import resolve_max_num_reqs
from kvtop.domain.engines.sglang.mamba_strategy import mamba_ratio
from kvtop.domain.launch_change import change_words
from kvtop.domain.ledger_values import Ledger, WhatIf
from kvtop.domain.wording import gib

if TYPE_CHECKING:
    from kvtop.domain.diagnose_engine import EngineOnNode

BALANCE_RATIO = 0.9  # §2 `_check_tp_memory_balance`: pre-load min < 0.9 × local free warns


def spread_evidence(ledger: Ledger, tokens: int, ranks: str) -> str:
    fraction = ledger.engine.memory_fraction
    return (
        f"SGLang sizes every rank by the least free GPU: −{tokens:,} tokens on each of {ranks}; "
        f"the reserve pre-load × (1 − {fraction:g}) shrinks with it"
    )


def fp8_kv_dtype(ledger: Ledger) -> str:
    return "fp8_e4m3"


def layout_alternatives(ledger: Ledger, attn_tp: int) -> LayoutOptions:
    """Layouts that keep the GPUs but shrink attention TP to `attn_tp`: DP attention first; for MLA
    only that (fewer-TP replicas would not fit the weights), else also smaller-TP replicas."""
    s = ledger.settings
    groups = max(1, s.tp // attn_tp)
    out = [s.model_copy(update={"enable_dp_attention": True, "dp": groups})]
    if ledger.model.mla is not None:
        return LayoutOptions(layouts=tuple(out))
    dp = groups * (1 if s.enable_dp_attention else s.dp)
    out.append(s.model_copy(update={"tp": attn_tp, "dp": dp, "enable_dp_attention": False}))
    return LayoutOptions(layouts=tuple(out))


def reported_kv_memory(ledger: Ledger, reported_kv_pool_bytes: int | None) -> int | None:
    """SGLang's pool is what the free memory allows: a smaller one is measured, not reserved (§4)."""
    return None


def absolute_budget(ledger: Ledger, kv_bytes: int) -> dict[str, int | float] | None:
    """`--max-total-tokens` of `kv_bytes` ÷ the KV bytes per token: a cap on the tokens the budget buys
    (§4, `max_total_tokens=… is larger than the profiled value` beyond it), so only below SGLang's own
    budget, and only where one cell prices a token (no sliding-window or linear-attention pool)."""
    engine = ledger.engine
    if kv_bytes >= engine.kv_budget_bytes or engine.swa_token_capacity is not None or engine.state_pool_bytes:
        return None
    tokens = kv_bytes // ledger.kv_bytes_per_token
    return {"max_total_tokens": tokens} if tokens >= engine.page_size else None


def reserve_finding(engine: EngineOnNode, thresholds: Thresholds) -> Finding | None:
    """`reserve_larger_than_expected`: a `mem_fraction_static` below SGLang's automatic one (§5)."""
    assert engine.ledger is not None and engine.replay is not None
    settings, replay = engine.ledger.settings, engine.replay
    used = engine.view.engine.live.memory_fraction or settings.mem_fraction_static
    auto = replay.solve(settings.model_copy(update={"mem_fraction_static": None}))
    if used is None or auto is None or used >= auto.engine.memory_fraction - 0.0005:
        return None
    auto_fraction = auto.engine.memory_fraction
    chosen = settings.model_copy(update={"mem_fraction_static": used})
    fixed = settings.model_copy(update={"mem_fraction_static": auto_fraction})
    lost = replay.capacity(fixed) - replay.capacity(chosen)
    if lost <= 0:
        return None
    pre = replay.free_before_load_bytes
    extra = round(pre * (auto_fraction - used))
    big = lost >= thresholds.reserve_loss_fraction * auto.token_capacity
    return engine.finding(
        rule="reserve_larger_than_expected",
        severity=Severity.WARNING if big else Severity.INFO,
        summary=(
            f"mem_fraction_static {used:g} is below SGLang's automatic {auto_fraction:g}: "
            f"−{lost:,} tokens per rank"
        ),
        bytes=extra,
        tokens=lost,
        fix=change_words(chosen, fixed),  # as the copied launch writes it at the plan's release
        gain_tokens=lost,
        evidence=(
            f"reserve pre-load × (1 − f): {gib(pre * (1 - used))} at {used:g} vs "
            f"{gib(pre * (1 - auto_fraction))} automatic",
            "lower it only for runtime OOMs (activations, CUDA graphs); an OOM at init needs it higher (SGLang #322)",
        ),
        fix_settings=fixed,
    )


def restart_finding(engine: EngineOnNode) -> Finding | None:
    """`restart_will_not_fit`: a restart on the GPUs as they are now leaves no KV memory, or trips the balance check."""
    assert engine.ledger is not None and engine.replay is not None
    now = engine.now()
    tight, loose = min(now, key=lambda g: now[g]), max(now, key=lambda g: now[g])
    fraction = engine.ledger.engine.memory_fraction
    found = restart_without_kv(engine, leaves="leaves no KV memory", evidence=(
        f"SGLang: 'Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={fraction:g}'",
    ))  # fmt: skip
    if found is not None:
        return found
    if now[tight] >= BALANCE_RATIO * now[loose]:
        return None
    tokens = max(0, engine.restart_capacity(dict.fromkeys(now, now[loose])) - engine.restart_capacity(now))
    return engine.finding(
        rule="restart_will_not_fit",
        severity=Severity.WARNING,
        gpus=(tight,),
        bytes=now[loose] - now[tight],
        tokens=tokens,
        gain_tokens=tokens,
        summary=(
            f"a restart of {engine.id} trips SGLang's balance check: GPU {tight} {gib(now[tight])} free "
            f"vs GPU {loose} {gib(now[loose])}"
        ),
        fix=f"free {gib(now[loose] - now[tight])} on GPU {tight} before restarting",
        evidence=(
            "SGLang: 'The memory capacity is unbalanced. Some GPUs may be occupied by other processes.' "
            "(a warning; an error with SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK)",
            f"{gib(now[tight])} < {BALANCE_RATIO} × {gib(now[loose])}",
        ),
    )


def _req_to_token(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """`req_to_token_large`: the req_to_token table (§7) takes a large part of the runtime reserve."""
    eng = ledger.engine
    if eng.req_to_token_bytes <= thresholds.req_to_token_bytes:
        return None
    row = (ledger.context_length + 4) * 4  # int32 per token slot of one request (§7)
    bound = max(1, thresholds.req_to_token_bytes // 2 // row - 1)
    requests = max(1 << (bound.bit_length() - 1), ledger.token_capacity // ledger.context_length, 1)
    if requests >= eng.max_running_requests:
        return None
    freed = eng.req_to_token_bytes - (requests + 1) * row
    mfs = math.floor((eng.memory_fraction + freed / replay.free_before_load_bytes) * 1000) / 1000
    fixed = ledger.settings.model_copy(update={"max_running_requests": requests, "mem_fraction_static": mfs})
    gain = replay.capacity(fixed) - ledger.token_capacity
    gpus, ranks = all_ranks(ledger)
    slots, context = eng.max_running_requests, ledger.context_length
    return Finding(
        rule="req_to_token_large",
        severity=advice_severity(gain, ledger.token_capacity, thresholds),
        summary=f"req_to_token table of {gib(eng.req_to_token_bytes)} per rank ({slots:,} slots × {context:,} tokens)",
        gpus=gpus,
        ranks=ranks,
        bytes=eng.req_to_token_bytes,
        tokens=max(gain, 0),
        fix=change_words(ledger.settings, fixed),
        gain_tokens=max(gain, 0),
        evidence=(
            f"({slots:,} + 1) rows × ({context:,} + 4) × 4 B = {gib(eng.req_to_token_bytes)}, "
            "taken from the runtime reserve",
            f"{requests} slots free {gib(freed)}; raising --mem-fraction-static {eng.memory_fraction:g} → "
            f"{mfs:g} keeps the activation reserve",
            f"the KV pool holds {ledger.token_capacity // context:,} full-context requests; "
            f"capacity +{max(gain, 0):,} tokens per rank",
        ),
        fix_settings=fixed,
    )


def _uncapped_requests(ledger: Ledger) -> int:
    """Max running requests before the state-pool cap (§7)."""
    return resolve_max_num_reqs(
        ledger.token_capacity, ledger.context_length, ledger.settings.max_running_requests, ledger.layout.attn_dp
    )


def _mamba_caps_requests(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """`mamba_state_caps_requests`: the linear-attention state pool caps running requests below what the KV pool allows (§4.2)."""
    eng = ledger.engine
    if not eng.state_pool_bytes or not eng.fits:
        return None
    uncapped = _uncapped_requests(ledger)
    if eng.max_running_requests >= uncapped:
        return None
    fixed = ledger.settings.model_copy(update={"disable_radix_cache": True})
    alt = replay.solve(fixed)
    alt_requests = alt.engine.max_running_requests if alt else eng.max_running_requests
    gain = (alt.token_capacity if alt else 0) - ledger.token_capacity
    gpus, ranks = all_ranks(ledger)
    severity = Severity.WARNING if 2 * eng.max_running_requests < uncapped else Severity.INFO
    slots, why = mamba_ratio(ledger.model, ledger.settings, ledger.version, eng.page_size)
    return Finding(
        rule="mamba_state_caps_requests",
        severity=severity,
        summary=(
            f"linear-attention state pool caps running requests at {eng.max_running_requests:,} "
            f"(KV pool supports {uncapped:,})"
        ),
        gpus=gpus,
        ranks=ranks,
        bytes=eng.state_pool_bytes,
        tokens=max(gain, 0),
        fix=change_words(ledger.settings, fixed),
        gain_tokens=max(gain, 0),
        evidence=(
            f"state pool {gib(eng.state_pool_bytes)} per rank; with the radix cache each running request "
            f"takes {slots} state slots ({why.split(' (', 1)[-1].rstrip(')')})",
            f"--disable-radix-cache: 1 slot per request → {alt_requests:,} running requests (no prefix reuse)",
        ),
        fix_settings=fixed,
    )


ledger_rules: Sequence[LedgerRule] = (_req_to_token, _mamba_caps_requests)
