"""How TensorRT-LLM's rules price a cause and what its fixes are (docs/engines/trtllm.md §3–§6).

TensorRT-LLM budgets a fraction of the memory free at its profiled peak and MIN-reduces max_tokens
over every rank: memory others hold on any one GPU shrinks every rank's pool, as with SGLang. Its
fixes are its own knobs: `--kv_cache_free_gpu_memory_fraction`, the YAML's `kv_cache_config.dtype`,
`max_tokens` / `max_gpu_total_bytes`, `--max_num_tokens` (the profiled activation peak) and
`enable_attention_dp`.
"""

from __future__ import annotations

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
from kvtop.domain.engines.trtllm.budget import runtime
from kvtop.domain.engines.trtllm.eras import DEFAULT_FRACTION, caps_by_total_bytes
from kvtop.domain.launch_change import change_words
from kvtop.domain.ledger_values import Ledger, WhatIf
from kvtop.domain.wording import gib

if TYPE_CHECKING:
    from kvtop.domain.diagnose_engine import EngineOnNode

MAX_SUGGESTED_FRACTION = 0.95  # the rest of the free memory is the runtime's headroom after the peak


def spread_evidence(ledger: Ledger, tokens: int, ranks: str) -> str:
    fraction = ledger.engine.memory_fraction
    return (
        f"TensorRT-LLM MIN-reduces max_tokens over every rank: −{tokens:,} tokens on each of {ranks}: "
        f"{fraction:.2f} × the memory free at the profiled peak of the tightest GPU"
    )


def fp8_kv_dtype(ledger: Ledger) -> str:
    """`kv_cache_config.dtype: fp8` (FP8 E4M3 KV; the checkpoint's `auto` may already be FP8)."""
    return "fp8"


def layout_alternatives(ledger: Ledger, attn_tp: int) -> LayoutOptions:
    """Attention DP over the same GPUs (`enable_attention_dp: true`: each rank its own pool), for the
    MoE and MLA models TensorRT-LLM runs that way; one trtllm-serve has no replicas of its own."""
    s = ledger.settings
    if s.enable_dp_attention:
        return LayoutOptions(none_because="attention DP is on already")
    if attn_tp != 1:
        return LayoutOptions(none_because=(
            f"one trtllm-serve has no replicas of its own, and its attention DP gives attention TP 1, not {attn_tp}"
        ))  # fmt: skip
    if ledger.model.moe is None and ledger.model.mla is None:
        return LayoutOptions(none_because=(
            "one trtllm-serve has no replicas of its own; kvtop plans its attention DP for MoE and MLA models only"
        ))  # fmt: skip
    return LayoutOptions(layouts=(s.model_copy(update={"enable_dp_attention": True, "dp": s.tp}),))


def reported_kv_memory(ledger: Ledger, reported_kv_pool_bytes: int | None) -> int | None:
    """TensorRT-LLM sizes its pool from the memory free at its profiled peak: a smaller pool is measured
    free memory, not a larger reserve kvtop could name (§4)."""
    return None


def absolute_budget(ledger: Ledger, kv_bytes: int) -> dict[str, int | float] | None:
    """`kv_cache_config.max_gpu_total_bytes` (from 1.1, PR #5933; the PyTorch backend's profiled budget):
    a cap on that budget (§3 step 5), so only below TensorRT-LLM's own."""
    if not caps_by_total_bytes(ledger.version) or runtime(ledger.settings, ledger.version) != "pytorch":
        return None
    if not 0 < kv_bytes < ledger.engine.kv_budget_bytes:
        return None
    return {"max_gpu_total_bytes": kv_bytes}


