"""`kvtop explain` for TensorRT-LLM: rebuild the logged pool from the memory the log says it was sized from.

The PyTorch backend prints its budget (`available KV cache memory when calculating max tokens: A GiB`,
two decimals of GiB) and, at INFO, the exact `max_tokens` it handed the pool; the C++ runtime of a
TensorRT engine prints the free memory it multiplied by the fraction (`available: A GiB`). The
capacity is the **last** `Allocated … for max tokens in paged KV cache (N)` line: in the PyTorch flow
the first is the temporary pool of the profiling run (docs/engines/trtllm.md §7, §8). Logs without a
budget line still show each pool's size: N × bytes per token must print as the logged GiB.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog, Measured
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.cause_search import changed, geometry_candidates
from kvtop.domain.engines.trtllm.budget import (
    estimation_tokens,
    estimator_bytes_per_token,
    executor_max_num_tokens,
    round_blocks,
    runtime,
    tokens_per_block,
)
from kvtop.domain.engines.trtllm.eras import LAST_CEIL_RELEASE, resolve_version, rounding_rule
from kvtop.domain.engines.trtllm.log_records import TrtllmRankLog
from kvtop.domain.engines.trtllm.primary_pool import logged_tokens_per_block, primary_pool_assumption
from kvtop.domain.engines.trtllm.rank_spread import least_rank_notes
from kvtop.domain.engines.trtllm.stated_total import stated_total
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import KvtopError
from kvtop.domain.explain_estimate import EstimateRun, free_before_load_estimate, rebuild_with_estimate
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import (
    PLACEHOLDER_GPU_BYTES,
    Explanation,
    FractionOrigin,
    Logged,
    PoolPart,
    PoolSizeCheck,
    fraction_said,
    judge,
    logged_total_first,
    logged_total_said,
    steps_said,
)
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB, gib

record_type = TrtllmRankLog
_FACTS = {
    "kv_cache_allocated": lambda r: r.allocations or r.legacy_pool_tokens or None,
    "kv_budget": lambda r: [p for p in r.profiles if p.available] or r.cpp_memory or None,
    "tokens_per_block": lambda r: r.tokens_per_block or None,
}
_BUDGET_LINES = (
    "`Peak memory during memory usage profiling … available KV cache memory when calculating max tokens: A GiB` "
    "(PyTorch backend) or `Memory usage when calculating max tokens in paged kv cache: total: T GiB, available: "
    "A GiB` (TensorRT engine); INFO lines (TLLM_LOG_LEVEL=INFO / --log_level info)"
)


_LEGACY_BUDGET = (
    "the free memory the pool was sized from: ≤ v0.8 prints none (`Memory usage when calculating max tokens in "
    "paged kv cache: … available: A GiB` came with v0.9)"
)


def missing_facts(log: EngineLog) -> tuple[str, ...]:
    """Headline facts the log does not state."""
    return tuple(name for name, pick in _FACTS.items() if log.first(TrtllmRankLog, pick) is None)


def _allocations(log: EngineLog) -> list[tuple[Measured, int]]:
    """Every `Allocated X GiB … (N)` in printed order (C++ lines carry no rank: one record holds them)."""
    return [(a.memory, a.tokens) for rank in log.ranks(TrtllmRankLog) for a in rank.allocations]


def logged_token_capacity(log: EngineLog, settings: LaunchSettings | None = None) -> int | None:
    """The one answer to "what capacity did this log state" (`explain`'s `Logged` and `--engine-log` both read it):
    the last `Allocated … (N)` (the real pool), else ≤ v0.8's `Using N tokens in paged KV cache`, else a 2024 C++
    runtime's `Number of blocks in KV cache primary pool: B` × tokens per block (`_primary_pool_tokens`). Without
    `settings`, the log alone: the release its lines name (`resolve_version`), the engine's defaults."""
    pools = _allocations(log)
    if pools:
        return pools[-1][1]
    legacy = log.first(TrtllmRankLog, lambda r: r.legacy_pool_tokens[-1] if r.legacy_pool_tokens else None)
    if legacy is not None:
        return legacy
    if settings is None:
        settings = LaunchSettings(engine="trtllm", engine_version=resolve_version(log).text)
    return _primary_pool_tokens(log, with_log_facts(log, settings))


def log_kv_dtype(log: EngineLog) -> str | None:
    """TensorRT-LLM prints the requested `kv_cache_dtype="auto"`, never the dtype it resolved."""
    return None


def _python_lines(log: EngineLog) -> bool:
    return any(
        r.pytorch_backend or r.profiles or r.weights_inside_torch or r.max_tokens_set
        for r in log.ranks(TrtllmRankLog)
    )


def with_log_facts(log: EngineLog, settings: LaunchSettings) -> LaunchSettings:
    """The settings with what the log states and the flags left unsaid: tokens per block, the runtime,
    the batch limits the executor printed, the max_seq_len it inferred (the context every figure reads)."""
    update: dict[str, object] = {}
    inferred = log.first(TrtllmRankLog, lambda r: r.inferred_max_seq_len[0] if r.inferred_max_seq_len else None)
    if settings.context_length is None and inferred:  # `max_seq_len is not specified, using inferred value N`
        update["context_length"] = inferred
    tpb = logged_tokens_per_block(log)
    if settings.page_size is None and tpb:
        update["page_size"] = tpb
    if settings.backend is None:
        if _python_lines(log):
            update["backend"] = "pytorch"
        elif log.first(
            TrtllmRankLog, lambda r: r.cpp_memory or r.primary_pool_blocks or r.legacy_pool_tokens or None
        ):
            update["backend"] = "tensorrt"
    summary = log.first(TrtllmRankLog, lambda r: r.executor_summaries[0] if r.executor_summaries else None)
    if summary is not None:
        if settings.max_running_requests is None and summary.max_batch_size:
            update["max_running_requests"] = summary.max_batch_size
        if settings.max_num_batched_tokens is None and summary.max_num_tokens:
            update["max_num_batched_tokens"] = summary.max_num_tokens
    if settings.free_gpu_memory_fraction is None:
        fraction = log.first(
            TrtllmRankLog, lambda r: next((p.fraction for p in r.profiles if p.fraction), None)
        )
        if fraction is not None and 0 < fraction <= 1:
            update["free_gpu_memory_fraction"] = fraction
    return settings.model_copy(update=update) if update else settings


def _available(rank: TrtllmRankLog) -> Measured | None:
    """The PyTorch backend's budget before caps (`available KV cache memory …`)."""
    return next((p.available for p in rank.profiles if p.available), None)


def _cpp_free(rank: TrtllmRankLog) -> Measured | None:
    """The least free memory of the C++ runtime's `Memory usage when calculating max tokens …` lines this record holds
    for the log's last start (`last_start_cpp_memory`: a second start's banner begins its lines anew). The runtime
    prints one a rank and MIN-reduces the tokens over ranks (§4.2, §5); trtllm-bench's MPI workers print theirs
    without a rank prefix, so one record holds every rank's (0.16.0, TP 8: 57.87 GiB against 61.38–61.64 on the seven
    others, the pool 0.9 × 57.87 GiB): the least sized the pool, whichever line came first."""
    return min((m.available for m in rank.last_start_cpp_memory), key=lambda a: a.value_bytes, default=None)


def _budget_lines(rank: TrtllmRankLog) -> int:
    """The ranks a record's budget lines stand for: one, or each unprefixed C++ line of a TensorRT engine's start
    (`_cpp_free`; a PyTorch-backend log counts the ranks of its profiling lines)."""
    return len(rank.last_start_cpp_memory) if rank.rank.unranked else 1


def _primary_pool_tokens(log: EngineLog, settings: LaunchSettings) -> int | None:
    """A capacity printed only as `Number of blocks in KV cache primary pool: B` (a 2024 C++ runtime at INFO
    without its `Allocated …` line): the engine's own figure is B × tokens per block (§4.2), the tokens per
    block as the log or the flags state, else the engine build's default of the release."""
    blocks = log.first(TrtllmRankLog, lambda r: r.primary_pool_blocks[-1] if r.primary_pool_blocks else None)
    if blocks is None:
        return None
    version = ResolvedVersion(text=settings.engine_version)
    return blocks * (logged_tokens_per_block(log) or tokens_per_block(settings, version))


def logged_model_weights(log: EngineLog) -> Measured | None:
    """The weights the 1.0+ creation summary measured where its profile line is absent: the free memory before the
    model was built less the free memory after (`Model: B / A`; the most a rank took, the one the pool is sized by)."""
    taken = [(c.weights, r) for r in log.ranks(TrtllmRankLog) for c in r.model_creation[:1]]
    return max(taken, key=lambda pair: pair[0].value_bytes)[0] if taken else None


def _logged(log: EngineLog, settings: LaunchSettings) -> Logged:
    profile = log.first(TrtllmRankLog, lambda r: r.profiles[-1] if r.profiles else None)
    ranked = log.least(TrtllmRankLog, _available) or log.least(TrtllmRankLog, _cpp_free)
    profiled = log.first(TrtllmRankLog, lambda r: r.weights_inside_torch[0] if r.weights_inside_torch else None)
    weights = profiled or logged_model_weights(log)
    ranks = [r for r in log.ranks(TrtllmRankLog) if r.profiles or r.cpp_memory]
    seen = len(ranks) if any(r.profiles for r in ranks) else sum(_budget_lines(r) for r in ranks)
    return Logged(
        token_capacity=logged_token_capacity(log, settings),
        num_gpu_blocks=log.first(
            TrtllmRankLog, lambda r: r.primary_pool_blocks[-1] if r.primary_pool_blocks else None
        ),
        kv_bytes_per_token=profile.kv_bytes_per_token if profile else None,
        available_kv_bytes=ranked.value.value_bytes if ranked else None,
        available_kv_rank=(f"{seen} unprefixed lines" if ranked and seen > len(ranks)
                           else ranked.rank.label if ranked else None),
        weights_bytes=weights.value_bytes if weights else None,
        # the line it was read from: the profiling line's `(inside torch)` figure, else the creation summary's `Model: B / A`
        weights_label="weights (inside torch)" if profiled else "weights (Model: line)",
        max_running_requests=log.first(
            TrtllmRankLog, lambda r: r.executor_summaries[-1].max_batch_size if r.executor_summaries else None
        ),
        ranks_seen=seen,
    )


def logged_figures(log: EngineLog, settings: LaunchSettings, version: ResolvedVersion | None = None) -> Logged:
    """What the log states, read without a model, with the reading of its primary pool it took where that is an
    assumption (`primary_pool_assumption`, for the release `settings` name): `--engine-log` says it as explain does."""
    settings = with_log_facts(log, settings)
    logged = _logged(log, settings)
    # the release as its reader found it (`version`: an engine log's own, said approximate where it is), else as named
    assumption = primary_pool_assumption(log, settings, version or ResolvedVersion(text=settings.engine_version))
    return logged if assumption is None else logged.model_copy(update={"capacity_assumption": assumption})


def _exact_max_tokens(log: EngineLog) -> int | None:
    """The `max_tokens` the final pool was given, printed exactly (the last one printed)."""
    return log.first(TrtllmRankLog, lambda r: r.max_tokens_set[-1] if len(r.max_tokens_set) > 1 else None)


def _profile_notes(log: EngineLog, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> list[str]:
    """What the log lets kvtop check besides the capacity: the estimator cost, the temporary pool, the rounding."""
    notes: list[str] = []
    try:
        ledger = predict(model, settings, gpu_total_bytes=PLACEHOLDER_GPU_BYTES)
    except KvtopError:
        return notes
    profile = log.first(TrtllmRankLog, lambda r: r.profiles[-1] if r.profiles else None)
    rank = ledger.ranks[0]
    estimator = estimator_bytes_per_token(model, ledger.layout, rank.kv, version)
    if profile and profile.kv_bytes_per_token is not None:
        same = "=" if profile.kv_bytes_per_token == estimator else "≠"
        notes.append(
            f"the log's kv size per token {profile.kv_bytes_per_token:,} B {same} kvtop's estimator cost {estimator:,} B (§1.1)"
        )
    if profile and profile.peak and profile.device_total and profile.temporary_pool and profile.fraction:
        a = (profile.device_total.in_gib - profile.peak.in_gib + profile.temporary_pool.in_gib) * profile.fraction
        total, peak, pool, printed = (f"{m.text} {m.unit}" if m else "?" for m in (  # as printed, each with its unit
            profile.device_total, profile.peak, profile.temporary_pool, profile.available))  # fmt: skip
        notes.append(f"(total {total} − peak {peak} + temporary pool {pool}) × {profile.fraction:.9g} = "
                     f"{gib(a * GIB, digits=3)}; the log prints {printed}")  # fmt: skip
    pools = _allocations(log)
    tpb = ledger.engine.page_size
    if len(pools) > 1 and runtime(settings, version) == "pytorch":
        predicted = estimation_tokens(settings, ledger.context_length, tpb, version)  # the engine's rule, as the ledger
        same = "=" if predicted == pools[0][1] else "≠"
        notes.append(
            f"temporary pool of the profiling run: logged {pools[0][1]:,} tokens {same} kvtop's {predicted:,} "
            f"(max_num_tokens {executor_max_num_tokens(settings, ledger.context_length):,}, {tpb} per block); the capacity is the last line"
        )
    exact = _exact_max_tokens(log)
    if exact is not None:
        up, down = round_blocks(exact, tpb, "ceil") * tpb, round_blocks(exact, tpb, "floor") * tpb
        logged = logged_token_capacity(log, settings)
        which = (
            "rounds up"
            if logged == up != down
            else "rounds down"
            if logged == down != up
            else "rounding unseen"
        )
        notes.append(
            f"the log prints max_tokens {exact:,}: ceil → {up:,}, floor → {down:,}; logged {logged:,}: the engine {which} (§4.1)"
        )
    return notes


def explain(request: ExplainRequest) -> Explanation:
    """The logged capacity rebuilt by this engine's rules from the log's own figures (`ExplainRequest`)."""
    log, model, settings, gpu_total_bytes, gpu_name, given, load_mtp = request.log, request.model, request.settings, request.gpu_total_bytes, request.gpu_name, request.given, request.load_mtp
    given_fraction = settings.free_gpu_memory_fraction
    settings = with_log_facts(log, settings)
    origin: FractionOrigin = "flag" if given_fraction is not None else (
        "log" if settings.free_gpu_memory_fraction is not None else "default")  # fmt: skip
    version = request.version
    logged = _logged(log, settings)
    assumption = primary_pool_assumption(log, settings, version)
    if assumption is not None:
        logged = logged.model_copy(update={"capacity_assumption": assumption})
    backend = runtime(settings, version)
    pick = _available if backend == "pytorch" else _cpp_free
    ranked = log.least(TrtllmRankLog, pick)
    flags = (
        ("--free-memory", given.free_before_load_bytes),
        ("--free-after-load", given.free_after_load_bytes),
        ("--weights-memory", given.weights_bytes),
        ("--non-kv-memory", given.non_kv_bytes),
    )
    said = [(flag, value) for flag, value in flags if value is not None]
    # a flag is unused only where the log states the memory the pool was sized from; without that line the
    # estimate reads the flags (`_without_budget_line`: "free memory: from --free-after-load, not the log")
    notes = [] if ranked is None else [
        f"{flag} not used: the log states the memory the pool was sized from" for flag, _ in said]  # fmt: skip
    notes += _refusal_notes(log)
    missing = []
    if ranked is None:
        legacy = log.first(TrtllmRankLog, lambda r: r.legacy_pool_tokens or None)
        missing.append(_LEGACY_BUDGET if legacy else _BUDGET_LINES)
    if logged.token_capacity is None:
        missing.append(
            "`[MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N)` (≤ v0.8: `Using N tokens`)"
        )
    if ranked is None and logged.token_capacity is not None and (said or gpu_total_bytes is not None):
        source, total_origin = request.solved_total(None)  # --gpu's total, else a stand-in (assumed)
        run = EstimateRun(model, settings, gpu_total_bytes or PLACEHOLDER_GPU_BYTES, gpu_name, load_mtp,
                          given.desktop, source, gpu_total_origin=total_origin)
        profile = (*notes, *_profile_notes(log, model, settings, version))
        return _without_budget_line(logged, run, given, gpu_total_bytes is not None, profile)
    if missing or ranked is None:
        notes += _profile_notes(log, model, settings, version)
        return Explanation(
            engine="trtllm", logged=logged, verdict="insufficient", missing=tuple(missing), notes=tuple(notes)
        )
    printed, line = stated_total(log)  # the log's own total wins over --gpu's table total; --gpu-memory over it
    stated, total_notes = logged_total_first(printed, line, gpu_total_bytes, request.gpu_total_source, gpu_name,
                                              request.gpu_total_origin)
    notes += total_notes
    total = stated or gpu_total_bytes or PLACEHOLDER_GPU_BYTES

    def solve(end: int, s: LaunchSettings) -> Ledger:
        measured = (
            MeasuredInputs(available_kv_bytes=end, gpu_total_bytes=stated)
            if backend == "pytorch"
            else MeasuredInputs(free_after_load_bytes=end, gpu_total_bytes=stated)
        )
        return predict(
            model, s, gpu_total_bytes=total, gpu_name=gpu_name, measured=measured, load_mtp=load_mtp
        )

    available = ranked.value
    central = solve(available.value_bytes, settings)
    low = solve(available.low_bytes, settings).token_capacity
    ceil_settings = settings
    if (
        backend == "pytorch" and rounding_rule(version) == "either"
    ):  # the upper end as a release that rounds up
        ceil_settings = settings.model_copy(update={"engine_version": LAST_CEIL_RELEASE})
    high = solve(available.high_bytes, ceil_settings).token_capacity
    notes += least_rank_notes(log, logged, settings, backend, central.kv_bytes_per_token)
    notes += _profile_notes(log, model, settings, version)
    result = judge(
        "trtllm",
        logged,
        central,
        low,
        high,
        settings,
        available.high_bytes,
        stated or gpu_total_bytes,
        kv_memory_logged=True,
    )
    if result.ledger is not None:  # the log's total and fraction said as the log's, a default as one
        ledger = logged_total_said(result.ledger, line) if stated else result.ledger
        ledger = _budget_line_said(ledger, available, backend == "pytorch")
        line = f"`fraction is set {settings.free_gpu_memory_fraction}`" if origin == "log" else ""
        result = result.model_copy(update={"ledger": fraction_said(ledger, origin, line)})
    return result.model_copy(update={"notes": tuple(notes)})


def _budget_line_said(ledger: Ledger, available: Measured, pytorch: bool) -> Ledger:
    """The step that reads the log's free memory, with the line it was read from as its note (one rule for every
    logged step: measured, and its line)."""
    line = (
        f"the log's `available KV cache memory when calculating max tokens: {available.text} GiB`"
        if pytorch
        else f"the log's `Memory usage when calculating max tokens in paged kv cache: … available: {available.text} GiB`"
    )
    return steps_said(
        ledger, lambda s: {"note": line} if s.measured and not s.note and s.bytes == available.value_bytes else None
    )


def _refusal_notes(log: EngineLog) -> list[str]:
    """The PyTorch backend's insufficient-memory summary (1.0+): the component it could not create, and the
    memory free before it tried."""
    record = log.first(TrtllmRankLog, lambda r: r if r.components_not_created else None)
    if record is None:
        return []
    free = f" with {record.free_before_creation[-1].text} GiB free" if record.free_before_creation else ""
    total = f" of {record.creation_total[-1].text} GiB" if record.creation_total else ""
    return [f"the executor could not create its {record.components_not_created[-1]}{free}{total}"]


def _without_budget_line(
    logged: Logged, run: EstimateRun, given: MeasuredInputs, named_gpu: bool, notes: tuple[str, ...]
) -> Explanation:
    """A log without its budget line (INFO lines missing, ≤ v0.8): the free memory the operator measured
    (--free-memory, --free-after-load, with --weights-memory/--non-kv-memory), else the pre-load estimate
    `plan` uses, on the GPU the operator named."""
    measured = MeasuredInputs(
        free_before_load_bytes=given.free_before_load_bytes, free_after_load_bytes=given.free_after_load_bytes,
        weights_bytes=given.weights_bytes, non_kv_bytes=given.non_kv_bytes,
    )  # fmt: skip
    flags = (("--free-memory", given.free_before_load_bytes), ("--free-after-load", given.free_after_load_bytes))
    said = [flag for flag, value in flags if value is not None]
    if said:
        central = run.solve(measured)
        tokens, gpu = central.token_capacity, run.gpu_total_bytes if named_gpu else None
        result = judge("trtllm", logged, central, tokens, tokens, run.settings, None, gpu, kv_memory_logged=False)
        source = f"free memory: from {' and '.join(said)}, not the log"
        return result.model_copy(update={"notes": (source, *notes, *result.notes)})
    estimate = free_before_load_estimate(run)
    at = lambda pre: measured.model_copy(update={"free_before_load_bytes": pre})  # noqa: E731
    return rebuild_with_estimate("trtllm", logged, run, estimate, at, notes)


def pool_size_checks(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, load_mtp: bool
) -> tuple[PoolSizeCheck, ...]:
    """Each pool's printed size against N × the manager's bytes per token (§1.2): the final pool first."""
    pools = _allocations(log)
    legacy = [
        (
            Measured(
                value_bytes=b, low_bytes=b, high_bytes=b, decimals=0, text=f"{b / GIB:.2f}", unit="GiB"
            ),
            t,
        )
        for r in log.ranks(TrtllmRankLog)
        for b, t in zip(r.legacy_pool_bytes, r.legacy_pool_tokens, strict=False)
    ]
    # the same line printed by each rank (unprefixed C++ lines share one record) is checked once
    shown = list(reversed({(m.text, t): (m, t) for m, t in reversed([*reversed(pools), *legacy])}.values()))
    if not shown:
        return ()
    settings = with_log_facts(log, settings)
    ledger = predict(model, settings, gpu_total_bytes=PLACEHOLDER_GPU_BYTES, load_mtp=load_mtp)
    per_token = ledger.kv_bytes_per_token
    full = ledger.ranks[0].kv.pool("full") or ledger.ranks[0].kv.pool("swa")
    dtype = settings.kv_cache_dtype if settings.kv_cache_dtype != "auto" or full is None else full.torch_dtype
    return tuple(
        PoolSizeCheck(
            name=PoolPart.KV,
            tokens=tokens,
            rows=tokens,
            logged_text=memory.text,
            logged_bytes=memory.value_bytes,
            predicted_bytes=tokens * per_token,
            predicted_bytes_per_token=per_token,
            kv_dtype=dtype,
            within_rounding=memory.contains(tokens * per_token),
        )
        for memory, tokens in shown
    )


def cause_candidates(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings
) -> list[tuple[str, LaunchSettings]]:
    """Another KV dtype, tokens per block or TP; the other rounding era; the fraction the tokens imply."""
    settings = with_log_facts(log, settings)
    version = ResolvedVersion(text=settings.engine_version)
    page = tokens_per_block(settings, version)
    found: list[tuple[str, LaunchSettings | None]] = list(
        geometry_candidates(model, settings, page, ("auto", "fp8"))
    )
    if settings.kv_cache_dtype != "nvfp4":
        found.append(
            (f"KV dtype nvfp4 (not {settings.kv_cache_dtype})", changed(settings, kv_cache_dtype="nvfp4"))
        )
    if runtime(settings, version) == "pytorch":
        if rounding_rule(version) == "ceil":
            found.append(("the 2026 tree's final rounding (floor)", changed(settings, engine_version=None)))
        else:
            found.append(
                (
                    f"rounding up, as {LAST_CEIL_RELEASE} does",
                    changed(settings, engine_version=LAST_CEIL_RELEASE),
                )
            )
    implied = _implied_fraction(log, model, settings, version)
    if implied is not None and implied != settings.free_gpu_memory_fraction:
        found.append(
            (f"free_gpu_memory_fraction {implied:g}", changed(settings, free_gpu_memory_fraction=implied))
        )
    return [(what, candidate) for what, candidate in found if candidate is not None]


def _implied_fraction(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
) -> float | None:
    """The C++ runtime's fraction that the logged tokens imply (tokens × bytes ÷ free), to 2 decimals."""
    if runtime(settings, version) != "tensorrt":
        return None
    ranked, tokens = log.least(TrtllmRankLog, _cpp_free), logged_token_capacity(log, settings)
    if ranked is None or not tokens:
        return None
    try:
        per_token = predict(model, settings, gpu_total_bytes=PLACEHOLDER_GPU_BYTES).kv_bytes_per_token
    except KvtopError:
        return None
    fraction = round(tokens * per_token / ranked.value.value_bytes, 2)
    return fraction if 0 < fraction <= 1 else None
