"""How vLLM's rules price a cause and what its fixes are (docs/engines/vllm.md §2–§4).

Up to v0.33.0 vLLM budgets `gpu_memory_utilization × total` whatever else is on the GPU: memory others hold
does not shrink the cache, it makes a restart refuse to start when less than that share is free. Under v0.34.0's
extensible KV cache (extensible_kv.py) the cache is sized after warmup from the memory free at each worker's start,
min(requested − resident, free − resident − margin) − peak, and the start check is skipped: memory others hold shrinks
the cache, the least free GPU sizing every rank (the engine takes the fewest blocks of its workers), and raising the
utilization only helps where the request is the smaller term.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kvtop.domain.diagnose_findings import (
    Finding,
    LayoutOptions,
    LedgerRule,
    Severity,
    Thresholds,
    advice_severity,
    all_ranks,
    capacity_change,
)
from kvtop.domain.engines.vllm.budget import start_request_bytes, starting_utilization
from kvtop.domain.engines.vllm.eras import has_kv_cache_memory_bytes
from kvtop.domain.engines.vllm.extensible_kv import SOURCE as EXTENSIBLE_SOURCE
from kvtop.domain.engines.vllm.extensible_kv import extensible
from kvtop.domain.engines.vllm.windows import spec_window
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_change import change_words
from kvtop.domain.ledger_values import Ledger, WhatIf
from kvtop.domain.model import AttentionKind, LayerKind
from kvtop.domain.wording import gib

if TYPE_CHECKING:
    from kvtop.domain.diagnose_engine import EngineOnNode


#: The named state of an advice kvtop cannot give under the extensible KV cache.
NOT_MODELLED_EXTENSIBLE = "not modelled under the extensible KV cache (vLLM 0.34.0)"
#: The largest utilization vLLM takes (CacheConfig.gpu_memory_utilization ≤ 1, config/cache.py at v0.34.0); without
#: the extensible cache the advice stays at 0.99, below the start check's whole GPU.
EXTENSIBLE_MAX_UTILIZATION = 1.0
ADVICE_MAX_UTILIZATION = 0.99  # the advice's ceiling where the start check asks the share free


def covering_utilization(util: float, extra: int, total: int, ceiling: float) -> float:
    """The utilization, in ten-thousandths rounded up, that gives `extra` bytes more of `total` than `util`, at most
    `ceiling`: the reserve advice's fix."""
    return min(ceiling, math.ceil((util + extra / total) * 10000) / 10000)


def sizes_from_free(ledger: Ledger, settings: LaunchSettings | None = None) -> bool:
    """Whether vLLM sizes this launch's cache from the free memory (v0.34.0's extensible KV cache), not the share."""
    return extensible(settings or ledger.settings, ledger.version)


def fitting_utilization(ledger: Ledger, least_free: int) -> float:
    """The largest --gpu-memory-utilization (2 decimals) that passes the startup check (§2)."""
    return min(ledger.engine.memory_fraction, starting_utilization(ledger.engine_total_bytes, least_free))


def restart_capacity(replay: WhatIf, free: Mapping[int, int]) -> int:
    """Tokens per rank a restart gets with `free` bytes free on each GPU: all of it if the share fits,
    else what the largest utilisation that starts would give. The share is of CUDA's total, as the budget's
    (`Ledger.engine_total_bytes`; `request_memory`'s `init_snapshot.total_memory`), never nvidia-smi's."""
    ledger, least = replay.ledger, min(free.values())
    if sizes_from_free(ledger):  # no start check: the least free GPU's headroom sizes every rank
        return replay.capacity_at_least_free(free)
    if least >= start_request_bytes(ledger.engine_total_bytes, ledger.engine.memory_fraction):
        return replay.capacity()
    fitting = fitting_utilization(ledger, least)
    if fitting <= 0:
        return 0
    return replay.capacity(ledger.settings.model_copy(update={"gpu_memory_utilization": fitting}))


