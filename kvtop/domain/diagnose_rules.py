"""Findings, their thresholds, the planner replay, and the rules that need only a ledger.

A finding names one cause of lost KV capacity, what it costs (bytes per rank, tokens per rank),
the exact change that removes it and what that change gains. Token figures are never guessed
from an exchange rate where the planner can say: `Replay` re-solves the ledger with the cause
removed (same model, GPU and measured inputs) and the difference is the answer.
"""

from __future__ import annotations

import math
from enum import Enum

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines import MeasuredInputs
from kvtop.domain.engines.base import DEFAULT_CONTEXT_BYTES
from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, RankLedger, predict
from kvtop.domain.model import AttentionKind, LayerKind

GIB = 1 << 30


class Severity(str, Enum):
    CRITICAL = "critical"  # the engine cannot serve, or will not start again as configured
    WARNING = "warning"  # capacity is lost now and a stated change wins it back
    INFO = "info"  # a trade-off worth knowing (e.g. FP8 KV); not a fault

    def __str__(self) -> str:
        return self.value


SEVERITY_ORDER = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.INFO: 2}


class Finding(BaseModel):
    """One cause of missing capacity, quantified, with the change that removes it.

    Info findings are advice (trade-offs such as FP8 KV); for them `tokens` is what the change
    would gain. The TP/MLA layout rules count tokens over all KV pools of the node.
    """

    model_config = ConfigDict(frozen=True)

    rule: str  # stable id, e.g. "co_tenant"
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
    pids: tuple[int, ...] = ()  # the processes the fix stops (co-tenants, orphans), when it names any
    evidence: tuple[str, ...] = ()  # one-line facts with their numbers
    fix_settings: LaunchSettings | None = None  # the settings with the fix applied (planner what-if)


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


def gib(num_bytes: int | float) -> str:
    """'6.00 GiB' for evidence lines (the domain's findings carry their own one-line facts)."""
    return f"{num_bytes / GIB:,.2f} GiB"


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


def _measured_of(ledger: Ledger) -> MeasuredInputs:
    """The measured inputs a ledger was solved with (the GPU total made explicit)."""
    return ledger.measured.model_copy(update={"gpu_total_bytes": ledger.gpu_total_bytes})


class Replay:
    """Re-solve a ledger with one thing changed; everything else as the ledger had it."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.measured = _measured_of(ledger)
        self.load_mtp = ledger.load_mtp

    @property
    def free_before_load_bytes(self) -> int:
        """SGLang's pre-load free memory (min over ranks) the ledger assumed."""
        return self.measured.free_before_load_bytes or self.ledger.gpu_total_bytes - DEFAULT_CONTEXT_BYTES

    @property
    def weights_bytes(self) -> int:
        """The resident weights per rank the ledger was solved with (measured, else predicted)."""
        return self.measured.weights_bytes or self.ledger.weights_bytes

    def solve(
        self, settings: LaunchSettings | None = None, *, free_shift: int = 0, weights_shift: int = 0,
        available_kv_bytes: int | None = None, new_layout: bool = False,
    ) -> Ledger | None:  # fmt: skip
        """The ledger with `settings`, free memory moved by `free_shift`, weights by `weights_shift`.

        `available_kv_bytes` replaces vLLM's KV memory; `new_layout` drops the measurements that
        belong to the current layout (weights, free after load, the logged KV memory).
        """  # fmt: skip
        m = self.measured
        if new_layout:
            m = MeasuredInputs(
                gpu_total_bytes=m.gpu_total_bytes, free_before_load_bytes=m.free_before_load_bytes
            )
        update: dict[str, int] = {}
        if free_shift:
            update["free_before_load_bytes"] = self.free_before_load_bytes + free_shift
        if m.free_after_load_bytes is not None and (free_shift or weights_shift):
            update["free_after_load_bytes"] = m.free_after_load_bytes + free_shift - weights_shift
        if weights_shift:
            update["weights_bytes"] = self.weights_bytes + weights_shift
            if m.available_kv_bytes is not None:
                update["available_kv_bytes"] = m.available_kv_bytes - weights_shift
        if available_kv_bytes is not None:
            update["available_kv_bytes"] = available_kv_bytes
        try:
            return predict(
                self.ledger.model, settings or self.ledger.settings, gpu_total_bytes=self.ledger.gpu_total_bytes,
                gpu_name=self.ledger.gpu_name, measured=m.model_copy(update=update), load_mtp=self.load_mtp,
            )  # fmt: skip
        except KvtopError:
            return None  # the what-if is not a valid layout: it gains nothing

    def capacity(
        self, settings: LaunchSettings | None = None, *, free_shift: int = 0, weights_shift: int = 0,
        available_kv_bytes: int | None = None,
    ) -> int:  # fmt: skip
        """Token capacity per rank of `solve(...)`; 0 when it does not fit or is not a valid layout."""
        solved = self.solve(
            settings,
            free_shift=free_shift,
            weights_shift=weights_shift,
            available_kv_bytes=available_kv_bytes,
        )
        return solved.token_capacity if solved else 0


