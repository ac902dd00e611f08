"""Findings, their thresholds, the planner replay, and the rules that need only a ledger.

A finding names one cause of lost KV capacity, what it costs (bytes per rank, tokens per rank),
the exact change that removes it and what that change gains. Token figures are never guessed
from an exchange rate where the planner can say: `Replay` re-solves the ledger with the cause
removed (same model, GPU and measured inputs) and the difference is the answer.
"""

from __future__ import annotations

from kvtop.domain.diagnose_findings import (
    Finding,
    LayoutOptions,
    LedgerRule,
    Rule,
    Severity,
    Thresholds,
    advice_severity,
    all_ranks,
    capacity_change,
    larger_plan,
    node_tokens,
)
from kvtop.domain.diagnose_headroom import headroom_short
from kvtop.domain.engines.registry import engine_flags, engine_rules
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_change import change_words, launch_change, launch_words, setting_name
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.ledger_values import WhatIf
from kvtop.domain.whatif import Replay
from kvtop.domain.wording import counted, gib, signed


def _sixteen_bit_dtype(ledger: Ledger) -> str | None:
    """The engine's `--dtype` spelling that builds the model in 16 bits (bfloat16, else float16), where its
    load casts have one (`LoadCasts.dtypes`); None for an engine with no such flag."""
    widths = dict(engine_flags(ledger.settings.engine).load_casts.dtypes)
    return next((name for name in ("bfloat16", "float16") if widths.get(name) == 2), None)


