"""Fit every term on the corpus, and judge a blind plan of each record with fits that never saw it.

`fit_all(corpus, leave_out)` fits each engine's terms (`<engine>.calibration.FIT_TERMS`) and every GPU's
CUDA total on the records other than `leave_out` (a record's id, or a source: `Record.source`); each fit
carries its own held-out error (each source left out in turn within the rest). `blind(record, fits)` then
plans the record's launch with kvtop's `planned_capacity` as an operator would before the start (model,
GPU, engine release, flags), optionally given the weights the log printed, and compares the capacity (or
the KV memory, where the log printed no tokens) with the log's. judgement.py's `judge_all` judges every record with
fits that left its whole source out: a log from a source the corpus has not seen is what a plan faces.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache

from benchmarks.calibration.corpus import KV_STAGE_MIN, MIB, Record, load_gpu_totals
from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.cuda_context import (
    CUDA_CONTEXT_FEATURES,
    CUDA_CONTEXT_KEY,
    one_process_features,
)
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.extrapolation import Extrapolation, ExtrapolationWidening
from kvtop.domain.calibration.features import (
    ASSUMED_CONTEXT_ERROR_FEATURES,
    ASSUMED_CONTEXT_ERROR_KEY,
    assumed_context_gib,
)
from kvtop.domain.calibration.fit import held_out_quantile, leave_one_out, non_negative_least_squares
from kvtop.domain.calibration.gpu_totals import (
    FALLBACK_KEY,
    GAP_FEATURES,
    cuda_total_estimate,
    cuda_total_key,
    gap_features,
)
from kvtop.domain.calibration.linear import (
    ERROR_QUANTILE,
    FitRow,
    LinearTerm,
    RowOrigin,
    alone,
    feature_carriers,
    unseen_error,
)
from kvtop.domain.calibration.linear import (
    fit_term as domain_fit_term,
)
from kvtop.domain.calibration.plan_fits import error_fit
from kvtop.domain.calibration.terms import RUNTIME_TERMS, Term, TermEstimate
from kvtop.domain.calibration.weights import BUILT_ERROR_KEY, ERROR_FEATURES, LOADED_ERROR_KEY, runtime_cast
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import GPU_TOTAL_MIB, gpu_key, gpu_model_key, is_unified
from kvtop.domain.ledger import Ledger
from kvtop.units import GIB

Corpus = dict[str, list[Record]]
GPU_TOTALS = load_gpu_totals()
SPARE_ROWS = 2  # a term needs this many records beyond its constants, or its held-out error means nothing: assumed
PRINTED_HALF_GIB = 0.005  # a figure printed with 2 decimals stands for ± 0.005 GiB
# the assumed context's half-width where no log measured the context: as wide as the assumption itself (0.75 GiB)
NO_CONTEXT_LOGS_ERROR_GIB = 0.75


@cache
def _fit_term(key: str, features: tuple[str, ...], rows: tuple[FitRow, ...], error_gib: float | None,
              origins: tuple[RowOrigin, ...] | None, min_rows: int, span: bool) -> LinearTerm:  # fmt: skip
    return domain_fit_term(key, features, rows, error_gib=error_gib, origins=origins, min_rows=min_rows, span=span)


def fit_term(key: str, features: tuple[str, ...], rows: Sequence[FitRow], error_gib: float | None = None,
             origins: Sequence[RowOrigin] | None = None, min_rows: int = 1, span: bool = False) -> LinearTerm:  # fmt: skip
    """`linear.fit_term`, made once per distinct input: a leave-one-source-out judgement refits every term
    without each of ≈ 120 sources, and a term none of whose rows came from the source left out has the same rows
    each time (every SGLang term while a vLLM source is left out). A pure function of frozen values, so the fit
    is the one a fresh call makes."""
    return _fit_term(key, features, tuple(rows), error_gib, None if origins is None else tuple(origins), min_rows, span)


def left_out(record: Record, leave_out: str | None) -> bool:
    """Whether `leave_out` names the record or its source."""
    return leave_out is not None and leave_out in (record.id, record.source)


def _records(corpus: Corpus, leave_out: str | None) -> Iterable[Record]:
    return (record for records in corpus.values() for record in records if not left_out(record, leave_out))


def origin(record: Record) -> RowOrigin:
    """The record's source and GPU model, as a fit's row keeps them (made once per record: a frozen value every fold's
    rows share)."""
    return record.memo(("origin", ""), lambda: RowOrigin(source=record.source,
                                                         gpu=gpu_model_key(record.gpu) if record.gpu else ""))  # fmt: skip


def cuda_total_fits(corpus: Corpus, leave_out: str | None = None,
                    skip_gpus: frozenset[str] = frozenset()) -> dict[str, LinearTerm]:  # fmt: skip
    """Each GPU model's CUDA total (the mean of the logged totals) and the gap to nvidia-smi's total; the totals
    printed outside a log of the GPU models in `skip_gpus` left out (a GPU model left out of the corpus whole)."""
    by_gpu: dict[str, list[tuple[FitRow, str]]] = {}
    for record in _records(corpus, leave_out):
        total = record.figures.get("cuda_total")
        # a WSL2 start's total is the whole card (`gpu_totals.wsl2_total_estimate`), not the Linux driver's figure
        if total is None or not record.gpu or record.excluded(Term.CUDA_TOTAL) or record.wsl2:
            continue
        by_gpu.setdefault(gpu_model_key(record.gpu), []).append((((1.0,), total / GIB), record.source))
    for printed in GPU_TOTALS:
        if leave_out not in (printed.id, printed.source_key) and gpu_model_key(printed.gpu) not in skip_gpus:
            by_gpu.setdefault(gpu_model_key(printed.gpu), []).append((((1.0,), printed.total_bytes / GIB), printed.source_key))
    # each total against the mean of the same GPU's totals from other sources, pooled over the GPUs logged by two or more
    spread = [(abs(row[1] - statistics.mean(r[1] for r, s in rows if s != source)), source)
              for rows in by_gpu.values() for row, source in rows if any(s != source for _, s in rows)]  # fmt: skip
    error = held_out_quantile([e for e, _ in spread], ERROR_QUANTILE, [s for _, s in spread]) if spread else 0.05
    fits = {cuda_total_key(gpu): fit_term(cuda_total_key(gpu), ("1 GiB",), [row for row, _ in rows], error_gib=error,
                                          origins=[RowOrigin(source=source, gpu=gpu) for _, source in rows])
            for gpu, rows in by_gpu.items()}  # fmt: skip
    # the gap grows with the card (a constant and a part per 100 GiB of nvidia-smi's total: `gpu_totals.py`)
    listed = [gpu for gpu in by_gpu if gpu in GPU_TOTAL_MIB]
    gaps = {gpu: (gap_features(GPU_TOTAL_MIB[gpu] * MIB),
                  GPU_TOTAL_MIB[gpu] * MIB / GIB - fits[cuda_total_key(gpu)].predict_gib((1.0,))) for gpu in listed}  # fmt: skip
    if gaps:
        # its error: each GPU model left out whole and each total it printed judged (`gap_held_out_error_gib`)
        printed = {gpu: tuple(GPU_TOTAL_MIB[gpu] * MIB / GIB - row[1] for row, _ in by_gpu[gpu]) for gpu in listed}
        error = gap_held_out_error_gib({gpu: row[0] for gpu, row in gaps.items()}, printed)
        fits[FALLBACK_KEY] = fit_term(FALLBACK_KEY, GAP_FEATURES, list(gaps.values()), error_gib=error)
    return fits


def gap_held_out_error_gib(features: Mapping[str, Sequence[float]], printed: Mapping[str, Sequence[float]]) -> float | None:
    """The gap's held-out error (GiB): each GPU model of `printed` (nvidia-smi's total less each CUDA total a log
    printed, GiB) left out in turn, the gap fitted on the other models' mean gaps at their `features` (the gap rows'
    of `cuda_total_fits`: `gap_features` of nvidia-smi's total), and judged against each gap it printed; the 90th
    percentile, each GPU model weighing as one (`held_out_quantile`). Judged at the model's mean alone it would leave
    out the spread of one GPU's own totals (ECC, driver: `gpu_totals.py`). None with fewer than three models (a fit
    of two features needs two beside the one left out)."""
    models = sorted(model for model in printed if printed[model])
    if len(models) < 3:
        return None
    means = {model: statistics.mean(printed[model]) for model in models}
    gaps = leave_one_out(
        models,
        lambda others: non_negative_least_squares([features[o] for o in others], [means[o] for o in others]),
        lambda coefficients, model: sum(c * v for c, v in zip(coefficients, features[model], strict=True)),
    )
    errors = [abs(total_gap - gap) for model, gap in zip(models, gaps, strict=True) for total_gap in printed[model]]
    groups = [model for model in models for _ in printed[model]]
    return held_out_quantile(errors, ERROR_QUANTILE, groups)


def observed(record: Record, term: Term, totals: dict[str, LinearTerm]) -> int | None:
    """The bytes of `term` the record's log measured (the context from CUDA's total less the free memory)."""
    f = record.figures
    if term is Term.CONTEXT:
        if "context" in f:
            return f["context"]
        total = f.get("cuda_total")
        if total is None and record.total_is_cudas:
            # a slice's printed total is CUDA's own (HAMi, MIG): read as the judge's plan reads it
            # (`Record.host_measured`: `GpuTotalOrigin.GIVEN`, no fitted gap taken off, no GPU model needed)
            total = record.gpu_total_bytes
        elif total is None and record.gpu and record.gpu_total_bytes is not None:
            # as a plan takes it: the GPU's fitted total, else nvidia-smi's less the fitted gap (a GPU no log
            # printed the total of: the RTX 5080, L4 and B200 starts of SGLang's corpus)
            estimate = cuda_total_estimate(record.gpu, record.gpu_total_bytes, totals, wsl2=record.wsl2)
            total = estimate.bytes if estimate.source == "calibrated" else None
        if total is None:
            return None
        if "free_before_load" in f:
            return total - f["free_before_load"]
        if "free_after_load" in f and "weights" in f and "runtime" in f:  # a TensorRT engine's C++ runtime
            return total - f["free_after_load"] - f["weights"] - f["runtime"]
        return None
    if term is Term.ACTIVATION and "activation" not in f:
        return f.get("runtime")  # a TensorRT engine's C++ runtime: the term its calibration charges as activation
    # where a release prints its figures in another split than the engine's terms (a charged CUDA-graph estimate
    # inside the printed peak activation, buffers the profile keeps inside a printed "consumed" figure), the engine
    # reads them back (its calibration's `logged_terms`, the figures as printed for most); None: the log does not
    # measure the term apart
    if term in RUNTIME_TERMS:
        found = _logged_terms(record)
        return found.get(term.value) if term.value in found else f.get(term.value)
    return f.get(term.value)


def fit_all(corpus: Corpus, leave_out: str | None = None, skip_gpus: frozenset[str] = frozenset()) -> dict[str, LinearTerm]:
    """Every engine's fits, the CUDA totals, the weights book's errors, a desktop's share beyond Linux and its span
    during an engine's profile (desktop.py), on every record but `leave_out` (and without the totals printed outside a
    log of the GPU models in `skip_gpus`)."""
    fits = {**cuda_total_fits(corpus, leave_out, skip_gpus), **weights_fits(corpus, leave_out)}
    fits.update(assumed_context_fits(corpus, fits, leave_out))
    fits.update(cuda_context_fits(corpus, fits, leave_out))
    from benchmarks.calibration.implied import implied_rows  # it plans with this module's records

    for engine, records in corpus.items():
        calibration = engine_rules(engine).calibration
        for key, (_, names) in calibration.FIT_TERMS.items():
            # a fit whose logs print no figure of its term: what the capacity they printed leaves of it (implied.py)
            found = (implied_rows(records, key, fits, leave_out) if key in calibration.IMPLIED_FITS
                     else term_rows(records, engine, key, fits, leave_out))  # fmt: skip
            if enough(found, names):
                origins = [o for _, o in found]
                # a span fit keeps its held-out misses' signed spread (`LinearTerm.span_bytes`), its plan's interval
                fits[key] = fit_term(key, names, [row for row, _ in found], origins=origins, min_rows=rows_needed(names),
                                     span=key in calibration.SPAN_FITS)  # fmt: skip
                continue
            kept = calibration.FEWER_ROWS_FEATURES.get(key)
            if kept and enough(found, tuple(names[index] for index in kept)):
                fits[key] = fewer_features_fit(key, names, kept, found)
    from benchmarks.calibration.desktop import desktop_fits  # it plans desktop starts with this module's fits
    from benchmarks.calibration.unified import unified_fits  # likewise unified-memory starts

    fits.update(desktop_fits(corpus, fits, leave_out))  # against the fold's fits, the desktop starts but its source's
    fits.update(unified_fits(corpus, fits, leave_out))  # likewise: what unified-memory hosts took during the start
    return fits


def fewer_features_fit(key: str, names: tuple[str, ...], kept: tuple[int, ...],
                       found: list[tuple[FitRow, RowOrigin]]) -> LinearTerm:  # fmt: skip
    """A term whose records are too few for all its features, fitted on the features `kept` (the engine's
    `FEWER_ROWS_FEATURES`: the one that carries most of the term), the others' coefficients 0: a plan of an era
    the corpus holds a few logs of takes their fit and its held-out error, not the assumption no fit leaves."""
    rows: list[FitRow] = [(tuple(values[index] for index in kept), gib) for (values, gib), _ in found]
    subset = tuple(names[index] for index in kept)
    fit = fit_term(key, subset, rows, origins=[o for _, o in found], min_rows=rows_needed(subset))
    coefficients = dict(zip(kept, fit.coefficients, strict=True))
    # the features left out are carried by the rows all the same, and a plan uses them: a row carrying one no other
    # source does is judged by the subset's fit without its source, which ignores the feature as a plan's does
    sources = [o.source for _, o in found]
    carried = feature_carriers([row for row, _ in found], sources)
    unseen = unseen_error(rows, sources, alone([values for (values, _), _ in found], sources))
    return fit.model_copy(update={"features": names,
                                  "coefficients": tuple(coefficients.get(index, 0.0) for index in range(len(names))),
                                  "feature_sources": tuple(len(carrier) for carrier in carried),
                                  "unseen_error_bytes": round(unseen * GIB)})


def rows_needed(names: tuple[str, ...]) -> int:
    """Records a term's fit needs: one per constant and SPARE_ROWS more, or its held-out error means nothing."""
    return len(names) + SPARE_ROWS


