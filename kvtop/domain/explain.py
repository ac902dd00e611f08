"""Rebuild the capacity an engine logged from the same measured inputs, and say if it matches.

A log prints memory rounded to two decimals, so every measured input is an interval and so is
the prediction: `token_capacity_min` uses the least favourable ends (least free after load,
most free before load), `token_capacity_max` the most favourable. The verdict is `match` when
the logged capacity lies inside, `mismatch` (with the gap and its likely cause) when it does
not, and `insufficient` when the log lacks what the computation needs (named). A KV pool whose
printed size does not follow from the model's bytes per token is a `mismatch` of geometry even
when the token counts agree (a `--max-total-tokens` cap makes them agree for any model), and a log
that shows the engine refusing to start, with no capacity printed, is `failed_start`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engine_log import EngineLog, Measured, RankedValue, SglangRankLog, VllmRankLog
from kvtop.domain.engines import MeasuredInputs
from kvtop.domain.errors import KvtopError
from kvtop.domain.explain_causes import (
    MismatchFacts,
    given_sglang,
    given_vllm,
    likely_cause,
    with_log_kv_dtype,
)
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import LayerKind, ModelSpec

Verdict = Literal["match", "mismatch", "insufficient", "failed_start"]
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
    available_kv_rank: str | None = None  # the rank whose figure is the minimum ('TP1', 'unranked')
    max_running_requests: int | None = None
    max_concurrency: float | None = None
    context_length: int | None = None
    ranks_seen: int = 0


class PoolSizeCheck(BaseModel):
    """A pool size the log printed, against (#tokens + page) × the predicted bytes of that pool."""

    model_config = ConfigDict(frozen=True)

    name: str  # "K", "V" or "KV"
    tokens: int
    rows: int  # #tokens + page: the rows the engine allocates
    logged_text: str
    logged_bytes: int
    predicted_bytes: int
    predicted_bytes_per_token: int
    kv_dtype: str  # the KV dtype the prediction used
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
    startup_error: str | None = None  # the engine's own error line, when the log shows a refused start
    notes: tuple[str, ...] = ()  # inputs not read from the log (a flag, the log's KV dtype), said once each


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
    log: EngineLog,
    model: ModelSpec,
    settings: LaunchSettings,
    gpu_total_bytes: int | None,
    given: MeasuredInputs | None = None,
    load_mtp: bool = False,
) -> Explanation:
    page = settings.page_size or (64 if model.attention_kind.value == "DSA" else 1)
    logged = _logged_sglang(log, page)
    before, after, _ = _sglang_inputs(log)
    before, after, notes = given_sglang(before, after, given or MeasuredInputs())
    missing = []
    if before is None:
        missing.append(
            "`Load weight begin. avail mem` (or `Load weight end` with `mem usage`, or --free-memory)"
        )
    if after is None:
        missing.append("`Load weight end. avail mem` (or --free-after-load)")
    if settings.mem_fraction_static is None and gpu_total_bytes is None:
        missing.append(
            "mem_fraction_static (in server_args, or --mem-fraction-static, or --gpu for the automatic value)"
        )
    if logged.token_capacity is None:
        missing.append("the logged capacity (`KV Cache is allocated … #tokens` or `max_total_num_tokens=`)")
    if missing or before is None or after is None:
        return Explanation(
            engine="sglang", logged=logged, verdict="insufficient", missing=tuple(missing), notes=tuple(notes)
        )
    if logged.context_length and settings.context_length is None:
        settings = settings.model_copy(update={"context_length": logged.context_length})
    total = gpu_total_bytes or _PLACEHOLDER_GPU

    def solve(pre: int, post: int) -> Ledger:
        measured = MeasuredInputs(
            free_before_load_bytes=pre, free_after_load_bytes=post, gpu_total_bytes=total
        )
        return predict(model, settings, gpu_total_bytes=total, measured=measured, load_mtp=load_mtp)

    central = solve(before[1], after[1])
    low = solve(before[2], after[0]).token_capacity
    high = solve(before[0], after[2]).token_capacity
    result = _verdict("sglang", logged, central, low, high, settings, after[2], gpu_total_bytes)
    return result.model_copy(update={"notes": tuple(notes)})