def _fp32_kv(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """A float32 KV cache (a float32 checkpoint served as stored, or `--dtype float32`): a 16-bit `--dtype`
    halves the KV cell and the weights, before any FP8 trade-off is worth weighing."""
    dtype = _sixteen_bit_dtype(ledger)
    if ledger.kv_format != "fp32" or not ledger.engine.fits or dtype is None:
        return None
    fixed = ledger.settings.model_copy(update={"dtype": dtype})
    alt = larger_plan(ledger, replay, fixed)
    if alt is None:
        return None
    gain = alt.token_capacity - ledger.token_capacity
    cell, cell16 = ledger.kv_bytes_per_token, alt.kv_bytes_per_token
    words = change_words(ledger.settings, fixed)  # the engine's spelling at the plan's release
    change, start = capacity_change(ledger.token_capacity, alt.token_capacity)
    return Finding(
        rule=Rule.FP32_KV_CACHE, severity=advice_severity(gain, ledger.token_capacity, thresholds),
        summary=f"KV cache and weights are float32: {words} halves both, +{gain:,} tokens per rank",
        bytes=(cell - cell16) * ledger.token_capacity, tokens=gain, gain_tokens=gain, fix=words,
        bytes_words=f"today's tokens take this much less KV in {dtype}; the halved weights grow the pool too",
        evidence=(
            f"KV bytes per token per rank: {cell:,} B (fp32) → {cell16:,} B ({dtype})",
            f"weights per rank: {gib(ledger.weights_bytes)} → {gib(alt.weights_bytes)}",
            change,
            "float16 where the GPU has no bfloat16 (before Ampere); FP8 KV is a further step once 16-bit",
        ),
        fix_settings=fixed, start=start,
    )  # fmt: skip


def _fp8_kv(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """A 16-bit KV cache where the engine has FP8 KV (a float32 one is `_fp32_kv`'s first, where the engine
    can serve the model in 16 bits)."""
    sixteen = ("bf16", "fp16") if _sixteen_bit_dtype(ledger) else ("bf16", "fp16", "fp32")
    if ledger.kv_format not in sixteen or not ledger.engine.fits:
        return None
    rules = engine_rules(ledger.settings.engine)
    dtype = rules.diagnosis.fp8_kv_dtype(ledger)
    fixed = ledger.settings.model_copy(update={"kv_cache_dtype": dtype})
    alt = larger_plan(ledger, replay, fixed)
    if alt is None:
        return None
    gain = alt.token_capacity - ledger.token_capacity
    cell, cell8 = ledger.kv_bytes_per_token, alt.kv_bytes_per_token
    change, start = capacity_change(ledger.token_capacity, alt.token_capacity)
    return Finding(
        rule=Rule.BF16_KV_WHERE_FP8_SUPPORTED, severity=Severity.INFO,
        summary=f"KV cache is {ledger.kv_format}; {rules.display_name} supports FP8 KV: +{gain:,} tokens per rank",
        bytes=(cell - cell8) * ledger.token_capacity, tokens=gain, gain_tokens=gain,
        bytes_words="today's tokens take this much less KV in FP8; nothing is freed: the pool keeps its size and holds more",
        fix=change_words(ledger.settings, fixed),
        evidence=(
            f"KV bytes per token per rank: {cell:,} B ({ledger.kv_format}) → {cell8:,} B (FP8)",
            change,
            "quality: FP8 E4M3 KV without calibrated scales can lose accuracy on long-context and reasoning tasks; check evals first",
        ),
        fix_settings=fixed, start=start,
    )  # fmt: skip


def _reserve_below_engines_own(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """A memory share above the one the engine would choose leaves less runtime reserve than the engine
    keeps for CUDA graphs and activations itself: the pool fits, the graphs or a busy batch may not."""
    e = ledger.engine
    if not e.fits or e.reserve_short_bytes < thresholds.reserve_excess_bytes or e.reserve_needed_bytes is None:
        return None
    rules = engine_rules(ledger.settings.engine)
    if rules.memory_fraction_field is None:  # no share of memory to drop
        return None
    fixed = ledger.settings.model_copy(update={rules.memory_fraction_field: None})
    alt = replay.solve(fixed)
    flag = setting_name(fixed, rules.memory_fraction_field, e.memory_fraction)
    return Finding(
        rule=Rule.RESERVE_BELOW_ENGINES_OWN, severity=Severity.WARNING,
        summary=f"{flag} {e.memory_fraction:g} leaves {gib(e.reserve_bytes)} of runtime reserve; "
        f"{rules.display_name} keeps {gib(e.reserve_needed_bytes)} itself: out-of-memory risk",
        bytes=e.reserve_short_bytes, fix=f"{change_words(ledger.settings, fixed) or 'drop ' + flag} (the engine's own share)",
        evidence=(
            f"runtime reserve {gib(e.reserve_bytes)} at {flag} {e.memory_fraction:g}; the engine's own share keeps "
            f"{gib(e.reserve_needed_bytes)} for CUDA graphs, activations and the multimodal cache",
            "a reserve below the engine's own can fail its CUDA-graph capture at start, or a large batch later",
            *(
                (f"at the engine's own share: {alt.token_capacity:,} tokens per rank "
                 f"({signed(alt.token_capacity - ledger.token_capacity)}), the price of the safety",)
                if alt else ()
            ),
        ),
        fix_settings=fixed,
    )  # fmt: skip


def _best_layout(
    ledger: Ledger, replay: WhatIf, options: LayoutOptions
) -> tuple[LaunchSettings, Ledger, Ledger] | None:
    """(settings, ledger) of the alternative with the most node tokens, and the current layout solved alike."""
    base = replay.solve(new_layout=True)
    if base is None:
        return None
    best: tuple[LaunchSettings, Ledger, Ledger] | None = None
    for alt in options.layouts:
        solved = replay.solve(alt, new_layout=True)
        if solved is None or not solved.engine.fits:
            continue
        if best is None or node_tokens(solved) > node_tokens(best[1]):
            best = (alt, solved, base)
    return best


def _layout_finding(
    ledger: Ledger, replay: WhatIf, thresholds: Thresholds, *, rule: str, copies: int, attn_tp: int, why: str
) -> Finding:
    gpus, ranks = all_ranks(ledger)
    wasted = ledger.engine.kv_pool_bytes * (copies - 1) // copies
    rules = engine_rules(ledger.settings.engine)
    options = rules.diagnosis.layout_alternatives(ledger, attn_tp)
    best = _best_layout(ledger, replay, options)
    evidence = [why, f"{gib(wasted)} of each rank's {gib(ledger.engine.kv_pool_bytes)} KV pool holds copies"]
    if best is None or node_tokens(best[1]) <= node_tokens(best[2]):
        if options.none_because is not None:  # the engine's own reason: its release runs no such layout
            release = f"{rules.display_name} {ledger.version.label}"
            verdict, fix = "no better layout runs", f"none on {release}: it runs no attention TP {attn_tp} over these GPUs"
            evidence.append(options.none_because)
        elif best is None:
            verdict, fix = "no better layout fits", f"none at this GPU size: {ledger.layout.describe()} is needed for the weights"
            evidence.append("no layout with smaller attention TP fits these GPUs")
        else:
            verdict, fix = "no better layout holds more", f"none: {best[1].layout.describe()} holds no more tokens on the node"
            evidence.append(f"{best[2].layout.describe()}: {node_tokens(best[2]):,} tokens on the node; "
                            f"{best[1].layout.describe()}: {node_tokens(best[1]):,}")  # fmt: skip
        return Finding(
            rule=rule, severity=Severity.INFO, summary=f"attention TP {ledger.layout.attn_tp}: KV copied {copies}× per rank; {verdict}",
            gpus=gpus, ranks=ranks, bytes=wasted, tokens=0, fix=fix, evidence=tuple(evidence),
        )  # fmt: skip
    alt, solved, base = best
    gain = node_tokens(solved) - node_tokens(base)
    per_rank = solved.token_capacity - base.token_capacity
    evidence.append(
        f"{base.layout.describe()}: {node_tokens(base):,} tokens on the node → {solved.layout.describe()}: "
        f"{solved.token_capacity:,} × {solved.layout.dp} pools = {node_tokens(solved):,}"
    )  # fmt: skip
    flags = launch_words(alt.engine_launch())  # the whole layout as the engine takes it (TensorRT-LLM's YAML too)
    change, start = capacity_change(base.token_capacity, solved.token_capacity, f"tokens per pool ({signed(per_rank)})")
    return Finding(
        rule=rule, severity=advice_severity(gain, node_tokens(ledger), thresholds),
        summary=f"attention TP {ledger.layout.attn_tp} copies the KV {copies}× per rank: {solved.layout.describe()} holds +{gain:,} tokens on the node",
        gpus=gpus, ranks=ranks, bytes=wasted, tokens=gain, fix=flags, gain_tokens=gain,
        evidence=(*evidence, change),
        fix_settings=alt, start=start,
    )  # fmt: skip


def _tp_above_kv_heads(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    model, attn_tp = ledger.model, ledger.layout.attn_tp
    if model.mla is not None or attn_tp <= model.num_kv_heads:
        return None
    copies = attn_tp // model.num_kv_heads
    why = f"{model.num_kv_heads} KV heads over attention TP {attn_tp}: one head per rank, each head held by {copies} ranks"
    return _layout_finding(ledger, replay, thresholds, rule="tp_above_kv_heads", copies=copies, attn_tp=model.num_kv_heads, why=why)  # fmt: skip


def _mla_under_tp(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    if ledger.model.mla is None or ledger.layout.attn_tp <= 1:
        return None
    attn_tp = ledger.layout.attn_tp
    why = f"MLA keeps one latent per token; attention TP {attn_tp} does not divide it, so every rank of the group holds it"
    return _layout_finding(ledger, replay, thresholds, rule="mla_under_attention_tp", copies=attn_tp, attn_tp=1, why=why)  # fmt: skip


def weights_cause(ledger: Ledger, replay: WhatIf, observed: int, excess: int) -> tuple[str, str]:
    """`weights_larger_than_predicted`'s likeliest cause of weights above the prediction, with its numbers, and the change for it."""
    model, settings = ledger.model, ledger.settings
    ratio = observed / ledger.weights_bytes
    speculative = sorted(k for k in settings.flags if k.startswith("speculative"))
    if model.mtp_layers and not replay.load_mtp:
        mtp = _mtp_bytes(ledger)
        if mtp and abs(excess - mtp) <= 0.15 * mtp:
            return (f"matches the {counted(model.mtp_layers, 'MTP layer')} ({gib(mtp)}) loaded for speculative decoding",
                    "expected with speculative decoding: plan with --load-mtp")  # fmt: skip
    if speculative:
        return (f"a draft model is loaded ({', '.join('--' + k for k in speculative)}): its weights count on every rank",
                "plan the draft model's weights too, or drop speculative decoding")  # fmt: skip
    if 1.9 <= ratio <= 2.1:
        field, value = ("quantization", model.quant.method) if model.quant.quantized else (
            "dtype", "bfloat16" if model.dtype_bytes == 2 else "auto")  # fmt: skip
        # as the engine's launch writes it at the plan's release; a value the launch already has, or a field its launch
        # holds no setting for (TensorRT-LLM's PyTorch backend: the checkpoint's quantization), said so
        change = launch_change(settings, settings.model_copy(update={field: value}))
        wanted = (f"the launch already sets {field} {value}: check the checkpoint's own config against it"
                  if getattr(settings, field) == value else
                  f"load it as {value} (its {field}: not a setting of this engine's launch here, the checkpoint's own)"
                  if change.spelled_by or change.empty else change.said())  # fmt: skip
        return (f"{ratio:.2f}× the prediction: held at twice the bytes per parameter (a wider dtype, or a quantized checkpoint loaded unquantized)", wanted)  # fmt: skip
    heads = [row for row in ledger.ranks[0].weights.rows if row.component == "lm_head"]
    if heads and heads[0].bytes_per_param < model.dtype_bytes:
        unquantized = heads[0].params * model.dtype_bytes - heads[0].bytes
        if abs(excess - unquantized) <= 0.15 * max(unquantized, 1):
            return (f"matches an unquantized LM head ({gib(unquantized)} more at {model.dtype_bytes} B per parameter)",
                    "expected when the engine keeps the LM head unquantized: no change; plan with it")  # fmt: skip
    return (f"{ratio:.2f}× the prediction: a dtype or quantization mismatch, or extra modules (LoRA, vision tower)",
            "check --dtype, --quantization and speculative/LoRA flags against the checkpoint")  # fmt: skip


def _mtp_bytes(ledger: Ledger) -> int:
    """Weights per rank the MTP/next-n layers add when speculative decoding loads them."""
    with_mtp = predict(ledger.model, ledger.settings, gpu_total_bytes=ledger.gpu_total_bytes, load_mtp=True)
    return with_mtp.weights_bytes - ledger.weights_bytes


LEDGER_RULES: tuple[LedgerRule, ...] = (_fp32_kv, _fp8_kv, _tp_above_kv_heads, _mla_under_tp, _reserve_below_engines_own)


def ledger_findings(ledger: Ledger, thresholds: Thresholds) -> list[Finding]:
    """The ledger-only rules: what the plan alone says (no live node needed); the engine adds its own."""
    replay = Replay(ledger)
    rules = (*LEDGER_RULES, headroom_short, *engine_rules(ledger.settings.engine).diagnosis.ledger_rules)
    return [f for rule in rules if (f := rule(ledger, replay, thresholds))]