SOURCES_NEEDED = 2  # a term's held-out error leaves a source out: one source alone measures none


def enough(found: list[tuple[FitRow, RowOrigin]], names: tuple[str, ...]) -> bool:
    """Whether a term's rows can fit it and measure its held-out error: `rows_needed` rows, from two sources."""
    return len(found) >= rows_needed(names) and len({o.source for _, o in found}) >= SOURCES_NEEDED


def term_rows(records: list[Record], engine: str, key: str, fits: dict[str, LinearTerm],
              leave_out: str | None = None) -> list[tuple[FitRow, RowOrigin]]:  # fmt: skip
    """(features, measured GiB) of every record (but `leave_out`) whose log measured the term `key`, and
    where each came from."""
    calibration = engine_rules(engine).calibration
    term = calibration.FIT_TERMS[key][0]
    rows: list[tuple[FitRow, RowOrigin]] = []
    for record in records:
        if left_out(record, leave_out) or record.excluded(term):
            continue
        if term is Term.CONTEXT and is_unified(record.gpu):
            # a unified-memory host's total less its free memory holds the host's own use of the shared memory
            # (7.37 GiB on the GB10 0.27.1 starts of search-index id 61222544093), not the engine's CUDA context:
            # left out here as `context_misses` and `cuda_context_fits` leave it
            continue
        values = record.memo(("fit_features", key), lambda r=record: calibration.fit_features(key, r.inputs()))
        measured = observed(record, term, fits)
        if values is not None and measured is not None:
            # the part of the term the engine's code sizes (vLLM's FlashInfer all-reduce workspace, `fit_offset`; 0
            # where it sizes none): the fit takes the rest
            measured -= record.memo(("fit_offset", key), lambda r=record: calibration.fit_offset(key, r.inputs()))
            rows.append(((values, measured / GIB), origin(record)))
    return rows


