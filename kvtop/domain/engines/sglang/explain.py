"""`kvtop explain` for SGLang: rebuild the logged `#tokens` from the log's own memory figures.

SGLang logs free memory before and after the weight load (`Load weight begin/end. avail mem`),
two decimals of GiB each, and sizes its pool from them with `mem_fraction_static`
(docs/engines/sglang.md §4, §13). Each figure is an interval, so the rebuilt capacity is one too.
"""

from __future__ import annotations

from kvtop.domain.calibration.terms import CalibratedFigures
from kvtop.domain.engine_log import EngineLog, Measured
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.cause_search import changed, geometry_candidates, has_windowed_layers
from kvtop.domain.engines.sglang.attention_backends import named_backends
from kvtop.domain.engines.sglang.dsa import page_size_of
from kvtop.domain.engines.sglang.eras import TP_TABLE_FRACTIONS, auto_fraction_reads_gpu
from kvtop.domain.engines.sglang.log_records import SglangRankLog, latest
from kvtop.domain.engines.sglang.pp_stages import hidden_stage_reserve
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import KvtopError, UnsupportedModelError
from kvtop.domain.explain_estimate import (
    EstimateRun,
    calibrated_preload,
    free_after_load_estimate,
    free_before_load_estimate,
    rebuild_with_estimate,
)
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import (
    PLACEHOLDER_GPU_BYTES,
    Ends,
    EstimatedInput,
    Explanation,
    FractionOrigin,
    Logged,
    PoolPart,
    PoolSizeCheck,
    fraction_said,
    judge,
)
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import gib

record_type = SglangRankLog
# the headline facts of an SGLang startup log, and where each is read
_FACTS = {
    "load_weight_begin": lambda r: r.target_load and r.target_load.avail_before,
    "load_weight_end": lambda r: r.target_load and r.target_load.avail_after,
    "kv_allocation": lambda r: r.kv_allocations or r.swa_pools or None,
    "memory_pool_end": lambda r: r.memory_pool_end_avail or None,
    "scheduler_summary": lambda r: r.scheduler_summaries or None,
}