def node_tokens(ledger: Ledger) -> int:
    """Tokens held by every KV pool of the layout: capacity × DP ranks (attention DP or replicas)."""
    return ledger.token_capacity * ledger.layout.dp


def _advice(gain: int, base: int, thresholds: Thresholds) -> Severity:
    return Severity.WARNING if base > 0 and gain >= thresholds.advice_gain_fraction * base else Severity.INFO


def _all_ranks(ledger: Ledger) -> tuple[tuple[int, ...], tuple[str, ...]]:
    return tuple(r.gpu_index for r in ledger.ranks), tuple(rank_label(r, ledger) for r in ledger.ranks)


def _fp8_kv(ledger: Ledger, replay: Replay, thresholds: Thresholds) -> Finding | None:
    if ledger.kv_format not in ("bf16", "fp16", "fp32") or not ledger.engine.fits:
        return None
    vllm_dsa = ledger.settings.engine == "vllm" and ledger.model.attention_kind is AttentionKind.DSA
    dtype = "fp8_ds_mla" if vllm_dsa else "fp8_e4m3"
    fixed = ledger.settings.model_copy(update={"kv_cache_dtype": dtype})
    alt = replay.solve(fixed)
    if alt is None or alt.token_capacity <= ledger.token_capacity:
        return None
    gain = alt.token_capacity - ledger.token_capacity
    cell, cell8 = ledger.kv_bytes_per_token, alt.kv_bytes_per_token
    return Finding(
        rule="bf16_kv_where_fp8_supported", severity=Severity.INFO,
        summary=f"KV cache is {ledger.kv_format}; {ledger.settings.engine} supports FP8 KV: +{gain:,} tokens per rank",
        bytes=(cell - cell8) * ledger.token_capacity, tokens=gain, fix=f"--kv-cache-dtype {dtype}", gain_tokens=gain,
        evidence=(
            f"KV bytes per token per rank: {cell:,} B ({ledger.kv_format}) → {cell8:,} B (FP8)",
            f"capacity {ledger.token_capacity:,} → {alt.token_capacity:,} tokens per rank",
            "quality: FP8 E4M3 KV without calibrated scales can lose accuracy on long-context and reasoning tasks; check evals first",
        ),
        fix_settings=fixed,
    )  # fmt: skip