@dataclass(frozen=True)
class Judged:
    """One record's blind plan against its log."""

    record: Record
    kind: str  # "tokens" or "KV GiB": what the log printed to compare with
    truth: float
    predicted: float
    low: float
    high: float
    dominant: str
    truth_half: float = 0.0  # the log's figure stands for truth ± this (its printed rounding)
    # the plan's own widening for lying outside the judged corpus (`PreloadEstimate.extrapolation`; None: inside it,
    # or no corpus given)
    outside: ExtrapolationWidening | None = None

    @property
    def error(self) -> float:
        return self.predicted / self.truth - 1 if self.truth else math.inf

    @property
    def covered(self) -> bool:
        """The interval meets the figures that print as the log's."""
        return self.low <= self.truth + self.truth_half and self.truth - self.truth_half <= self.high


def _kv_truth(record: Record) -> tuple[int, float] | None:
    """The KV memory the log printed, else (vLLM) the budget its printed terms leave, read back by the engine (vLLM
    v0.27+ prints the charged graph estimate inside its activation: charged once), with its rounding (GiB)."""
    f = record.figures
    if "kv" in f:
        return f["kv"], PRINTED_HALF_GIB
    util = record.util
    terms = ("cuda_total", "weights", "activation", "non_torch")
    if not (util and all(name in f for name in terms)):
        return None
    read = _logged_terms(record)
    activation, non_torch = read.get("activation", f["activation"]), read.get("non_torch", f["non_torch"])
    graphs = read.get("cuda_graphs", f.get("cuda_graphs", 0)) if _graphs_charged(record) else 0
    if activation is None or non_torch is None or graphs is None:
        return None  # the read-back does not split the printed figures: not judged from them
    kv = math.ceil(f["cuda_total"] * util) - f["weights"] - activation - non_torch - graphs
    return kv, PRINTED_HALF_GIB * (len(terms) + (graphs > 0))


