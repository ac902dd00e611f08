"""Rebuild the capacity an engine logged from the same measured inputs, and say if it matches.

A log prints memory rounded to two decimals, so every measured input is an interval and so is
the prediction: `token_capacity_min` uses the least favourable ends (least free after load,
most free before load), `token_capacity_max` the most favourable. The verdict is `match` when
the logged capacity lies inside, `mismatch` (with the gap and its likely cause) when it does
not, and `insufficient` when the log lacks what the computation needs (named).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engine_log import EngineLog, Measured, SglangRankLog
from kvtop.domain.engines import MeasuredInputs
from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec

Verdict = Literal["match", "mismatch", "insufficient"]
_PLACEHOLDER_GPU = 80 << 30  # only the auto memory fraction reads the GPU total; a log states it


class Logged(BaseModel):
    """Every number the log states that the explanation uses (bytes or counts)."""

    model_config = ConfigDict(frozen=True)

    token_capacity: int | None = None
    kv_bytes_per_token: int | None = None  # (K + V) ÷ (#tokens + page), where both are printed
    free_before_load_bytes: int | None = None
    free_after_load_bytes: int | None = None
    weights_bytes: int | None = None
    available_kv_bytes: int | None = None
    max_running_requests: int | None = None
    max_concurrency: float | None = None
    context_length: int | None = None
    ranks_seen: int = 0


class PoolSizeCheck(BaseModel):
    """A pool size the log printed, against (#tokens + page) × the predicted bytes of that pool."""

    model_config = ConfigDict(frozen=True)

    name: str  # "K", "V" or "KV"
    tokens: int
    logged_text: str
    predicted_bytes: int
    within_rounding: bool


class Explanation(BaseModel):
    model_config = ConfigDict(frozen=True)

    engine: str
    logged: Logged
    token_capacity: int | None = None
    token_capacity_min: int | None = None
    token_capacity_max: int | None = None
    kv_bytes_per_token: int | None = None
    verdict: Verdict
    gap_tokens: int | None = None
    gap_bytes: int | None = None
    cause: str | None = None
    missing: tuple[str, ...] = ()
    ledger: Ledger | None = None  # the central prediction, with the engine's steps
    pool_checks: tuple[PoolSizeCheck, ...] = ()


def _ends(value: Measured | None) -> tuple[int, int, int] | None:
    return None if value is None else (value.low_bytes, value.value_bytes, value.high_bytes)


def _sglang_inputs(
    log: EngineLog,
) -> tuple[tuple[int, int, int] | None, tuple[int, int, int] | None, list[str]]:
    """(free before load, free after all weights) as (low, value, high), minimum over the ranks shown."""
    befores: list[tuple[int, int, int]] = []
    afters: list[tuple[int, int, int]] = []
    for rank in log.sglang_ranks:
        before, after = _rank_memory(rank)
        if before:
            befores.append(before)
        if after:
            afters.append(after)
    missing = []
    if not befores:
        missing.append("`Load weight begin. avail mem` (or `Load weight end` with `mem usage`)")
    if not afters:
        missing.append("`Load weight end. avail mem`")
    return _lowest(befores), _lowest(afters), missing


def _lowest(values: list[tuple[int, int, int]]) -> tuple[int, int, int] | None:
    """The tightest rank's figure (SGLang takes the minimum over ranks)."""
    return min(values, key=lambda ends: ends[1]) if values else None


def _rank_memory(rank: SglangRankLog) -> tuple[tuple[int, int, int] | None, tuple[int, int, int] | None]:
    loads = rank.weight_loads
    if not loads:
        return None, None
    first, last = loads[0], loads[-1]
    before = _ends(first.avail_before)
    if before is None and first.avail_after is not None and first.mem_usage is not None:
        a, u = first.avail_after, first.mem_usage
        before = (a.low_bytes + u.low_bytes, a.value_bytes + u.value_bytes, a.high_bytes + u.high_bytes)
    return before, _ends(last.avail_after)


def _logged_sglang(log: EngineLog, page: int) -> Logged:
    tokens = None
    per_token = None
    for rank in log.sglang_ranks:
        for alloc in rank.kv_allocations:
            if alloc.tokens is not None and tokens is None:
                tokens = alloc.tokens
                sizes = [s for s in (alloc.k_size, alloc.v_size, alloc.kv_size) if s is not None]
                if sizes:
                    per_token = sum(s.value_bytes for s in sizes) // (alloc.tokens + page)
        for split in rank.sliding_window_splits:
            tokens = split.full_layer_tokens if split.full_layer_tokens is not None else tokens
        for rank_summary in rank.scheduler_summaries:
            if rank_summary.max_total_num_tokens is not None and tokens is None:
                tokens = rank_summary.max_total_num_tokens
    summary = log.sglang_first(lambda r: r.scheduler_summaries[-1] if r.scheduler_summaries else None)
    before, after, _ = _sglang_inputs(log)
    weights = log.sglang_first(lambda r: r.weight_loads[0].mem_usage if r.weight_loads else None)
    return Logged(
        token_capacity=tokens if tokens is not None else (summary.max_total_num_tokens if summary else None),
        kv_bytes_per_token=per_token,
        free_before_load_bytes=before[1] if before else None,
        free_after_load_bytes=after[1] if after else None,
        weights_bytes=weights.value_bytes if weights else None,
        max_running_requests=summary.max_running_requests if summary else None,
        context_length=summary.context_len if summary else None,
        ranks_seen=len([r for r in log.sglang_ranks if r.weight_loads]),
    )


def explain_sglang(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, gpu_total_bytes: int | None
) -> Explanation:
    page = settings.page_size or (64 if model.attention_kind.value == "DSA" else 1)
    logged = _logged_sglang(log, page)
    before, after, missing = _sglang_inputs(log)
    if settings.mem_fraction_static is None and gpu_total_bytes is None:
        missing.append(
            "mem_fraction_static (in server_args, or --mem-fraction-static, or --gpu for the automatic value)"
        )
    if logged.token_capacity is None:
        missing.append("the logged capacity (`KV Cache is allocated … #tokens` or `max_total_num_tokens=`)")
    if missing or before is None or after is None:
        return Explanation(engine="sglang", logged=logged, verdict="insufficient", missing=tuple(missing))
    if logged.context_length and settings.context_length is None:
        settings = settings.model_copy(update={"context_length": logged.context_length})
    total = gpu_total_bytes or _PLACEHOLDER_GPU

    def solve(pre: int, post: int) -> Ledger:
        measured = MeasuredInputs(
            free_before_load_bytes=pre, free_after_load_bytes=post, gpu_total_bytes=total
        )
        return predict(model, settings, gpu_total_bytes=total, measured=measured)

    central = solve(before[1], after[1])
    low = solve(before[2], after[0]).token_capacity
    high = solve(before[0], after[2]).token_capacity
    return _verdict("sglang", logged, central, low, high, log, settings)


def _vllm_available(log: EngineLog) -> Measured | None:
    """`Available KV cache memory`, else the startup ledger's `Current kv cache memory in use`."""
    available = log.vllm_first(
        lambda r: r.available_kv_cache_memory[0] if r.available_kv_cache_memory else None
    )
    if available is None:
        available = log.vllm_first(
            lambda r: next((s.kv_in_use for s in r.startup_ledgers if s.kv_in_use), None)
        )
    return available


def _logged_vllm(log: EngineLog) -> Logged:
    available = _vllm_available(log)
    tokens = log.vllm_first(lambda r: r.kv_cache_tokens[0] if r.kv_cache_tokens else None)
    concurrency = log.vllm_first(lambda r: r.max_concurrency[0] if r.max_concurrency else None)
    weights = log.vllm_first(lambda r: r.model_loading[0].memory if r.model_loading else None)
    return Logged(
        token_capacity=tokens,
        available_kv_bytes=available.value_bytes if available else None,
        weights_bytes=weights.value_bytes if weights else None,
        max_concurrency=float(concurrency.concurrency.text) if concurrency else None,
        context_length=concurrency.tokens_per_request if concurrency else None,
        ranks_seen=len(log.vllm_ranks),
    )


def explain_vllm(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, gpu_total_bytes: int | None
) -> Explanation:
    logged = _logged_vllm(log)
    available = _vllm_available(log)
    missing = []
    if available is None:
        missing.append(
            "`Available KV cache memory: X GiB` (or the `Current kv cache memory in use` ledger line)"
        )
    if logged.token_capacity is None:
        missing.append("`GPU KV cache size: N tokens`")
    if missing or available is None:
        return Explanation(engine="vllm", logged=logged, verdict="insufficient", missing=tuple(missing))
    if settings.context_length is None and logged.context_length is not None:
        settings = settings.model_copy(update={"context_length": logged.context_length})
    # else: the model's max_position_embeddings, which is vLLM's own default max_model_len
    override = log.vllm_first(lambda r: r.blocks_overrides[0] if r.blocks_overrides else None)
    if override is not None and settings.num_gpu_blocks_override is None:
        settings = settings.model_copy(update={"num_gpu_blocks_override": override.override})
    total = gpu_total_bytes or _PLACEHOLDER_GPU

    def solve(kv_bytes: int) -> Ledger:
        return predict(
            model, settings, gpu_total_bytes=total, measured=MeasuredInputs(available_kv_bytes=kv_bytes)
        )

    central = solve(available.value_bytes)
    return _verdict(
        "vllm",
        logged,
        central,
        solve(available.low_bytes).token_capacity,
        solve(available.high_bytes).token_capacity,
        log,
        settings,
    )


def _verdict(
    engine: str,
    logged: Logged,
    central: Ledger,
    low: int,
    high: int,
    log: EngineLog,
    settings: LaunchSettings,
) -> Explanation:
    got = logged.token_capacity
    assert got is not None
    cell = central.kv_bytes_per_token
    base = dict(
        engine=engine, logged=logged, token_capacity=central.token_capacity, token_capacity_min=low,
        token_capacity_max=high, kv_bytes_per_token=cell, ledger=central,
    )  # fmt: skip
    if low <= got <= high:
        return Explanation(**base, verdict="match")
    nearest = low if got < low else high
    gap_tokens = got - nearest
    cause = _likely_cause(engine, logged, cell, gap_tokens, log, settings)
    return Explanation(
        **base, verdict="mismatch", gap_tokens=gap_tokens, gap_bytes=gap_tokens * cell, cause=cause
    )


def _likely_cause(
    engine: str, logged: Logged, cell: int, gap: int, log: EngineLog, settings: LaunchSettings
) -> str:
    if logged.kv_bytes_per_token and abs(logged.kv_bytes_per_token - cell) > max(1, cell // 100):
        return (f"the log's pool costs {logged.kv_bytes_per_token:,} B per token but the model and flags give "
                f"{cell:,} B: the KV dtype, layer count or heads per rank differ from what kvtop was told")  # fmt: skip
    gpus = settings.tp * settings.pp
    if gap < 0 and logged.ranks_seen < gpus:
        return (f"the log shows {logged.ranks_seen} of {gpus} ranks; the engine sized the pool from the tightest "
                "rank (minimum over all ranks), which this log does not show")  # fmt: skip
    if gap < 0:
        return "memory was allocated between weight loading and KV profiling (draft model, LoRA, multimodal reserve, another process)"
    return "the engine had more memory than the log's figures imply (a different memory fraction, page size or KV dtype than assumed)"


def pool_size_checks(log: EngineLog, model: ModelSpec, settings: LaunchSettings) -> tuple[PoolSizeCheck, ...]:
    """SGLang's `KV Cache is allocated` sizes from its own #tokens and kvtop's bytes per token."""
    if settings.engine != "sglang" or not log.sglang_ranks:
        return ()
    ledger = predict(model, settings, gpu_total_bytes=_PLACEHOLDER_GPU)
    kv = ledger.ranks[0].kv
    page = ledger.engine.page_size
    checks = []
    for rank in log.sglang_ranks[:1] or ():
        for alloc in rank.kv_allocations:
            if alloc.tokens is None or kv.pool("swa") is not None:
                continue
            full = kv.pool("full")
            if full is None:
                continue
            rows = alloc.tokens + page
            sizes = (("K", alloc.k_size, full.bytes_per_token // 2), ("V", alloc.v_size, full.bytes_per_token // 2),
                     ("KV", alloc.kv_size, kv.full_bytes_per_token - kv.workspace_bytes_per_token))  # fmt: skip
            for name, measured, per_token in sizes:
                if measured is None:
                    continue
                predicted = rows * per_token
                within = measured.low_bytes <= predicted <= measured.high_bytes
                checks.append(PoolSizeCheck(name=name, tokens=alloc.tokens, logged_text=measured.text,
                                            predicted_bytes=predicted, within_rounding=within))  # fmt: skip
    return tuple(checks)


def explain(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, gpu_total_bytes: int | None = None
) -> Explanation:
    """Explain a parsed log with the engine's own rules (see module docstring)."""
    try:
        if settings.engine == "vllm":
            result = explain_vllm(log, model, settings, gpu_total_bytes)
        else:
            result = explain_sglang(log, model, settings, gpu_total_bytes)
        checks = pool_size_checks(log, model, settings)
    except KvtopError as err:
        return Explanation(
            engine=settings.engine, logged=Logged(), verdict="insufficient", missing=(str(err),)
        )
    return result.model_copy(update={"pool_checks": checks}) if checks else result