def restart_ledger(replay: WhatIf, free: Mapping[int, int], settings: LaunchSettings) -> Ledger | None:
    """A restart with `settings`: its budget is a share of the total whatever is free, and it refuses to
    start where a GPU has less free than that share (§2); under the extensible KV cache it starts, the least free
    GPU's headroom sizing every rank."""
    if sizes_from_free(replay.ledger, settings):
        return replay.at_least_free(free, settings)
    solved = replay.solve(settings)
    if solved is None:
        return None
    if min(free.values()) < start_request_bytes(solved.engine_total_bytes, solved.engine.memory_fraction):
        return None
    return solved


def spread_evidence(ledger: Ledger, tokens: int, ranks: str) -> str:
    if sizes_from_free(ledger):
        return (
            "vLLM sizes its KV cache from the memory free at each worker's start less what stays resident "
            f"(extensible KV cache, {EXTENSIBLE_SOURCE}): memory others hold shrinks it, "
            f"the least free GPU sizing all {ranks}"
        )
    share = ledger.engine.memory_fraction
    needed = start_request_bytes(ledger.engine_total_bytes, share)
    return (
        f"vLLM budgets {share:g} × total, whatever is free; a restart needs {gib(needed)} free on every GPU"
    )


def fp8_kv_dtype(ledger: Ledger) -> str:
    """`fp8_ds_mla` for DeepSeek sparse attention (its kernels' layout), else `fp8_e4m3`."""
    return "fp8_ds_mla" if ledger.model.attention_kind is AttentionKind.DSA else "fp8_e4m3"