def _logged_terms(record: Record) -> dict[str, int | None]:
    """The record's runtime figures as its engine reads them back (memoised, as `observed` reads them)."""
    return record.memo(("logged_terms", ""),
                       lambda r=record: engine_rules(r.engine).calibration.logged_terms(r.inputs(), r.figures))  # fmt: skip


def _graphs_charged(record: Record) -> bool:
    """Whether the engine's budget charged the CUDA-graph estimate the log printed (vLLM prints it from v0.18.0
    and charges it from v0.20.0): the engine's own terms for the launch say."""
    terms = engine_rules(record.engine).calibration.terms(record.inputs(), {})  # no fit decides which terms exist
    return any(estimate.term is Term.CUDA_GRAPHS for estimate in terms)


def blind(record: Record, fits: dict[str, LinearTerm], *, weights_logged: bool,
          scale: IntervalScale | None = None, extrapolation: Extrapolation | None = None) -> Judged | None:  # fmt: skip
    """The record's launch planned before the start, with `fits` and the interval `scale` (None: unscaled); None
    where it cannot be planned or judged. The plan reads of `fits` what a product plan reads of the committed blocks
    (`plan_fits.plan_fits`: the engine's own and the engine-neutral ones), so the doc measures what `plan` prints;
    `extrapolation`: what the judged corpus covers and the widening outside it (None: none)."""
    if record.model is None or record.gpu_total_bytes is None or record.excluded(Term.ACTIVATION) and record.excluded(Term.CONTEXT):
        return None
    weights = record.figures.get("weights") if weights_logged else None
    if weights_logged and weights is None:
        return None
    if not weights_logged and record.excluded(Term.WEIGHTS):  # its config misstates the weights: no blind plan
        return None
    stage = engine_rules(record.engine).logged_weights_stage if weights is not None else None  # whose load it is
    measured = record.host_measured(weights_bytes=weights, weights_stage=stage)
    try:
        plan = planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes, draft=record.draft,
                                gpu_name=gpu_key(record.gpu), measured=measured, fits=fits, scale=scale,
                                extrapolation=extrapolation)  # fmt: skip
    except UnsupportedModelError:  # kvtop refuses the launch by name: no blind figure to judge
        return None
    dominant = plan.dominant.label if plan.dominant else "—"
    outside = plan.estimate.extrapolation
    if record.tokens:
        return Judged(record, "tokens", record.tokens, plan.ledger.token_capacity, plan.token_capacity_min,
                      plan.token_capacity_max, dominant, outside=outside)  # fmt: skip
    found = _kv_truth(record)
    if found is None or found[0] <= 0:
        return None
    kv, half = found
    return at_logged_stage(Judged(record, "KV GiB", kv / GIB, plan.ledger.engine.kv_budget_bytes / GIB,
                                  plan.kv_budget_min_bytes / GIB, plan.kv_budget_max_bytes / GIB, dominant, half,
                                  outside), plan.ledger)  # fmt: skip