def _rank_available(rank: VllmRankLog) -> Measured | None:
    """`Available KV cache memory`, else the startup ledger's `Current kv cache memory in use`."""
    if rank.available_kv_cache_memory:
        return rank.available_kv_cache_memory[0]
    return next((s.kv_in_use for s in rank.startup_ledgers if s.kv_in_use), None)


def _vllm_available(log: EngineLog) -> RankedValue | None:
    """The smallest per-rank KV memory: vLLM sizes every rank's pool from the tightest (§4.3)."""
    return log.vllm_min(_rank_available)


def _is_vllm_rank(rank: VllmRankLog) -> bool:
    """A process that printed a per-rank memory figure (a worker; not the EngineCore's totals)."""
    return bool(rank.model_loading or rank.available_kv_cache_memory or rank.startup_ledgers
                or rank.startup_shortfalls or rank.v0_profiles or rank.kv_memory_reserved)  # fmt: skip


def _logged_vllm(log: EngineLog) -> Logged:
    ranked = _vllm_available(log)
    tokens = log.vllm_first(lambda r: r.kv_cache_tokens[0] if r.kv_cache_tokens else None)
    concurrency = log.vllm_first(lambda r: r.max_concurrency[0] if r.max_concurrency else None)
    weights = log.vllm_first(lambda r: r.model_loading[0].memory if r.model_loading else None)
    return Logged(
        token_capacity=tokens,
        available_kv_bytes=ranked.value.value_bytes if ranked else None,
        available_kv_rank=ranked.rank.label if ranked else None,
        weights_bytes=weights.value_bytes if weights else None,
        max_concurrency=float(concurrency.concurrency.text) if concurrency else None,
        context_length=concurrency.tokens_per_request if concurrency else None,
        ranks_seen=sum(1 for rank in log.vllm_ranks if _is_vllm_rank(rank)),
    )


def _vllm_batch_unknown(model: ModelSpec, settings: LaunchSettings, gpu_total_bytes: int | None) -> bool:
    """Sliding-window / chunked blocks per request read max_num_batched_tokens (vllm.md §3), whose
    default depends on the GPU (8192 on ≥ 70 GiB GPUs that are not A100, else 2048): with neither
    the flag nor a GPU, kvtop would read it off its stand-in GPU."""
    windowed = LayerKind.SLIDING in model.layer_attention and not settings.disable_hybrid_kv_cache_manager
    return windowed and settings.max_num_batched_tokens is None and gpu_total_bytes is None


def explain_vllm(
    log: EngineLog,
    model: ModelSpec,
    settings: LaunchSettings,
    gpu_total_bytes: int | None,
    gpu_name: str | None = None,
    given: MeasuredInputs | None = None,
) -> Explanation:
    logged = _logged_vllm(log)
    ranked = _vllm_available(log)
    available = ranked.value if ranked else None
    from_flags, notes = given_vllm(
        available, logged.weights_bytes, given or MeasuredInputs(), gpu_total_bytes
    )
    missing = []
    if available is None and from_flags is None:
        missing.append("`Available KV cache memory: X GiB` (or the `Current kv cache memory in use` ledger line, "
                       "or --non-kv-memory with --gpu)")  # fmt: skip
    if logged.token_capacity is None:
        missing.append("`GPU KV cache size: N tokens`")
    if _vllm_batch_unknown(model, settings, gpu_total_bytes):
        missing.append(
            "--max-num-batched-tokens, or --gpu for vLLM's default (8192; 2048 on A100 or under 70 GiB): "
            "it sets the sliding-window blocks per request"
        )
    if missing:
        return Explanation(
            engine="vllm", logged=logged, verdict="insufficient", missing=tuple(missing), notes=tuple(notes)
        )
    if settings.context_length is None and logged.context_length is not None:
        settings = settings.model_copy(update={"context_length": logged.context_length})
    # else: the model's max_position_embeddings, which is vLLM's own default max_model_len
    override = log.vllm_first(lambda r: r.blocks_overrides[0] if r.blocks_overrides else None)
    if override is not None and settings.num_gpu_blocks_override is None:
        settings = settings.model_copy(update={"num_gpu_blocks_override": override.override})
    total = gpu_total_bytes or _PLACEHOLDER_GPU

    def solve(measured: MeasuredInputs) -> Ledger:
        return predict(model, settings, gpu_total_bytes=total, gpu_name=gpu_name, measured=measured)

    if available is not None:
        central = solve(MeasuredInputs(available_kv_bytes=available.value_bytes))
        low = solve(MeasuredInputs(available_kv_bytes=available.low_bytes)).token_capacity
        high = solve(MeasuredInputs(available_kv_bytes=available.high_bytes)).token_capacity
        room = available.high_bytes
    else:
        assert from_flags is not None
        central = solve(from_flags)
        low = high = central.token_capacity
        room = None
    result = _verdict("vllm", logged, central, low, high, settings, room, gpu_total_bytes)
    return result.model_copy(update={"notes": tuple(notes)})


