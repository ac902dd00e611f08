"""Findings, their thresholds, the planner replay, and the rules that need only a ledger.

A finding names one cause of lost KV capacity, what it costs (bytes per rank, tokens per rank),
the exact change that removes it and what that change gains. Token figures are never guessed
from an exchange rate where the planner can say: `Replay` re-solves the ledger with the cause
removed (same model, GPU and measured inputs) and the difference is the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from pydantic import BaseModel, ConfigDict

from kvtop.domain.capacity import CapacityCause
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.keep_running import FlagAlternative
from kvtop.domain.launch import LaunchSettings, spelling_of
from kvtop.domain.ledger import Ledger, RankLedger, predict
from kvtop.domain.whatif import Replay
from kvtop.domain.wording import GIB, gib, signed


class Severity(str, Enum):
    CRITICAL = "critical"  # the engine cannot serve, or will not start again as configured
    WARNING = "warning"  # capacity is lost now and a stated change wins it back
    INFO = "info"  # a trade-off worth knowing (e.g. FP8 KV); not a fault

    def __str__(self) -> str:
        return self.value


class Rule(str, Enum):
    """What a finding is about: one id per rule, stable in JSON, metrics and the UI."""

    CO_TENANT = "co_tenant"
    UNATTRIBUTED_BYTES = "unattributed_bytes"
    ORPHAN_WORKER = "orphan_worker"
    RANK_IMBALANCE = "rank_imbalance"
    WEIGHTS_LARGER_THAN_PREDICTED = "weights_larger_than_predicted"
    RESERVE_LARGER_THAN_EXPECTED = "reserve_larger_than_expected"
    RESTART_WILL_NOT_FIT = "restart_will_not_fit"
    UNEXPLAINED_BYTES = "unexplained_bytes"
    GPU_LOST = "gpu_lost"
    BF16_KV_WHERE_FP8_SUPPORTED = "bf16_kv_where_fp8_supported"
    TP_ABOVE_KV_HEADS = "tp_above_kv_heads"
    MLA_UNDER_ATTENTION_TP = "mla_under_attention_tp"
    REQ_TO_TOKEN_LARGE = "req_to_token_large"
    MAMBA_STATE_CAPS_REQUESTS = "mamba_state_caps_requests"
    HYBRID_KV_MANAGER_DISABLED = "hybrid_kv_manager_disabled"
    BF16_KV_WHERE_INT8_SUPPORTED = "bf16_kv_where_int8_supported"  # LMDeploy's --quant-policy 8
    SESSION_LEN_TRUNCATED = "session_len_truncated"  # TurboMind cut session_len to what its blocks hold
    KV_CAP_BINDS = "kv_cap_binds"
    IDLE_GPU = "idle_gpu"  # a GPU no process uses on a node whose engines could
    PREEMPTING_WITH_ROOM = "preempting_with_room"  # the pool preempts while the GPUs have room to grow it
    PREEMPTING_POOL_FULL = "preempting_pool_full"  # the pool preempts with no room: admit fewer requests
    HEADROOM_SHORT = "headroom_short"  # what the pool leaves is short of what later phases allocate
    HOST_TIER_WOULD_NOT_FIT = "host_tier_would_not_fit"  # a restart's host KV tier exceeds the host's memory
    RESERVE_BELOW_ENGINES_OWN = "reserve_below_engines_own"  # a memory share above the engine's own  # TensorRT-LLM's max_tokens / max_gpu_total_bytes sizes the pool

    def __str__(self) -> str:
        return self.value


SEVERITY_ORDER = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.INFO: 2}


class Finding(BaseModel):
    """One cause of missing capacity, quantified, with the change that removes it.

    Info findings are advice (trade-offs such as FP8 KV); for them `tokens` is what the change
    would gain. The TP/MLA layout rules count tokens over all KV pools of the node.
    """

    model_config = ConfigDict(frozen=True)

    rule: Rule
    severity: Severity
    summary: str  # one line a person reads first
    engine_id: str | None = None
    gpus: tuple[int, ...] = ()
    ranks: tuple[str, ...] = ()  # "sglang:4242/tp3"; ledger-only findings: "tp3"
    bytes: int = 0  # what the cause holds or wastes on each affected rank
    tokens: int = 0  # KV tokens per rank it costs (planner: without − with); layout rules: node total
    fix: str  # the exact change: a flag string, or "kill 4243 (…)"
    gain_tokens: int = 0  # what the fix wins back, per rank (planner)
    gain_needs_restart: bool = False  # the KV pool is sized at start-up: the gain needs a restart
    # whole GPUs out of service (lost, or held by a dead server's workers with no engine on them) or unused:
    # the largest capacity loss there is, counted in GPUs where no engine's tokens can price it
    whole_gpus: int = 0
    pids: tuple[int, ...] = ()  # the processes the fix stops (co-tenants, orphans), when it names any
    evidence: tuple[str, ...] = ()  # one-line facts with their numbers
    fix_settings: LaunchSettings | None = None  # the settings with the fix applied (planner what-if)
    # the other way out of a fix that stops processes: leave them running, move the engine's memory flag
    alternative: FlagAlternative | None = None
    # the capacity waterfall's term this finding explains (its tokens are that term's, as a cost)
    cause: CapacityCause | None = None
    term_tokens: int | None = None  # the term's own (signed) tokens: clean + Σ terms = actual


class Thresholds(BaseModel):
    """When a measured difference becomes a finding."""

    model_config = ConfigDict(frozen=True)

    unexplained_bytes: int = GIB  # per rank, observed worker bytes above the predicted resident bytes
    weights_excess_fraction: float = 0.03  # engine-reported weights above the prediction
    imbalance_bytes: int = GIB  # free-memory spread between ranks, other processes discounted
    req_to_token_bytes: int = GIB
    reserve_excess_bytes: int = GIB  # vLLM: engine KV pool below the predicted available KV memory
    reserve_loss_fraction: float = 0.02  # SGLang: a lower mem_fraction_static costing this share of capacity
    advice_gain_fraction: float = 0.10  # layout/flag advice is a warning when it gains this share


def rank_label(row: RankLedger, ledger: Ledger, engine_id: str | None = None) -> str:
    """'tp3', 'dp1/tp0', 'pp1/tp2', prefixed by the engine id when known."""
    parts = []
    if ledger.layout.dp > 1:
        parts.append(f"dp{row.dp_rank}")
    if ledger.layout.pp > 1:
        parts.append(f"pp{row.pp_rank}")
    parts.append(f"tp{row.tp_rank}")
    label = "/".join(parts)
    return f"{engine_id}/{label}" if engine_id else label


def node_tokens(ledger: Ledger) -> int:
    """Tokens held by every KV pool of the layout: capacity × DP ranks (attention DP or replicas)."""
    return ledger.token_capacity * ledger.layout.dp


def advice_severity(gain: int, base: int, thresholds: Thresholds) -> Severity:
    """Advice is a warning when it gains `advice_gain_fraction` of the capacity, else info."""
    return Severity.WARNING if base > 0 and gain >= thresholds.advice_gain_fraction * base else Severity.INFO


def all_ranks(ledger: Ledger) -> tuple[tuple[int, ...], tuple[str, ...]]:
    return tuple(r.gpu_index for r in ledger.ranks), tuple(rank_label(r, ledger) for r in ledger.ranks)


def _fp8_kv(ledger: Ledger, replay: Replay, thresholds: Thresholds) -> Finding | None:
    if ledger.kv_format not in ("bf16", "fp16", "fp32") or not ledger.engine.fits:
        return None
    rules = engine_rules(ledger.settings.engine)
    dtype = rules.diagnosis.fp8_kv_dtype(ledger)
    fixed = ledger.settings.model_copy(update={"kv_cache_dtype": dtype})
    alt = replay.solve(fixed)
    if alt is None or alt.token_capacity <= ledger.token_capacity:
        return None
    gain = alt.token_capacity - ledger.token_capacity
    cell, cell8 = ledger.kv_bytes_per_token, alt.kv_bytes_per_token
    return Finding(
        rule="bf16_kv_where_fp8_supported", severity=Severity.INFO,
        summary=f"KV cache is {ledger.kv_format}; {rules.display_name} supports FP8 KV: +{gain:,} tokens per rank",
        bytes=(cell - cell8) * ledger.token_capacity, tokens=gain, gain_tokens=gain,
        fix=f"{spelling_of(ledger.settings.engine, 'kv_cache_dtype')} {dtype}",
        evidence=(
            f"KV bytes per token per rank: {cell:,} B ({ledger.kv_format}) → {cell8:,} B (FP8)",
            f"capacity {ledger.token_capacity:,} → {alt.token_capacity:,} tokens per rank",
            "quality: FP8 E4M3 KV without calibrated scales can lose accuracy on long-context and reasoning tasks; check evals first",
        ),
        fix_settings=fixed,
    )  # fmt: skip


def _reserve_below_engines_own(ledger: Ledger, replay: Replay, thresholds: Thresholds) -> Finding | None:
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
    flag = spelling_of(ledger.settings.engine, rules.memory_fraction_field)
    return Finding(
        rule=Rule.RESERVE_BELOW_ENGINES_OWN, severity=Severity.WARNING,
        summary=f"{flag} {e.memory_fraction:g} leaves {gib(e.reserve_bytes)} of runtime reserve; "
        f"{rules.display_name} keeps {gib(e.reserve_needed_bytes)} itself: out-of-memory risk",
        bytes=e.reserve_short_bytes, fix=f"drop {flag} (the engine's own share)",
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


def _best_layout(ledger: Ledger, replay: Replay, attn_tp: int) -> tuple[LaunchSettings, Ledger, Ledger] | None:  # fmt: skip
    """(settings, ledger) of the alternative with the most node tokens, and the current layout solved alike."""
    base = replay.solve(new_layout=True)
    if base is None:
        return None
    best: tuple[LaunchSettings, Ledger, Ledger] | None = None
    for alt in engine_rules(ledger.settings.engine).diagnosis.layout_alternatives(ledger, attn_tp):
        solved = replay.solve(alt, new_layout=True)
        if solved is None or not solved.engine.fits:
            continue
        if best is None or node_tokens(solved) > node_tokens(best[1]):
            best = (alt, solved, base)
    return best


def _layout_finding(
    ledger: Ledger, replay: Replay, thresholds: Thresholds, *, rule: str, copies: int, attn_tp: int, why: str
) -> Finding:
    gpus, ranks = all_ranks(ledger)
    wasted = ledger.engine.kv_pool_bytes * (copies - 1) // copies
    best = _best_layout(ledger, replay, attn_tp)
    evidence = [why, f"{gib(wasted)} of each rank's {gib(ledger.engine.kv_pool_bytes)} KV pool holds copies"]
    if best is None or node_tokens(best[1]) <= node_tokens(best[2]):
        evidence.append("no layout with smaller attention TP fits these GPUs with more tokens")
        return Finding(
            rule=rule, severity=Severity.INFO, summary=f"attention TP {ledger.layout.attn_tp}: KV copied {copies}× per rank; no better layout fits",
            gpus=gpus, ranks=ranks, bytes=wasted, tokens=0, fix=f"none at this GPU size: {ledger.layout.describe()} is needed for the weights",
            evidence=tuple(evidence),
        )  # fmt: skip
    alt, solved, base = best
    gain = node_tokens(solved) - node_tokens(base)
    per_rank = solved.token_capacity - base.token_capacity
    evidence.append(
        f"{base.layout.describe()}: {node_tokens(base):,} tokens on the node → {solved.layout.describe()}: "
        f"{solved.token_capacity:,} × {solved.layout.dp} pools = {node_tokens(solved):,}"
    )  # fmt: skip
    flags = " ".join(alt.to_flags())
    return Finding(
        rule=rule, severity=advice_severity(gain, node_tokens(ledger), thresholds),
        summary=f"attention TP {ledger.layout.attn_tp} copies the KV {copies}× per rank: {solved.layout.describe()} holds +{gain:,} tokens on the node",
        gpus=gpus, ranks=ranks, bytes=wasted, tokens=gain, fix=flags, gain_tokens=gain,
        evidence=(*evidence, f"per pool: {base.token_capacity:,} → {solved.token_capacity:,} tokens ({per_rank:+,})"),
        fix_settings=alt,
    )  # fmt: skip


def _tp_above_kv_heads(ledger: Ledger, replay: Replay, thresholds: Thresholds) -> Finding | None:
    model, attn_tp = ledger.model, ledger.layout.attn_tp
    if model.mla is not None or attn_tp <= model.num_kv_heads:
        return None
    copies = attn_tp // model.num_kv_heads
    why = f"{model.num_kv_heads} KV heads over attention TP {attn_tp}: one head per rank, each head held by {copies} ranks"
    return _layout_finding(ledger, replay, thresholds, rule="tp_above_kv_heads", copies=copies, attn_tp=model.num_kv_heads, why=why)  # fmt: skip


def _mla_under_tp(ledger: Ledger, replay: Replay, thresholds: Thresholds) -> Finding | None:
    if ledger.model.mla is None or ledger.layout.attn_tp <= 1:
        return None
    attn_tp = ledger.layout.attn_tp
    why = f"MLA keeps one latent per token; attention TP {attn_tp} does not divide it, so every rank of the group holds it"
    return _layout_finding(ledger, replay, thresholds, rule="mla_under_attention_tp", copies=attn_tp, attn_tp=1, why=why)  # fmt: skip


def weights_cause(ledger: Ledger, replay: Replay, observed: int, excess: int) -> tuple[str, str]:
    """`weights_larger_than_predicted`'s likeliest cause of weights above the prediction, with its numbers, and the change for it."""
    model, settings = ledger.model, ledger.settings
    ratio = observed / ledger.weights_bytes
    speculative = sorted(k for k in settings.flags if k.startswith("speculative"))
    if model.mtp_layers and not replay.load_mtp:
        mtp = _mtp_bytes(ledger)
        if mtp and abs(excess - mtp) <= 0.15 * mtp:
            return (f"matches the {model.mtp_layers} MTP layer(s) ({gib(mtp)}) loaded for speculative decoding",
                    "expected with speculative decoding: plan with --load-mtp")  # fmt: skip
    if speculative:
        return (f"a draft model is loaded ({', '.join('--' + k for k in speculative)}): its weights count on every rank",
                "plan the draft model's weights too, or drop speculative decoding")  # fmt: skip
    if 1.9 <= ratio <= 2.1:
        wanted = (f"--quantization {model.quant.method}" if model.quant.quantized else f"--dtype {'bfloat16' if model.dtype_bytes == 2 else 'auto'}")  # fmt: skip
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


LedgerRule = Callable[[Ledger, Replay, Thresholds], "Finding | None"]
LEDGER_RULES: tuple[LedgerRule, ...] = (_fp8_kv, _tp_above_kv_heads, _mla_under_tp, _reserve_below_engines_own)


def ledger_findings(ledger: Ledger, thresholds: Thresholds) -> list[Finding]:
    """The ledger-only rules: what the plan alone says (no live node needed); the engine adds its own."""
    from kvtop.domain.diagnose_headroom import headroom_short  # it builds on this module's Finding

    replay = Replay(ledger)
    rules = (*LEDGER_RULES, headroom_short, *engine_rules(ledger.settings.engine).diagnosis.ledger_rules)
    return [f for rule in rules if (f := rule(ledger, replay, thresholds))]