def at_logged_stage(judged: Judged, ledger: Ledger) -> Judged:
    """`blind`'s KV figure judged against the pipeline stage its log printed it for (`Record.kv_stage`), for every
    judge alike (judgement, groups, replay): the plan's KV budget is its reported stage's (`Ledger.engine`), so the
    plan and its interval move by the named stage's own budget less that one (the least of the stages' budgets for
    "min"). `ledger` is the plan's own (the one `blind` judged, with the fits and the logged weights), so the shift is
    read from the budgets the judged figure came from, not from a second, uncalibrated plan. Unchanged for one stage,
    a record that names none, or a token count (the pool, the stages' least already)."""
    if judged.kind != "KV GiB" or judged.record.kv_stage is None:
        return judged
    budgets = {rank.pp_rank: rank.kv_budget_bytes for rank in ledger.ranks}
    stage = judged.record.kv_stage
    target = min(budgets.values()) if stage == KV_STAGE_MIN else budgets[int(stage)]
    shift = (target - ledger.engine.kv_budget_bytes) / GIB
    return replace(judged, predicted=judged.predicted + shift, low=judged.low + shift, high=judged.high + shift)


def weights_term(record: Record) -> TermEstimate | None:
    """The weights a plan of the record's launch takes: the book, as the load casts it, with what the
    engine's loader holds beside it (the engine calibration's weights term); None without a model."""
    if record.model is None or record.gpu_total_bytes is None:
        return None
    terms = engine_rules(record.engine).calibration.terms(record.inputs(), {})  # the book's bytes: no fit reads them
    return next((estimate for estimate in terms if estimate.term is Term.WEIGHTS), None)


