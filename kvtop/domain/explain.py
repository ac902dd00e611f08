"""Rebuild the capacity an engine logged from the same measured inputs, and say if it matches.

The engine's package reads its own lines and solves its own budget (`engines/<id>/explain.py`);
this module adds what holds for every engine: the log's KV dtype used when none was given, the TP its rank
prefixes name where no launch line or flag gave one (`EngineLog.prefix_tp`), a KV
pool whose printed size the model's bytes per token cannot give (a `mismatch` of geometry even when
the token counts agree — a `--max-total-tokens` cap makes them agree for any model), and a log that
shows the engine refusing to start with no capacity printed (`failed_start`). A log whose line proves a desktop
shares the card (`EngineLog.desktop`) sets the fact `--desktop` says (`MeasuredInputs.desktop`), measured.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import KvtopError
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import (
    Explanation,
    Logged,
    PoolPart,
    PoolSizeCheck,
    sources_said,
    stand_in_gpu_said,
    total_origin_said,
)
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_change import launch_words
from kvtop.domain.ledger_values import Ledger
from kvtop.domain.model import ModelSpec

__all__ = ["ExplainRequest", "Explanation", "Logged", "PoolSizeCheck", "explain"]

_CANONICAL_KV_DTYPES = {
    "fp8_e4m3": ("fp8", "fp8_e4m3", "fp8_e4m3fn", "float8_e4m3fn"),
    "fp8_e5m2": ("fp8_e5m2", "float8_e5m2"),
    "bf16": ("bf16", "bfloat16"),
    "fp16": ("fp16", "float16", "half"),
    "fp32": ("fp32", "float32"),
}


def _canonical_kv_dtype(text: str) -> str | None:
    """kvtop's spelling of a KV dtype a flag or a log names (`torch.float8_e4m3fn` → fp8_e4m3)."""
    bare = text.strip().removeprefix("torch.").lower()
    return next((name for name, spellings in _CANONICAL_KV_DTYPES.items() if bare in spellings), None)


def _with_log_kv_dtype(stated: str | None, settings: LaunchSettings) -> tuple[LaunchSettings, list[str]]:
    """The KV dtype the log states, used when kvtop was told none; said when it contradicts the settings."""
    logged = _canonical_kv_dtype(stated) if stated else None
    if stated is None or logged is None:
        return settings, []
    if settings.kv_cache_dtype == "auto":
        note = f"KV dtype {logged}: from the log ({stated}); no --kv-cache-dtype was given"
        return settings.model_copy(update={"kv_cache_dtype": logged}), [note]
    if _canonical_kv_dtype(settings.kv_cache_dtype) not in (None, logged):
        return settings, [f"KV dtype: kvtop was told {settings.kv_cache_dtype} but the log states {stated}"]
    return settings, []


def _with_prefix_tp(log: EngineLog, settings: LaunchSettings) -> tuple[LaunchSettings, list[str]]:
    """The TP size the log's rank prefixes name, used where neither a launch line nor a flag gave one (`tp` not set):
    said, and where a TP was given that the prefixes contradict, said too."""
    read = log.prefix_tp
    if read is None:
        return settings, []
    size, seen = read
    ranks = ", ".join(f"TP{rank}" for rank in seen)
    if "tp" not in settings.model_fields_set and settings.tp == 1:
        note = (
            f"TP {size}: read from the log's rank prefixes ({ranks}: the highest is TP{size - 1}, ranks count from 0); "
            "no launch line or --tp gave it"
        )
        return settings.model_copy(update={"tp": size}), [note]
    if settings.tp < size:
        return settings, [f"TP: kvtop was told {settings.tp}, but the log's rank prefixes reach TP{size - 1} ({ranks})"]
    return settings, []