def layout_alternatives(ledger: Ledger, attn_tp: int) -> LayoutOptions:
    """Smaller-TP replicas over the same GPUs (vLLM spreads attention over DP alone); MoE keeps
    its experts spread with --enable-expert-parallel."""
    s = ledger.settings
    groups = max(1, s.tp // attn_tp)
    update: dict[str, object] = {"tp": attn_tp, "dp": groups * s.dp, "enable_dp_attention": False}
    if ledger.model.moe is not None:
        update["enable_expert_parallel"] = True
    return LayoutOptions(layouts=(s.model_copy(update=update),))


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
    util, total = ledger.engine.memory_fraction, ledger.engine_total_bytes
    now = replay.capacity(available_kv_bytes=observed)
    lost = replay.capacity() - now
    summary = f"vLLM keeps {gib(extra)} more outside the KV cache than predicted: −{lost:,} tokens per rank"
    found = f"engine KV cache {gib(observed)} per rank; predicted available KV memory {gib(predicted)}"
    if sizes_from_free(ledger):
        return _extensible_reserve(engine, extra, observed, lost, summary, found)
    raised = covering_utilization(util, extra, total, ADVICE_MAX_UTILIZATION)
    fixed = ledger.settings.model_copy(update={"gpu_memory_utilization": raised})
    more = start_request_bytes(total, raised) - start_request_bytes(total, util)
    gain = replay.capacity(fixed, available_kv_bytes=observed + more) - now
    return engine.finding(
        rule="reserve_larger_than_expected",
        severity=Severity.WARNING,
        summary=summary,
        bytes=extra,
        tokens=max(lost, 0),
        fix=change_words(ledger.settings, fixed),  # as the copied launch writes it at the plan's release
        gain_tokens=max(gain, 0),
        evidence=(
            found,
            f"--gpu-memory-utilization {util:g} acts like {util - extra / total:.4f}: since v0.20 vLLM reserves "
            "its CUDA-graph estimate, which can overshoot (vLLM #45178); "
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 turns it off",
        ),
        fix_settings=fixed,
    )


def _extensible_reserve(
    engine: EngineOnNode, extra: int, observed: int, lost: int, summary: str, found: str
) -> Finding:
    """The reserve finding under v0.34.0's extensible KV cache: what stays resident (or the warmup's peak) came out
    larger than predicted. Resident memory lowers both terms of min(requested − resident, free − resident − margin)
    alike, so raising --gpu-memory-utilization buys what it buys in the plan: the bytes by which the request stays
    the smaller term, nothing where the free memory binds (then no fix kvtop can name)."""
    assert engine.ledger is not None and engine.replay is not None
    ledger, replay = engine.ledger, engine.replay
    util, total, predicted = ledger.engine.memory_fraction, ledger.engine_total_bytes, ledger.engine.kv_budget_bytes
    raised = covering_utilization(util, extra, total, EXTENSIBLE_MAX_UTILIZATION)
    fixed = ledger.settings.model_copy(update={"gpu_memory_utilization": raised})
    solved = replay.solve(fixed) if raised > util else None
    more = solved.engine.kv_budget_bytes - predicted if solved is not None else 0
    mechanism = (
        f"v0.34.0 sizes the cache after warmup from measured memory ({EXTENSIBLE_SOURCE}; the CUDA-graph "
        "estimate is skipped, the graphs are measured): the extra stays resident or is a larger warmup peak"
    )
    if more <= 0:
        return engine.finding(
            rule="reserve_larger_than_expected", severity=Severity.WARNING, summary=summary, bytes=extra,
            tokens=max(lost, 0), fix=NOT_MODELLED_EXTENSIBLE, gain_tokens=0,
            evidence=(found, mechanism, f"the free memory binds, not the request (--gpu-memory-utilization {util:g}): "
                      "raising it gives nothing"),
        )  # fmt: skip
    gain = replay.capacity(fixed, available_kv_bytes=observed + more) - replay.capacity(available_kv_bytes=observed)
    return engine.finding(
        rule="reserve_larger_than_expected", severity=Severity.WARNING, summary=summary, bytes=extra,
        tokens=max(lost, 0), fix=f"--gpu-memory-utilization {raised:g}", gain_tokens=max(gain, 0), fix_settings=fixed,
        evidence=(found, mechanism, f"the request binds (--gpu-memory-utilization {util:g}): {raised:g} adds "
                  f"{gib(more)} before the free memory binds"),
    )  # fmt: skip


def restart_finding(engine: EngineOnNode) -> Finding | None:
    """`restart_will_not_fit`: a restart refuses to start when a GPU has less free than utilisation × total (§2)."""
    assert engine.ledger is not None and engine.replay is not None
    now = engine.now()
    tight = min(now, key=lambda g: now[g])
    ledger = engine.ledger
    if sizes_from_free(ledger):
        return _extensible_restart(engine, tight, now)
    total, capacity, fraction = ledger.engine_total_bytes, ledger.token_capacity, ledger.engine.memory_fraction
    needed = start_request_bytes(total, fraction)
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
        fix=change_words(ledger.settings, fixed) if fixed else f"free {gib(needed - now[tight])} on GPU {tight}",
        gain_tokens=gain,
        fix_settings=fixed,
        evidence=(
            f"vLLM: 'Free memory on device ({gib(now[tight])}/{gib(total)}) on startup is less than desired "
            f"GPU memory utilization ({fraction:g}, {gib(needed)})'",
            f"at {fitting:.2f}: {gain:,} tokens per rank (now {capacity:,})",
        ),
    )


def _extensible_restart(engine: EngineOnNode, tight: int, now: Mapping[int, int]) -> Finding | None:
    """Under v0.34.0's extensible KV cache the start check is skipped (v1/worker/utils.py:783-797): a restart starts
    and the least free GPU sizes its cache. It fails only where that leaves no KV cache (`measure_kv_cache_bytes`
    clamps at 0); how much to free is then not modelled."""
    assert engine.replay is not None
    if engine.replay.capacity_at_least_free(now) > 0:
        return None
    return engine.finding(
        rule="restart_will_not_fit", severity=Severity.CRITICAL, gpus=(tight,), bytes=0,
        tokens=engine.ledger.token_capacity if engine.ledger else 0,
        summary=f"a restart of {engine.id} gets no KV cache: GPU {tight} would have {gib(now[tight])} free",
        fix=NOT_MODELLED_EXTENSIBLE, gain_tokens=0,
        evidence=(f"v0.34.0 sizes the cache from the memory free at the start less what stays resident, the peak and "
                  f"its margin ({EXTENSIBLE_SOURCE}): none is left on GPU {tight}",),
    )  # fmt: skip


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