def reserve_finding(engine: EngineOnNode, thresholds: Thresholds) -> Finding | None:
    """`reserve_larger_than_expected`: the engine reports fewer tokens than predicted — its profiled peak
    (activations at max_num_tokens, CUDA graphs, NCCL) kept more outside the KV cache."""
    assert engine.ledger is not None and engine.replay is not None
    seen = [r.observed.token_capacity for r in engine.ranks.values() if r.observed.token_capacity]
    ledger = engine.ledger
    if not seen or not ledger.engine.fits:
        return None
    observed, predicted = min(seen), ledger.token_capacity
    per_token = ledger.kv_bytes_per_token
    extra = (predicted - observed) * per_token
    if extra <= thresholds.reserve_excess_bytes:
        return None
    fraction = ledger.engine.memory_fraction
    raised = min(MAX_SUGGESTED_FRACTION, round(fraction + 0.05, 2))
    if raised <= fraction:
        return None
    fixed = ledger.settings.model_copy(update={"free_gpu_memory_fraction": raised})
    gain = int(observed * (raised / fraction - 1))
    return engine.finding(
        rule="reserve_larger_than_expected",
        severity=Severity.WARNING,
        summary=f"TensorRT-LLM holds {predicted - observed:,} fewer tokens per rank than predicted: its profiled peak kept {gib(extra)} more",
        bytes=extra,
        tokens=predicted - observed,
        fix=f"{change_words(ledger.settings, fixed)}, or a smaller --max_num_tokens (the profiled activation peak)",
        gain_tokens=max(gain, 0),
        evidence=(
            f"engine reports {observed:,} tokens per rank; predicted {predicted:,} at {per_token:,} B per token",
            f"the fraction {fraction:.2f} applies to the memory free at the profiled peak: at {raised:g}, "
            f"about +{max(gain, 0):,} tokens per rank",
        ),
        fix_settings=fixed,
    )


def restart_finding(engine: EngineOnNode) -> Finding | None:
    """`restart_will_not_fit`: a restart on the GPUs as they are now leaves no KV memory."""
    return restart_without_kv(engine, leaves="leaves no KV memory", evidence=(
        "TensorRT-LLM sizes every rank from the tightest: no KV block fits after the weights and the profiled peak",
    ))  # fmt: skip


def _fraction_below_default(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """`fraction_below_default`: a --kv_cache_free_gpu_memory_fraction under TensorRT-LLM's 0.9."""
    s = ledger.settings
    if (
        s.free_gpu_memory_fraction is None
        or s.free_gpu_memory_fraction >= DEFAULT_FRACTION
        or not ledger.engine.fits
    ):
        return None
    fixed = s.model_copy(update={"free_gpu_memory_fraction": DEFAULT_FRACTION})
    gain = replay.capacity(fixed) - ledger.token_capacity
    if gain <= 0:
        return None
    gpus, ranks = all_ranks(ledger)
    return Finding(
        rule="reserve_larger_than_expected",
        severity=advice_severity(gain, ledger.token_capacity, thresholds),
        summary=f"free_gpu_memory_fraction {s.free_gpu_memory_fraction:g} is below TensorRT-LLM's default 0.9: −{gain:,} tokens per rank",
        gpus=gpus,
        ranks=ranks,
        bytes=gain * ledger.kv_bytes_per_token,
        tokens=gain,
        fix=change_words(s, fixed),  # serve's option, or the YAML's key where the launch has a kv_cache_config
        gain_tokens=gain,
        evidence=(
            "the fraction applies to the memory free at the profiled peak (weights and activations already out)",
            "lower it only for runtime OOMs; the profiled peak already counts max_num_tokens' activations",
        ),
        fix_settings=fixed,
    )


def _cap_binds(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """`kv_cap_binds`: kv_cache_config.max_tokens or max_gpu_total_bytes holds the pool below what the fraction gives."""
    s = ledger.settings
    if s.kv_cache_max_tokens is None and not s.max_gpu_total_bytes:
        return None
    fixed = s.model_copy(update={"kv_cache_max_tokens": None, "max_gpu_total_bytes": None})
    gain = replay.capacity(fixed) - ledger.token_capacity
    if gain <= 0:
        return None
    which = (
        "kv_cache_config.max_tokens"
        if s.kv_cache_max_tokens is not None
        else "kv_cache_config.max_gpu_total_bytes"
    )
    gpus, ranks = all_ranks(ledger)
    return Finding(
        rule="kv_cap_binds",
        severity=Severity.INFO,
        summary=f"{which} caps the pool at {ledger.token_capacity:,} tokens per rank; the fraction would give +{gain:,}",
        gpus=gpus,
        ranks=ranks,
        bytes=gain * ledger.kv_bytes_per_token,
        tokens=gain,
        fix=f"remove {which} from the --extra_llm_api_options YAML (if the cap is not meant to leave room)",
        gain_tokens=gain,
        evidence=(f"{which} is a ceiling: TensorRT-LLM takes the smaller of it and the fraction's budget",),
        fix_settings=fixed,
    )


ledger_rules: Sequence[LedgerRule] = (_fraction_below_default, _cap_binds)