def _verdict(
    engine: str,
    logged: Logged,
    central: Ledger,
    low: int,
    high: int,
    settings: LaunchSettings,
    kv_room_bytes: int | None,
    gpu_total_bytes: int | None,
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
    full = central.ranks[0].kv.pool("full")
    dtype = settings.kv_cache_dtype if settings.kv_cache_dtype != "auto" or full is None else full.torch_dtype
    cause = likely_cause(MismatchFacts(
        engine=engine, logged_tokens=got, gap_tokens=gap_tokens, cell_bytes=cell, model_name=central.model.name,
        kv_dtype=dtype, tp=settings.tp, gpus=settings.tp * settings.pp, ranks_seen=logged.ranks_seen,
        page_size=central.engine.page_size,
        context_length=settings.context_length or central.model.max_position_embeddings,
        logged_pool_bytes_per_token=logged.kv_bytes_per_token, kv_room_bytes=kv_room_bytes,
        gpu_total_bytes=gpu_total_bytes,
    ))  # fmt: skip
    return Explanation(
        **base, verdict="mismatch", gap_tokens=gap_tokens, gap_bytes=gap_tokens * cell, cause=cause
    )


def pool_size_checks(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, load_mtp: bool = False
) -> tuple[PoolSizeCheck, ...]:
    """SGLang's `KV Cache is allocated` sizes from its own #tokens and kvtop's bytes per token."""
    if settings.engine != "sglang" or not log.sglang_ranks:
        return ()
    ledger = predict(model, settings, gpu_total_bytes=_PLACEHOLDER_GPU, load_mtp=load_mtp)
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
            dtype = settings.kv_cache_dtype if settings.kv_cache_dtype != "auto" else full.torch_dtype
            sizes = (("K", alloc.k_size, full.bytes_per_token // 2), ("V", alloc.v_size, full.bytes_per_token // 2),
                     ("KV", alloc.kv_size, kv.full_bytes_per_token - kv.workspace_bytes_per_token))  # fmt: skip
            for name, measured, per_token in sizes:
                if measured is None:
                    continue
                predicted = rows * per_token
                checks.append(PoolSizeCheck(
                    name=name, tokens=alloc.tokens, rows=rows, logged_text=measured.text,
                    logged_bytes=measured.value_bytes, predicted_bytes=predicted, predicted_bytes_per_token=per_token,
                    kv_dtype=dtype, within_rounding=measured.contains(predicted),
                ))  # fmt: skip
    return tuple(checks)


def _geometry_mismatch(
    result: Explanation,
    checks: tuple[PoolSizeCheck, ...],
    log: EngineLog,
    model: ModelSpec,
    settings: LaunchSettings,
) -> Explanation:
    """A printed pool size that the model's bytes per token cannot give: a mismatch, whatever the tokens say."""
    # the first allocation is the run whose capacity is explained (C09 holds two runs of two builds)
    rows = checks[0].rows if checks else 0
    failed = [check for check in checks if check.rows == rows and not check.within_rounding]
    if not failed:
        return result
    logged = sum(check.logged_bytes for check in failed)
    predicted = sum(check.predicted_bytes for check in failed)
    names = "+".join(check.name for check in failed)
    texts = " + ".join(f"{check.logged_text} GiB" for check in failed)
    log_dtype = log.sglang_first(
        lambda r: r.kv_cache_dtype or next((a.dtype for a in r.kv_allocations if a.dtype), None)
    )
    cause = (
        f"KV geometry: the log's {names} pool ({texts} for {rows:,} rows, about {logged // rows:,} B per token) "
        f"is not what {model.name} with {failed[0].kv_dtype} KV at TP {settings.tp} gives "
        f"({sum(check.predicted_bytes_per_token for check in failed):,} B per token): the model, KV dtype or TP "
        f"differ from what the engine ran" + (f" (the log's KV dtype: {log_dtype})" if log_dtype else "")
    )
    if result.verdict == "mismatch" and result.cause:
        cause += f"; the capacity gap follows from it ({result.cause})"
    gap_tokens = (
        result.gap_tokens if result.verdict == "mismatch" else (0 if result.verdict == "match" else None)
    )
    return result.model_copy(
        update={
            "verdict": "mismatch",
            "cause": cause,
            "gap_tokens": gap_tokens,
            "gap_bytes": logged - predicted,
        }
    )


def explain(
    log: EngineLog,
    model: ModelSpec,
    settings: LaunchSettings,
    gpu_total_bytes: int | None = None,
    gpu_name: str | None = None,
    given: MeasuredInputs | None = None,
    load_mtp: bool = False,
) -> Explanation:
    """Explain a parsed log with the engine's own rules (see module docstring).

    `gpu_name` (e.g. 'A100-80GB') picks vLLM's GPU-dependent defaults; None: not known. `given`
    holds measured figures from the command line: they fill in what the log lacks, and say so."""
    startup_error = log.startup_error
    settings, dtype_notes = with_log_kv_dtype(log, settings)
    try:
        if settings.engine == "vllm":
            result = explain_vllm(log, model, settings, gpu_total_bytes, gpu_name, given)
        else:
            result = explain_sglang(log, model, settings, gpu_total_bytes, given, load_mtp)
        checks = pool_size_checks(log, model, settings, load_mtp)
    except KvtopError as err:
        if startup_error is not None:
            return Explanation(
                engine=settings.engine, logged=Logged(), verdict="failed_start", startup_error=startup_error
            )
        return Explanation(
            engine=settings.engine, logged=Logged(), verdict="insufficient", missing=(str(err),)
        )
    result = _geometry_mismatch(result, checks, log, model, settings)
    if startup_error is not None and result.logged.token_capacity is None:
        # a refused start never prints a capacity: say what the engine said, ask for nothing more
        result = Explanation(
            engine=result.engine, logged=result.logged, verdict="failed_start", startup_error=startup_error
        )
    update: dict[str, object] = {
        "pool_checks": checks, "startup_error": startup_error, "notes": (*dtype_notes, *result.notes),
    }  # fmt: skip
    if gpu_total_bytes is None and result.ledger is not None:
        update["ledger"] = _stand_in_gpu_said(result.ledger)
    return result.model_copy(update=update)


def _stand_in_gpu_said(ledger: Ledger) -> Ledger:
    """The GPU-memory step, when no --gpu was given, named as the stand-in it is (never as measured)."""
    steps = tuple(
        step.model_copy(
            update={
                "label": "GPU memory (a stand-in: pass --gpu)",
                "measured": False,
            }
        )
        if step.label == "GPU memory" and step.bytes == _PLACEHOLDER_GPU
        else step
        for step in ledger.engine.steps
    )
    return ledger.model_copy(update={"engine": ledger.engine.model_copy(update={"steps": steps})})