def weights_errors(corpus: Corpus, leave_out: str | None = None) -> list[tuple[Record, float]]:
    """(record, (term − logged) ÷ logged) for every record whose log printed its weights and whose model
    kvtop can read: the weights term (the book and the engine's rules) against the engine's own count."""
    found = []
    for record in _records(corpus, leave_out):
        logged = record.figures.get("weights")
        estimate = weights_term(record) if logged and not record.excluded(Term.WEIGHTS) else None
        if logged and estimate is not None:
            found.append((record, estimate.bytes / logged - 1))
    return found


def built_ahead(record: Record) -> bool:
    """A record whose engine was built ahead of its start (the engine calibration's `weights_built_ahead`)."""
    return engine_rules(record.engine).calibration.weights_built_ahead(record.inputs())


_WEIGHTS_ERRORS: dict[str, tuple[float, bool] | None] = {}  # by record id: (|error|, built ahead), made once per run


def _weights_error(record: Record) -> tuple[float, bool] | None:
    """The record's |weights term − logged| ÷ logged and whether its engine was built ahead; None where the log
    printed no weights, kvtop cannot read the model, or the launch re-casts the weights in a way the book does not
    model (its term is assumed)."""
    if record.id not in _WEIGHTS_ERRORS:
        logged = record.figures.get("weights")
        estimate = weights_term(record) if logged and not record.excluded(Term.WEIGHTS) else None
        cast = estimate is not None and runtime_cast(record.inputs()) is not None
        found = (abs(estimate.bytes / logged - 1), built_ahead(record)) if logged and estimate and not cast else None
        _WEIGHTS_ERRORS[record.id] = found
    return _WEIGHTS_ERRORS[record.id]