def _geometry_mismatch(
    result: Explanation,
    checks: tuple[PoolSizeCheck, ...],
    log_dtype: str | None,
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
    texts = " + ".join(f"{check.logged_text} {check.unit}" for check in failed)
    per_token = sum(check.predicted_bytes_per_token for check in failed)
    one_block = [check.name for check in failed] == [PoolPart.BLOCK]  # LMDeploy's TurboMind prints one block
    printed = names if one_block else f"{names} pool"
    cause = (
        f"KV geometry: the log's {printed} ({texts} for {rows:,} rows, about {logged // rows:,} B per token) "
        f"is not what {model.name} with {failed[0].kv_dtype} KV at TP {settings.tp} gives "
        f"({per_token:,} B per token): the model, KV dtype or TP differ from what the engine ran"
        + (f" (the log's KV dtype: {log_dtype})" if log_dtype else "")
    )
    if result.verdict == "mismatch" and result.cause:
        cause += f"; the capacity gap follows from it ({result.cause})"
    gap_tokens = (
        result.gap_tokens if result.verdict == "mismatch" else (0 if result.verdict == "match" else None)
    )
    update = {
        "verdict": "mismatch",
        "cause": cause,
        "gap_tokens": gap_tokens,
        "pool_gap_bytes": logged - predicted,
    }
    return result.model_copy(update=update)


def _with_reproducing_cause(result: Explanation, request: ExplainRequest) -> Explanation:
    """Name a cause only if applying it rebuilds the logged figure; else say the cause is unknown.

    The engine offers the changes worth trying (`cause_candidates`: another memory fraction, page
    size, KV dtype, TP, print rule…); the first whose explanation is a match is the cause, with the
    flags that reproduce it. None: the heuristic reading stays, marked unknown, with what would settle it.
    """
    log, model = request.log, request.model
    explainer = engine_rules(request.settings.engine).explainer
    capacity_gap = bool(result.gap_tokens)  # else only the printed pool sizes disagree
    tried, rebuilding = [], []
    for label, candidate in explainer.cause_candidates(log, model, request.settings):
        tried.append(label)
        try:
            alt = explainer.explain(request.with_settings(candidate))
            checks = explainer.pool_size_checks(log, model, candidate, request.load_mtp)
        except KvtopError:
            continue
        pools_agree = all(check.within_rounding for check in checks if check.rows == checks[0].rows)
        if pools_agree and (alt.verdict == "match" or (not capacity_gap and alt.verdict == "insufficient")):
            rebuilding.append((label, candidate, alt))
    if len(rebuilding) == 1:
        label, candidate, alt = rebuilding[0]
        what = (
            f"the logged {result.logged.token_capacity:,} tokens ({alt.token_capacity_min:,}–{alt.token_capacity_max:,})"
            if alt.verdict == "match"
            else "the logged pool sizes"
        )
        cause = f"{label}: with it kvtop rebuilds {what}"
        update = {
            "cause": cause, "cause_flags": tuple(candidate.to_flags()), "cause_settings": (candidate,),
            "cause_from_log": False,  # the cause is now the rebuilding change, not the log's own figures
        }  # fmt: skip
        return result.model_copy(update=update)
    if rebuilding:
        # each launch as the engine takes it at the log's release (`launch_words`: TensorRT-LLM's serve options and
        # YAML, a TensorRT engine's build flags), not kvtop's own spelling (`cause_flags` keeps that: `plan --` reads it)
        each = "; ".join(f"{label} ({launch_words(candidate.engine_launch())})" for label, candidate, _ in rebuilding)
        cause = f"cause not settled: each of these rebuilds the log's figures, and the log does not say which ran: {each}"
        settings = tuple(c for _, c, _ in rebuilding)
        return result.model_copy(update={"cause": cause, "cause_settings": settings, "cause_from_log": False})
    if result.cause_from_log:  # the log's figures name the cause; no flag change was needed to find it
        return result
    kinds = sorted({label.split(" (")[0].rsplit(" ", 1)[0] for label in tried})
    unknown = (
        f"cause unknown: {result.cause}; no single change rebuilds the logged figure "
        f"({len(tried)} tried: {', '.join(kinds) or 'none'})"
    )
    return result.model_copy(update={"cause": unknown})


def explain(request: ExplainRequest) -> Explanation:
    """Explain a parsed log with its engine's own rules (see module docstring); what each field of the
    request means is `ExplainRequest`'s."""
    log, model, settings, version = request.log, request.model, request.settings, request.version
    rules = engine_rules(settings.engine)
    explainer = rules.explainer
    architecture = rules.architectures.check(model, settings, version)
    served = explainer.logged_token_capacity(log) is not None
    if architecture.refused and not served:  # the engine had no class for it: nothing to rebuild
        return explain_unsolved(log, settings, architecture.message, version)
    log_dtype = explainer.log_kv_dtype(log)
    settings, tp_notes = _with_prefix_tp(log, settings)
    settings, dtype_notes = _with_log_kv_dtype(log_dtype, settings)
    dtype_notes = [*tp_notes, *dtype_notes]
    request = request.with_settings(settings)
    if log.desktop is not None:  # the log proves what --desktop says: one fact, however it is known
        request = request.model_copy(update={"given": request.given.model_copy(update={"desktop": True})})
        dtype_notes = [*dtype_notes, f"a desktop shares this GPU (as --desktop says), read from the log: {log.desktop}"]
    try:
        result = explainer.explain(request)
        checks = explainer.pool_size_checks(log, model, settings, request.load_mtp)
    except KvtopError as err:
        return explain_unsolved(log, settings, str(err), version)
    result = _geometry_mismatch(result, checks, log_dtype, model, settings)
    gap = result.gap_tokens or result.gap_bytes or result.pool_gap_bytes
    if result.verdict == "mismatch" and gap and result.estimated is None:
        result = _with_reproducing_cause(result, request)
    result = _refused(result, log)
    unlisted = (
        (f"{architecture.message}; yet this log sized a pool (a plugin or another build of the engine)",)
        if architecture.refused
        else ()
    )
    update: dict[str, object] = {
        "pool_checks": checks,
        "notes": (*dtype_notes, *result.notes, *unlisted),
        "engine_version": version,
        "log_cut_at_bytes": log.cut_at_bytes,
    }
    if result.ledger is not None:
        update["ledger"] = sources_said(_total_said(result.ledger, request))
    return result.model_copy(update=update)


def _total_said(ledger: Ledger, request: ExplainRequest) -> Ledger:
    """The ledger's GPU total said as it was chosen: a stand-in where no GPU was named; else the origin the request
    carries (typed from where the total was decided: explain's --gpu / --gpu-memory, a live node's NVML) on the
    ledger's inputs and in the total's budget line, so that no view reads it back from its bytes."""
    if request.gpu_total_bytes is None:
        return stand_in_gpu_said(ledger)
    origin = request.gpu_total_origin
    if origin is None:
        return ledger
    if ledger.measured.gpu_total_origin is None:
        ledger = ledger.model_copy(update={"measured": ledger.measured.model_copy(update={"gpu_total_origin": origin})})
    return total_origin_said(ledger, origin)


def _refused(result: Explanation, log: EngineLog) -> Explanation:
    """A refused start wins over a printed capacity, for every engine: the verdict is `failed_start`, and
    how the capacity printed before the refusal rebuilds is kept (`capacity_verdict`). A pool of 0 tokens
    is a refusal too (no engine starts without KV blocks), even where the log stops before the error."""
    zero = result.logged.token_capacity == 0
    if log.startup_error is None and not zero:
        return result
    printed = result.logged.token_capacity is not None and result.verdict != "failed_start"
    capacity_verdict = result.verdict if printed and result.verdict != "failed_start" else None
    notes = result.notes
    if result.missing and capacity_verdict == "insufficient":
        notes = (*notes, "the capacity printed before the refusal is not rebuilt; that needs " + "; ".join(result.missing))
    if result.unsolved and capacity_verdict == "insufficient":
        notes = (*notes, f"the capacity printed before the refusal is not rebuilt: {result.unsolved}")
    if zero and log.startup_error is None:
        notes = (*notes, "the engine sized a KV pool of 0 tokens, with which it cannot start (its error is not in the log)")
    return result.model_copy(
        update={
            "verdict": "failed_start",
            "capacity_verdict": capacity_verdict,
            "startup_error": log.startup_error,
            "missing": (),
            "notes": notes,
        }
    )


def explain_unsolved(
    log: EngineLog, settings: LaunchSettings, reason: str, version: ResolvedVersion | None = None
) -> Explanation:
    """What the log says when kvtop cannot rebuild it (a model or setting kvtop does not model, named in
    `reason`): the figures it printed and a refused start, read without a model."""
    logged = engine_rules(settings.engine).explainer.logged_figures(log, settings)
    unsolved = Explanation(engine=settings.engine, logged=logged, verdict="insufficient", unsolved=reason)
    result = _refused(unsolved, log)
    update = {"engine_version": version or ResolvedVersion(), "log_cut_at_bytes": log.cut_at_bytes}
    return result.model_copy(update=update)


def log_missing(log: EngineLog) -> tuple[str, ...]:
    """Headline facts of the log's engine that the log does not state (`("engine",)`: no engine seen)."""
    if log.engine is None:
        return ("engine",)
    return engine_rules(log.engine).explainer.missing_facts(log)
