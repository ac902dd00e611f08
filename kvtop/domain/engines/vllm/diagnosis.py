"""How vLLM's rules price a cause and what its fixes are (docs/engines/vllm.md §2–§4).

vLLM budgets `gpu_memory_utilization × total` whatever else is on the GPU: memory others hold
does not shrink the cache, it makes a restart refuse to start when less than that share is free.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kvtop.domain.diagnose_findings import (
    Finding,
    LedgerRule,
    Severity,
    Thresholds,
    advice_severity,
    all_ranks,
    capacity_change,
)
from kvtop.domain.engines.vllm.budget import starting_utilization
from kvtop.domain.engines.vllm.eras import has_kv_cache_memory_bytes
from kvtop.domain.engines.vllm.windows import spec_window
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger_values import Ledger, WhatIf
from kvtop.domain.model import AttentionKind, LayerKind
from kvtop.domain.wording import gib

if TYPE_CHECKING:
    from kvtop.domain.diagnose_engine import EngineOnNode


def fitting_utilization(ledger: Ledger, least_free: int) -> float:
    """The largest --gpu-memory-utilization (2 decimals) that passes the startup check (§2)."""
    return min(ledger.engine.memory_fraction, starting_utilization(ledger.gpu_total_bytes, least_free))


def restart_capacity(replay: WhatIf, free: Mapping[int, int]) -> int:
    """Tokens per rank a restart gets with `free` bytes free on each GPU: all of it if the share fits,
    else what the largest utilisation that starts would give."""
    ledger, least = replay.ledger, min(free.values())
    if least >= math.ceil(ledger.gpu_total_bytes * ledger.engine.memory_fraction):
        return replay.capacity()
    fitting = fitting_utilization(ledger, least)
    if fitting <= 0:
        return 0
    return replay.capacity(ledger.settings.model_copy(update={"gpu_memory_utilization": fitting}))


def restart_ledger(replay: WhatIf, free: Mapping[int, int], settings: LaunchSettings) -> Ledger | None:
    """A restart with `settings`: its budget is a share of the total whatever is free, and it refuses to
    start where a GPU has less free than that share (§2)."""
    solved = replay.solve(settings)
    if solved is None or min(free.values()) < math.ceil(solved.gpu_total_bytes * solved.engine.memory_fraction):
        return None
    return solved


def spread_evidence(ledger: Ledger, tokens: int, ranks: str) -> str:
    share = ledger.engine.memory_fraction
    needed = math.ceil(ledger.gpu_total_bytes * share)
    return (
        f"vLLM budgets {share:g} × total, whatever is free; a restart needs {gib(needed)} free on every GPU"
    )


def fp8_kv_dtype(ledger: Ledger) -> str:
    """`fp8_ds_mla` for DeepSeek sparse attention (its kernels' layout), else `fp8_e4m3`."""
    return "fp8_ds_mla" if ledger.model.attention_kind is AttentionKind.DSA else "fp8_e4m3"


def layout_alternatives(ledger: Ledger, attn_tp: int) -> list[LaunchSettings]:
    """Smaller-TP replicas over the same GPUs (vLLM spreads attention over DP alone); MoE keeps
    its experts spread with --enable-expert-parallel."""
    s = ledger.settings
    groups = max(1, s.tp // attn_tp)
    update: dict[str, object] = {"tp": attn_tp, "dp": groups * s.dp, "enable_dp_attention": False}
    if ledger.model.moe is not None:
        update["enable_expert_parallel"] = True
    return [s.model_copy(update=update)]


RESERVE_EXCESS_BYTES = 1 << 30  # a KV pool this much below the prediction is a reserve, not rounding


def reported_kv_memory(ledger: Ledger, reported_kv_pool_bytes: int | None) -> int | None:
    """vLLM's reported KV pool, when it is below the predicted available KV memory by a GiB or more:
    its runtime reserve (CUDA-graph estimate, activations) took the difference (§2)."""
    if (
        reported_kv_pool_bytes is None
        or ledger.engine.kv_budget_bytes - reported_kv_pool_bytes <= RESERVE_EXCESS_BYTES
    ):
        return None
    return reported_kv_pool_bytes


def absolute_budget(ledger: Ledger, kv_bytes: int) -> dict[str, int | float] | None:
    """`--kv-cache-memory-bytes`: vLLM skips its profile and gives KV exactly that, whatever the
    utilisation (§2 Override); None before the release that has it."""
    if not has_kv_cache_memory_bytes(ledger.version) or kv_bytes < 1:
        return None
    return {"kv_cache_memory_bytes": kv_bytes}


def reserve_finding(engine: EngineOnNode, thresholds: Thresholds) -> Finding | None:
    """`reserve_larger_than_expected`: the engine's KV pool is smaller than the predicted available KV memory."""
    assert engine.ledger is not None and engine.replay is not None
    pools = [r.observed.kv_pool_bytes for r in engine.ranks.values() if r.observed.kv_pool_bytes]
    if not pools:
        return None
    ledger, replay = engine.ledger, engine.replay
    observed, predicted = min(pools), ledger.engine.kv_budget_bytes
    extra = predicted - observed
    if extra <= thresholds.reserve_excess_bytes:
        return None
    util, total = ledger.engine.memory_fraction, ledger.gpu_total_bytes
    raised = min(0.99, math.ceil((util + extra / total) * 10000) / 10000)
    now = replay.capacity(available_kv_bytes=observed)
    fixed = ledger.settings.model_copy(update={"gpu_memory_utilization": raised})
    more = math.ceil(total * raised) - math.ceil(total * util)
    gain = replay.capacity(fixed, available_kv_bytes=observed + more) - now
    lost = replay.capacity() - now
    return engine.finding(
        rule="reserve_larger_than_expected",
        severity=Severity.WARNING,
        summary=f"vLLM keeps {gib(extra)} more outside the KV cache than predicted: −{lost:,} tokens per rank",
        bytes=extra,
        tokens=max(lost, 0),
        fix=f"--gpu-memory-utilization {raised:g}",
        gain_tokens=max(gain, 0),
        evidence=(
            f"engine KV cache {gib(observed)} per rank; predicted available KV memory {gib(predicted)}",
            f"--gpu-memory-utilization {util:g} acts like {util - extra / total:.4f}: since v0.20 vLLM reserves "
            "its CUDA-graph estimate, which can overshoot (vLLM #45178); "
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 turns it off",
        ),
        fix_settings=fixed,
    )


def restart_finding(engine: EngineOnNode) -> Finding | None:
    """`restart_will_not_fit`: a restart refuses to start when a GPU has less free than utilisation × total (§2)."""
    assert engine.ledger is not None and engine.replay is not None
    now = engine.now()
    tight = min(now, key=lambda g: now[g])
    ledger = engine.ledger
    total, capacity, fraction = ledger.gpu_total_bytes, ledger.token_capacity, ledger.engine.memory_fraction
    needed = math.ceil(total * fraction)
    if now[tight] >= needed:
        return None
    fitting = fitting_utilization(ledger, now[tight])
    fixed = ledger.settings.model_copy(update={"gpu_memory_utilization": fitting}) if fitting > 0 else None
    gain = engine.replay.capacity(fixed) if fixed else 0
    return engine.finding(
        rule="restart_will_not_fit",
        severity=Severity.CRITICAL,
        gpus=(tight,),
        bytes=needed - now[tight],
        tokens=capacity,
        summary=f"a restart of {engine.id} fails: GPU {tight} would have {gib(now[tight])} free, vLLM needs {gib(needed)}",
        fix=f"--gpu-memory-utilization {fitting:.2f}"
        if fixed
        else f"free {gib(needed - now[tight])} on GPU {tight}",
        gain_tokens=gain,
        fix_settings=fixed,
        evidence=(
            f"vLLM: 'Free memory on device ({gib(now[tight])}/{gib(total)}) on startup is less than desired "
            f"GPU memory utilization ({fraction:g}, {gib(needed)})'",
            f"at {fitting:.2f}: {gain:,} tokens per rank (now {capacity:,})",
        ),
    )


def _hybrid_manager_disabled(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """`hybrid_kv_manager_disabled`: `--disable-hybrid-kv-cache-manager` caches sliding-window layers at full length."""
    s = ledger.settings
    swa = len(ledger.model.layers_of(LayerKind.SLIDING))
    if not s.disable_hybrid_kv_cache_manager or not swa:
        return None
    fixed = s.model_copy(update={"disable_hybrid_kv_cache_manager": False})
    gain = replay.capacity(fixed) - ledger.token_capacity
    if gain <= 0:
        return None
    gpus, ranks = all_ranks(ledger)
    layers = ledger.model.num_layers
    change, start = capacity_change(ledger.token_capacity, ledger.token_capacity + gain, "tokens with the hybrid manager")
    return Finding(
        rule="hybrid_kv_manager_disabled",
        severity=advice_severity(gain, ledger.token_capacity, thresholds),
        summary=f"vLLM's hybrid KV cache manager is disabled: {swa} sliding-window layers cost full length",
        gpus=gpus,
        ranks=ranks,
        bytes=ledger.engine.kv_pool_bytes * swa // layers,
        tokens=gain,
        fix="remove --disable-hybrid-kv-cache-manager (and any KV connector that forces it)",
        gain_tokens=gain,
        evidence=(
            f"window {spec_window(ledger.model, ledger.version) or 0:,} tokens on {swa} of {layers} layers, "
            f"cached for all {ledger.context_length:,}",
            change,
        ),
        fix_settings=fixed,
        start=start,
    )


ledger_rules: Sequence[LedgerRule] = (_hybrid_manager_disabled,)