def _page(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
    """The page size the engine ran with: a DSA model's forced page, else the flag, else its release's default
    (a log states its GPU rarely)."""
    return page_size_of(model, settings.page_size, None, version, named_backends(settings), settings)[0]


def missing_facts(log: EngineLog) -> tuple[str, ...]:
    """Headline facts the log does not state."""
    absent = [name for name, pick in _FACTS.items() if log.first(SglangRankLog, pick) is None]
    return (*absent, *(() if log.server_args else ("server_args",)))


def logged_token_capacity(log: EngineLog) -> int | None:
    """The one answer to "what capacity did this log state" (`explain` and `--engine-log` both read it): the
    figure of the latest start after any resize, or None. A post-capture resize (`Post-capture KV sizing:
    max_total_num_tokens=N`, model_runner's `post_capture_resize_kv_pool`, 2026) is printed after the pool and
    wins; then the scheduler's `max_total_num_tokens=` (TP0, printed after the pools, docs/engines/sglang.md §2);
    then a sliding-window model's full-attention pool (`full_layer_tokens=`, `SWAKVPool … full size:`: the
    `#tokens` line there is a sub-pool's); then `KV Cache is allocated. #tokens:` (§11). Of each kind the
    latest start's (`latest`: by the lines' times, else the last printed)."""
    return log.first(SglangRankLog, _stated_capacity)


def _stated_capacity(rank: SglangRankLog) -> int | None:
    """One rank's stated capacity, by the precedence `logged_token_capacity` gives (the latest of each line)."""
    stated = (
        [(r.max_total_num_tokens, r.at) for r in rank.post_capture_resizes],
        [(s.max_total_num_tokens, s.at) for s in rank.scheduler_summaries],
        [(s.full_layer_tokens, s.at) for s in rank.sliding_window_splits],
        [(p.full_tokens, p.at) for p in rank.swa_pools],
        [(a.tokens, a.at) for a in rank.kv_allocations],
    )
    for kind in stated:
        stated_last = latest([(figure, at) for figure, at in kind if figure is not None], lambda pair: pair[1])
        if stated_last is not None:
            return stated_last[0]
    # `max_total_tokens=A is larger than the profiled value B` with B ≤ 0 (model_runner.init_memory_pool): the
    # profile left no memory for KV, the engine then takes B and refuses ("Not enough memory"): a pool of 0 tokens
    negative = [o.profiled_tokens for o in rank.profiled_token_overrides if o.profiled_tokens <= 0]
    return 0 if negative else None


def _negative_profile(log: EngineLog) -> list[str]:
    """The profile's own figure where it left no KV memory (the logged capacity 0 is read from it)."""
    profiled = log.first(
        SglangRankLog, lambda r: next((o for o in r.profiled_token_overrides if o.profiled_tokens <= 0), None)
    )
    if profiled is None:
        return []
    return [
        f"the log's `max_total_tokens={profiled.max_total_tokens} is larger than the profiled value "
        f"{profiled.profiled_tokens}`: the profile left no memory for the KV pool (logged as 0 tokens)"
    ]


def log_kv_dtype(log: EngineLog) -> str | None:
    """The KV dtype the log prints (`Using KV cache dtype`, or a `KV Cache is allocated. dtype:`)."""
    return log.first(
        SglangRankLog,
        lambda r: r.kv_cache_dtype or next((a.dtype for a in r.kv_allocations if a.dtype), None),
    )


def _ends(value: Measured | None) -> Ends | None:
    return None if value is None else (value.low_bytes, value.value_bytes, value.high_bytes)


def _rank_memory(rank: SglangRankLog) -> tuple[Ends | None, Ends | None]:
    """(free before the first load, free after the last) of one rank's latest start (`started_loads`: a log of
    two runs never pairs one run's before with the other's after); before from after + usage if unprinted."""
    loads = rank.started_loads
    if not loads:
        return None, None
    first, last = loads[0], loads[-1]
    before = _ends(first.avail_before)
    if before is None and first.avail_after is not None and first.mem_usage is not None:
        a, u = first.avail_after, first.mem_usage
        before = (a.low_bytes + u.low_bytes, a.value_bytes + u.value_bytes, a.high_bytes + u.high_bytes)
    return before, _ends(last.avail_after)


def _tightest(log: EngineLog) -> tuple[Ends | None, Ends | None]:
    """(free before load, free after all weights), each the least over the ranks shown (§2: MIN)."""
    memory = [_rank_memory(rank) for rank in log.ranks(SglangRankLog)]
    befores = [before for before, _ in memory if before]
    afters = [after for _, after in memory if after]
    return _lowest(befores), _lowest(afters)


def _lowest(values: list[Ends]) -> Ends | None:
    """The tightest rank's figure (SGLang takes the minimum over ranks)."""
    return min(values, key=lambda ends: ends[1]) if values else None


def _per_token(log: EngineLog, tokens: int | None, page: int) -> Ends | None:
    """Bytes per token of the pool that states the capacity (the first printed with `tokens`: the target's, not a
    draft's), else of the first pool printed with its sizes (a sliding-window sub-pool): sizes ÷ (#tokens + page),
    as (low, value, high) from the sizes' 2-decimal rounding."""
    sized = [
        (alloc.tokens, tuple(sum(getattr(s, end) for s in sizes) for end in ("low_bytes", "value_bytes", "high_bytes")))
        for rank in log.ranks(SglangRankLog)
        for alloc in rank.kv_allocations
        if alloc.tokens is not None and (sizes := [s for s in (alloc.k_size, alloc.v_size, alloc.kv_size) if s])
    ]
    pool = next((p for p in sized if p[0] == tokens), sized[0] if sized else None)
    if pool is None:
        return None
    rows = pool[0] + page
    return (pool[1][0] // rows, pool[1][1] // rows, pool[1][2] // rows)


def _logged(log: EngineLog, page: int) -> Logged:
    tokens = logged_token_capacity(log)
    summary = log.first(SglangRankLog, lambda r: latest(r.scheduler_summaries, lambda s: s.at))
    before, after = _tightest(log)
    weights = log.first(SglangRankLog, lambda r: r.target_load.mem_usage if r.target_load else None)
    target = log.first(SglangRankLog, lambda r: r.target_load if r.draft_load else None)
    draft = log.first(SglangRankLog, lambda r: r.draft_load.mem_usage if r.draft_load else None)
    per_token = _per_token(log, tokens, page)
    return Logged(
        token_capacity=tokens,
        kv_bytes_per_token=per_token[1] if per_token else None,
        kv_bytes_per_token_low=per_token[0] if per_token else None,
        kv_bytes_per_token_high=per_token[2] if per_token else None,
        free_after_target_load_bytes=target.avail_after.value_bytes if target and target.avail_after else None,
        draft_weights_bytes=draft.value_bytes if draft else None,
        free_before_load_bytes=before[1] if before else None,
        free_after_load_bytes=after[1] if after else None,
        weights_bytes=weights.value_bytes if weights else None,
        weights_label="weights (mem usage)",  # `Load weight end. ... mem usage=X GB`
        max_running_requests=summary.max_running_requests if summary else None,
        context_length=summary.context_len if summary else None,
        ranks_seen=len([r for r in log.ranks(SglangRankLog) if r.weight_loads]),
    )


def _given(
    before: Ends | None, after: Ends | None, given: MeasuredInputs
) -> tuple[Ends | None, Ends | None, list[str]]:
    """Fill what the log lacks from the measured flags (exact figures), saying where each came from."""
    notes: list[str] = []
    for name, flag, value in (
        ("before", "--free-memory", given.free_before_load_bytes),
        ("after", "--free-after-load", given.free_after_load_bytes),
    ):
        logged = before if name == "before" else after
        if value is None:
            continue
        if logged is not None:
            notes.append(f"{flag} {gib(value)} not used: the log states free {name} load ({gib(logged[1])})")
            continue
        notes.append(f"free {name} load {gib(value)}: from {flag}, not the log")
        before, after = ((value,) * 3, after) if name == "before" else (before, (value,) * 3)
    weights = given.weights_bytes
    if weights is not None and before is None and after is not None:
        before = (after[0] + weights, after[1] + weights, after[2] + weights)
        notes.append(f"free before load {gib(before[1])}: free after load + --weights-memory {gib(weights)}")
    elif weights is not None and after is None and before is not None:
        after = (before[0] - weights, before[1] - weights, before[2] - weights)
        notes.append(f"free after load {gib(after[1])}: free before load − --weights-memory {gib(weights)}")
    elif weights is not None:
        notes.append("--weights-memory not used: the log states both free-memory figures")
    if given.non_kv_bytes is not None:
        notes.append("--non-kv-memory not used: it is vLLM's; SGLang sizes the pool from the free memory")
    return before, after, notes


def explain(request: ExplainRequest) -> Explanation:
    """The logged capacity rebuilt by this engine's rules from the log's own figures (`ExplainRequest`)."""
    log, model, settings, gpu_total_bytes, gpu_name, given, load_mtp = request.log, request.model, request.settings, request.gpu_total_bytes, request.gpu_name, request.given, request.load_mtp
    _refuse_unmodelled_draft(log, model)
    _refuse_post_capture_resize(log)
    version = request.version
    page = _page(model, settings, version)
    logged = _logged(log, page)
    before, after = _tightest(log)
    before, after, notes = _given(before, after, given)
    notes += _negative_profile(log)
    missing = []
    if settings.mem_fraction_static is None and gpu_total_bytes is None and auto_fraction_reads_gpu(version):
        missing.append(
            "mem_fraction_static (in server_args, or --mem-fraction-static, or --gpu for the automatic value)"
        )
    if logged.token_capacity is None:
        missing.append("the logged capacity (`KV Cache is allocated … #tokens` or `max_total_num_tokens=`)")
    if logged.context_length and settings.context_length is None:
        settings = settings.model_copy(update={"context_length": logged.context_length})
    if before is None and gpu_total_bytes is not None and not missing:
        # no `Load weight begin`: the free memory before the load estimated as `plan` does
        run = EstimateRun(model, settings, gpu_total_bytes, gpu_name, load_mtp, given.desktop, request.gpu_total_source,
                          gpu_total_origin=request.gpu_total_origin)
        post = after[1] if after else None
        beyond = None if post is not None else _beyond_book(run)  # a free memory after the load holds the weights
        at = lambda pre: MeasuredInputs(  # noqa: E731
            free_before_load_bytes=pre, free_after_load_bytes=post, gpu_total_bytes=gpu_total_bytes, calibrated=beyond
        )
        return rebuild_with_estimate(
            "sglang", logged, run, free_before_load_estimate(run), at, tuple(notes)
        )
    if after is None and before is not None and gpu_total_bytes is not None and not missing:
        run = EstimateRun(model, settings, gpu_total_bytes, gpu_name, load_mtp, given.desktop, request.gpu_total_source,
                          gpu_total_origin=request.gpu_total_origin)
        return _with_weights_estimate(logged, run, before, tuple(notes))
    if before is None:
        missing.append(
            "`Load weight begin. avail mem` (or `Load weight end` with `mem usage`, or --free-memory; "
            "or --gpu to estimate it)"
        )
    if after is None:
        missing.append("`Load weight end. avail mem` (or --free-after-load)")
    if missing or before is None or after is None:
        return Explanation(
            engine="sglang", logged=logged, verdict="insufficient", missing=tuple(missing), notes=tuple(notes)
        )
    total = gpu_total_bytes or PLACEHOLDER_GPU_BYTES
    total_source, _ = request.solved_total(None)  # SGLang prints no total: --gpu's, else a stand-in (assumed)

    def solve(pre: int, post: int) -> Ledger:
        measured = MeasuredInputs(
            free_before_load_bytes=pre, free_after_load_bytes=post, gpu_total_bytes=total
        ).with_estimated("gpu_total_bytes", total_source)
        return predict(
            model, settings, gpu_total_bytes=total, gpu_name=gpu_name, measured=measured, load_mtp=load_mtp
        )

    central = solve(before[1], after[1])
    low = solve(before[2], after[0]).token_capacity
    high = solve(before[0], after[2]).token_capacity
    result = judge(
        "sglang", logged, central, low, high, settings, after[2], gpu_total_bytes, kv_memory_logged=False
    )
    result = result.model_copy(update={"notes": tuple(notes)})
    run = EstimateRun(model, settings, total, gpu_name, load_mtp, gpu_total_source=request.gpu_total_source,
                      gpu_total_origin=request.gpu_total_origin)
    result = hidden_stage_reserve(result, log, run, before, after)  # PP stages whose load lines are not shown
    # SGLang prints no GPU total; its fraction only in server_args (read as a flag): else the default, said as one
    origin: FractionOrigin = "flag" if settings.mem_fraction_static is not None else "default"
    if result.ledger is None:
        return result
    return result.model_copy(update={"ledger": fraction_said(result.ledger, origin)})


def _refuse_unmodelled_draft(log: EngineLog, model: ModelSpec) -> None:
    """A log that loads a second model (a speculative draft, `Load weight end … type=…`) where kvtop's pool has
    no draft rule: DeepSeek-V4's (dsv4.py refuses its draft rings by name; the flags need not say it)."""
    drafts = {rank.draft_load.model_class or "a draft" for rank in log.ranks(SglangRankLog) if rank.draft_load}
    if model.compressed is not None and drafts:
        raise UnsupportedModelError(
            f"DeepSeek-V4's pools with speculative decoding (the log loads {', '.join(sorted(drafts))} after the "
            "target: draft rings of 16 / 256 rows, the (L+1)/L inflation) are not modelled",
            field="--speculative-algorithm",
        )


def _refuse_post_capture_resize(log: EngineLog) -> None:
    """A pool re-sized after CUDA-graph capture (`SGLANG_ENABLE_POST_CAPTURE_KV_SIZING`, 2026: model_runner's
    `post_capture_resize_kv_pool` sizes it from the free memory after the capture, docs/engines/sglang.md §2
    step 5, §18): kvtop's rules size the pool before the capture, so the resized figure is read, never rebuilt."""
    resized = log.first(SglangRankLog, lambda r: r.post_capture_resizes[-1] if r.post_capture_resizes else None)
    if resized is not None:
        raise UnsupportedModelError(
            f"SGLang's post-capture KV resize (to {resized.max_total_num_tokens} tokens, sized from the free memory "
            "after CUDA-graph capture) is not modelled: kvtop rebuilds the pool sized before the capture",
            field="SGLANG_ENABLE_POST_CAPTURE_KV_SIZING",
        )


# how far kvtop's weights book may be from what the engine holds resident (buffers, padding), assumed where the
# launch cannot be planned (plan's weights term stands otherwise)
WEIGHTS_SPREAD = 0.05


def _with_weights_estimate(logged: Logged, run: EstimateRun, before: Ends, notes: tuple[str, ...]) -> Explanation:
    """A `Load weight begin` line without its `Load weight end`, the GPU named: the free memory after the load
    is the logged free memory before it less the weights `plan` charges (`free_after_load_estimate`: the book and
    the rope cache the load holds, within the weights term's error), else kvtop's predicted weights (±5 % assumed)."""

    def at(post: int) -> MeasuredInputs:
        return MeasuredInputs(
            free_before_load_bytes=before[1], free_after_load_bytes=post, gpu_total_bytes=run.gpu_total_bytes
        )

    estimate = free_after_load_estimate(run, before[1])
    if estimate is None:
        weights = max(rank.weights_bytes for rank in run.solve(at(before[1])).ranks)
        spread = int(weights * WEIGHTS_SPREAD)
        estimate = EstimatedInput(
            field="free_after_load_bytes",
            label="free memory after the weights load",
            low_bytes=max(before[1] - weights - spread, 0),
            value_bytes=max(before[1] - weights, 0),
            high_bytes=max(before[1] - weights + spread, 0),
            basis=f"the logged free memory before the load less kvtop's predicted weights (±{WEIGHTS_SPREAD:.0%} of "
            "them assumed)",
        )
    return rebuild_with_estimate("sglang", logged, run, estimate, at, notes)


def _beyond_book(run: EstimateRun) -> CalibratedFigures | None:
    """What `plan` holds of the weights beyond the book for this launch (the rope cache, the caching allocator's
    rounding: weights_held.py), as the figures a rebuild's inputs carry, so that a rebuild resting on estimated
    weights holds the weights the plan does (one truth); None where the plan adds nothing or cannot be made."""
    preload = calibrated_preload(run)
    extra = preload.figures().weights_extra_bytes if preload is not None else 0
    return CalibratedFigures(weights_extra_bytes=extra) if extra else None


def logged_figures(log: EngineLog, settings: LaunchSettings, version: ResolvedVersion | None = None) -> Logged:
    """What the log states, read without a model (bytes per token only where the page size is given)."""
    logged = _logged(log, settings.page_size or 1)
    unpaged = {"kv_bytes_per_token": None, "kv_bytes_per_token_low": None, "kv_bytes_per_token_high": None}
    return logged if settings.page_size else logged.model_copy(update=unpaged)


def pool_size_checks(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, load_mtp: bool
) -> tuple[PoolSizeCheck, ...]:
    """`KV Cache is allocated` sizes against (#tokens + page) × kvtop's bytes per token of that pool (§9)."""
    ranks = log.ranks(SglangRankLog)
    if not ranks:
        return ()
    ledger = predict(model, settings, gpu_total_bytes=PLACEHOLDER_GPU_BYTES, load_mtp=load_mtp)
    kv = ledger.ranks[0].kv
    full = kv.pool("full")
    if full is None or kv.pool("swa") is not None:
        return ()
    page = ledger.engine.page_size
    dtype = settings.kv_cache_dtype if settings.kv_cache_dtype != "auto" else full.torch_dtype
    checks = []
    # ≤ 0.4.1 printed `K size: X GB, V size: Y GB` without `#tokens`: the pool's size is then the scheduler's
    # `max_total_num_tokens=N` (the pool is built with it, before the scheduler prints it)
    scheduled = [s.max_total_num_tokens for s in ranks[0].scheduler_summaries if s.max_total_num_tokens is not None]
    for alloc in ranks[0].kv_allocations:
        tokens = alloc.tokens if alloc.tokens is not None else (scheduled[-1] if scheduled else None)
        if tokens is None:
            continue
        rows = tokens + page
        sizes = (
            (PoolPart.K, alloc.k_size, full.bytes_per_token // 2),
            (PoolPart.V, alloc.v_size, full.bytes_per_token // 2),
            (PoolPart.KV, alloc.kv_size, kv.full_bytes_per_token - kv.workspace_bytes_per_token),
        )
        for name, measured, per_token in sizes:
            if measured is None:
                continue
            predicted = rows * per_token
            checks.append(
                PoolSizeCheck(
                    name=name,
                    tokens=tokens,
                    rows=rows,
                    logged_text=measured.text,
                    logged_bytes=measured.value_bytes,
                    predicted_bytes=predicted,
                    predicted_bytes_per_token=per_token,
                    kv_dtype=dtype,
                    within_rounding=measured.contains(predicted),
                )
            )
    return tuple(checks)


def cause_candidates(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings
) -> list[tuple[str, LaunchSettings]]:
    """The memory fraction the logged tokens imply, the TP-table fractions of early releases, then geometry."""
    found: list[tuple[str, LaunchSettings | None]] = []
    version = ResolvedVersion(text=settings.engine_version)  # these settings' release: a candidate may name another
    implied = _implied_fraction(log, model, settings, version)
    current = settings.mem_fraction_static
    fractions = ([implied] if implied is not None else []) + [f for f in TP_TABLE_FRACTIONS if f != implied]
    for fraction in fractions:
        if fraction != current:
            what = f"mem_fraction_static {fraction:g}" + (f" (not {current:g})" if current else "")
            found.append((what, changed(settings, mem_fraction_static=fraction)))
    page = _page(model, settings, version)
    found += geometry_candidates(model, settings, page, ("bf16", "fp8_e4m3"))
    if has_windowed_layers(model):
        flip = not settings.disable_hybrid_swa_memory
        found.append(
            (
                f"hybrid SWA memory {'off' if flip else 'on'}",
                changed(settings, disable_hybrid_swa_memory=flip),
            )
        )
    return [(what, candidate) for what, candidate in found if candidate is not None]


def _implied_fraction(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
) -> float | None:
    """The mem_fraction_static that the logged tokens imply (§4: rest = after − pre × (1 − mfs)), to 3 decimals."""
    page = _page(model, settings, version)
    logged = _logged(log, page)
    before, after = _tightest(log)
    if logged.token_capacity is None or before is None or after is None:
        return None
    try:
        cell = predict(model, settings, gpu_total_bytes=PLACEHOLDER_GPU_BYTES).kv_bytes_per_token
    except KvtopError:
        return None
    rest = logged.token_capacity * cell
    fraction = round(1 - (after[1] - rest) / before[1], 3)
    return fraction if 0 < fraction <= 1 else None