def _dp_alternatives(ledger: Ledger, attn_tp: int) -> list[LaunchSettings]:
    """Layouts that keep the GPUs but shrink attention TP to `attn_tp` (more KV pools, fewer copies)."""
    s = ledger.settings
    gpus_per_group = s.tp
    groups = max(1, gpus_per_group // attn_tp)
    out: list[LaunchSettings] = []
    if s.engine == "sglang":
        out.append(s.model_copy(update={"enable_dp_attention": True, "dp": groups}))
    if s.engine == "sglang" and ledger.model.mla is not None:
        return out  # SGLang spreads MLA with DP attention; fewer-TP replicas would not fit the weights
    update: dict[str, object] = {
        "tp": attn_tp,
        "dp": groups * (1 if s.enable_dp_attention else s.dp),
        "enable_dp_attention": False,
    }
    if ledger.model.moe is not None and s.engine == "vllm":
        update["enable_expert_parallel"] = True
    out.append(s.model_copy(update=update))
    return out


def _best_layout(ledger: Ledger, replay: Replay, attn_tp: int) -> tuple[LaunchSettings, Ledger, Ledger] | None:  # fmt: skip
    """(settings, ledger) of the alternative with the most node tokens, and the current layout solved alike."""
    base = replay.solve(new_layout=True)
    if base is None:
        return None
    best: tuple[LaunchSettings, Ledger, Ledger] | None = None
    for alt in _dp_alternatives(ledger, attn_tp):
        solved = replay.solve(alt, new_layout=True)
        if solved is None or not solved.engine.fits:
            continue
        if best is None or node_tokens(solved) > node_tokens(best[1]):
            best = (alt, solved, base)
    return best


def _layout_finding(
    ledger: Ledger, replay: Replay, thresholds: Thresholds, *, rule: str, copies: int, attn_tp: int, why: str
) -> Finding:
    gpus, ranks = _all_ranks(ledger)
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
        rule=rule, severity=_advice(gain, node_tokens(ledger), thresholds),
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


def _req_to_token(ledger: Ledger, replay: Replay, thresholds: Thresholds) -> Finding | None:
    eng = ledger.engine
    if ledger.settings.engine != "sglang" or eng.req_to_token_bytes <= thresholds.req_to_token_bytes:
        return None
    row = (ledger.context_length + 4) * 4  # int32 per token slot of one request (spec §7)
    bound = max(1, thresholds.req_to_token_bytes // 2 // row - 1)
    requests = max(1 << (bound.bit_length() - 1), ledger.token_capacity // ledger.context_length, 1)
    if requests >= eng.max_running_requests:
        return None
    freed = eng.req_to_token_bytes - (requests + 1) * row
    mfs = math.floor((eng.memory_fraction + freed / replay.free_before_load_bytes) * 1000) / 1000
    fixed = ledger.settings.model_copy(update={"max_running_requests": requests, "mem_fraction_static": mfs})
    gain = replay.capacity(fixed) - ledger.token_capacity
    gpus, ranks = _all_ranks(ledger)
    return Finding(
        rule="req_to_token_large", severity=_advice(gain, ledger.token_capacity, thresholds),
        summary=f"req_to_token table of {gib(eng.req_to_token_bytes)} per rank ({eng.max_running_requests:,} slots × {ledger.context_length:,} tokens)",
        gpus=gpus, ranks=ranks, bytes=eng.req_to_token_bytes, tokens=max(gain, 0),
        fix=f"--max-running-requests {requests} --mem-fraction-static {mfs:g}", gain_tokens=max(gain, 0),
        evidence=(
            f"({eng.max_running_requests:,} + 1) rows × ({ledger.context_length:,} + 4) × 4 B = {gib(eng.req_to_token_bytes)}, taken from the runtime reserve",
            f"{requests} slots free {gib(freed)}; raising --mem-fraction-static {eng.memory_fraction:g} → {mfs:g} keeps the activation reserve",
            f"the KV pool holds {ledger.token_capacity // ledger.context_length:,} full-context requests; capacity +{max(gain, 0):,} tokens per rank",
        ),
        fix_settings=fixed,
    )  # fmt: skip


def _uncapped_requests(ledger: Ledger) -> int:
    """SGLang's max running requests before the state-pool cap (spec §7)."""
    tokens, s = ledger.token_capacity, ledger.settings
    if s.max_running_requests:
        return min(s.max_running_requests // ledger.layout.attn_dp, tokens // 2)
    return min(max(2048, min(4096, int(tokens / ledger.context_length * 512))), tokens // 2)


def _mamba_caps_requests(ledger: Ledger, replay: Replay, thresholds: Thresholds) -> Finding | None:
    eng = ledger.engine
    if ledger.settings.engine != "sglang" or not eng.state_pool_bytes or not eng.fits:
        return None
    uncapped = _uncapped_requests(ledger)
    if eng.max_running_requests >= uncapped:
        return None
    fixed = ledger.settings.model_copy(update={"disable_radix_cache": True})
    alt = replay.solve(fixed)
    alt_requests = alt.engine.max_running_requests if alt else eng.max_running_requests
    gain = (alt.token_capacity if alt else 0) - ledger.token_capacity
    gpus, ranks = _all_ranks(ledger)
    severity = Severity.WARNING if 2 * eng.max_running_requests < uncapped else Severity.INFO
    return Finding(
        rule="mamba_state_caps_requests", severity=severity,
        summary=f"linear-attention state pool caps running requests at {eng.max_running_requests:,} (KV pool supports {uncapped:,})",
        gpus=gpus, ranks=ranks, bytes=eng.state_pool_bytes, tokens=max(gain, 0), fix="--disable-radix-cache", gain_tokens=max(gain, 0),
        evidence=(
            f"state pool {gib(eng.state_pool_bytes)} per rank; with the radix cache each running request takes 3 state slots",
            f"--disable-radix-cache: 1 slot per request → {alt_requests:,} running requests (no prefix reuse)",
        ),
        fix_settings=fixed,
    )  # fmt: skip


def _hybrid_manager_disabled(ledger: Ledger, replay: Replay, thresholds: Thresholds) -> Finding | None:
    s = ledger.settings
    if s.engine != "vllm" or not s.disable_hybrid_kv_cache_manager or not ledger.model.layers_of(LayerKind.SLIDING):  # fmt: skip
        return None
    fixed = s.model_copy(update={"disable_hybrid_kv_cache_manager": False})
    gain = replay.capacity(fixed) - ledger.token_capacity
    if gain <= 0:
        return None
    swa = len(ledger.model.layers_of(LayerKind.SLIDING))
    gpus, ranks = _all_ranks(ledger)
    return Finding(
        rule="hybrid_kv_manager_disabled", severity=_advice(gain, ledger.token_capacity, thresholds),
        summary=f"vLLM's hybrid KV cache manager is disabled: {swa} sliding-window layers cost full length",
        gpus=gpus, ranks=ranks, bytes=ledger.engine.kv_pool_bytes * swa // ledger.model.num_layers, tokens=gain,
        fix="remove --disable-hybrid-kv-cache-manager (and any KV connector that forces it)", gain_tokens=gain,
        evidence=(
            f"window {ledger.model.sliding_window:,} tokens on {swa} of {ledger.model.num_layers} layers, cached for all {ledger.context_length:,}",
            f"capacity {ledger.token_capacity:,} → {ledger.token_capacity + gain:,} tokens with the hybrid manager",
        ),
        fix_settings=fixed,
    )  # fmt: skip


def weights_cause(ledger: Ledger, replay: Replay, observed: int, excess: int) -> tuple[str, str]:
    """Rule 4's likeliest cause of weights above the prediction, with its numbers, and the change for it."""
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


LEDGER_RULES = (_fp8_kv, _tp_above_kv_heads, _mla_under_tp, _req_to_token, _mamba_caps_requests, _hybrid_manager_disabled)  # fmt: skip


def ledger_findings(ledger: Ledger, thresholds: Thresholds) -> list[Finding]:
    """Rules 6–11: what the plan alone says (no live node needed)."""
    replay = Replay(ledger)
    return [f for rule in LEDGER_RULES if (f := rule(ledger, replay, thresholds))]