def weights_fits(corpus: Corpus, leave_out: str | None = None) -> dict[str, LinearTerm]:
    """The weights book's relative errors (the 90th percentile of |term − logged| ÷ logged, each source weighing as
    one) on every record but `leave_out`: of checkpoints loaded at the start, and apart, of engines built ahead."""
    fits: dict[str, LinearTerm] = {}
    for key, ahead in ((LOADED_ERROR_KEY, False), (BUILT_ERROR_KEY, True)):
        rows = [(found[0], record.source) for record in _records(corpus, leave_out)
                if (found := _weights_error(record)) is not None and found[1] is ahead]  # fmt: skip
        error = round(held_out_quantile([e for e, _ in rows], ERROR_QUANTILE, [s for _, s in rows]), 4) if rows else 0.0
        fits[key] = error_fit(key, ERROR_FEATURES, error, len(rows), len({s for _, s in rows}))
    return fits


def context_misses(corpus: Corpus, totals: dict[str, LinearTerm],
                   leave_out: str | None = None) -> list[tuple[Record, float]]:  # fmt: skip
    """(record, |measured − assumed| GiB) for every record (but `leave_out`) whose log measured the context before the
    load, against `features.assumed_context_gib` at its TP; unified-memory and desktop hosts left out (what their host
    holds is in the figure and is not the engine's)."""
    found = []
    for record in _records(corpus, leave_out):
        if is_unified(record.gpu) or record.desktop or record.excluded(Term.CONTEXT):
            continue
        measured = observed(record, Term.CONTEXT, totals)
        if measured is not None:
            found.append((record, abs(measured / GIB - assumed_context_gib(int(record.raw.get("tp") or 1)))))
    return found


def assumed_context_fits(corpus: Corpus, totals: dict[str, LinearTerm],
                         leave_out: str | None = None) -> dict[str, LinearTerm]:  # fmt: skip
    """The assumed context's half-width: the 90th percentile of `context_misses`, each source weighing as one (as a
    fit's held-out error is measured); where no record measured the context, `NO_CONTEXT_LOGS_ERROR_GIB` over no
    record, so that a plan judged with these fits never reads the committed `ASSUMED_CONTEXT_ERROR_GIB`."""
    rows = context_misses(corpus, totals, leave_out)
    error = (held_out_quantile([miss for _, miss in rows], ERROR_QUANTILE, [record.source for record, _ in rows])
             if rows else NO_CONTEXT_LOGS_ERROR_GIB)  # fmt: skip
    sources = len({record.source for record, _ in rows})
    return {ASSUMED_CONTEXT_ERROR_KEY: error_fit(ASSUMED_CONTEXT_ERROR_KEY, ASSUMED_CONTEXT_ERROR_FEATURES,
                                                 round(error, 3), len(rows), sources)}  # fmt: skip


def cuda_context_fits(corpus: Corpus, totals: dict[str, LinearTerm],
                      leave_out: str | None = None) -> dict[str, LinearTerm]:  # fmt: skip
    """One process's CUDA context per 100 SMs (`cuda_context.py`), fitted on every engine's records (but `leave_out`)
    whose log measured the memory taken before the load at TP × PP = 1 (no communicator yet), on a GPU of known SM
    count; unified-memory and desktop hosts left out, as `context_misses` leaves them."""
    rows: list[FitRow] = []
    origins: list[RowOrigin] = []
    for record in _records(corpus, leave_out):
        one_rank = int(record.raw.get("tp") or 1) * int(record.raw.get("pp") or 1) == 1
        if not one_rank or is_unified(record.gpu) or record.desktop or record.excluded(Term.CONTEXT):
            continue
        measured = observed(record, Term.CONTEXT, totals)
        values = record.memo(("one_process_features", ""), lambda r=record: one_process_features(r.inputs()))
        if measured is not None and values is not None:
            rows.append((values, measured / GIB))
            origins.append(origin(record))
    if len({o.source for o in origins}) < SOURCES_NEEDED:
        return {}
    return {CUDA_CONTEXT_KEY: fit_term(CUDA_CONTEXT_KEY, CUDA_CONTEXT_FEATURES, rows, origins=origins,
                                       min_rows=rows_needed(CUDA_CONTEXT_FEATURES))}  # fmt: skip
