"""Rows of a fit whose logs print no figure of its term: what the capacity a log printed leaves of the term.

vLLM v0.3.1–v0.6.3 print only `# GPU blocks`, never their non-torch charge. Its rows are each start planned with the
fold's other fits and the term at 0 (the weights as the log printed them, where it did), less the KV memory the log's
capacity stands for: the bytes the term must have taken. Their errors hold the other terms' errors too, so the fit's
held-out error (leave-one-source-out, as every fit's) is the term's measured error as a plan reads it. The engine names
such fits (its calibration's `IMPLIED_FITS`).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import Record
from benchmarks.calibration.evaluate import left_out, origin
from benchmarks.calibration.fold_memo import fold_memo
from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.calibration.linear import FitRow, LinearTerm, RowOrigin
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_key
from kvtop.units import GIB


def without_term(key: str, names: tuple[str, ...]) -> LinearTerm:
    """Fit `key` at 0 bytes, every feature marked as measured (so no other era's part stands in for one)."""
    return LinearTerm(key=key, features=names, coefficients=tuple(0.0 for _ in names), error_bytes=0, records=0,
                      sources=0, gpus=(), novel_error_bytes=0, feature_sources=tuple(1 for _ in names))  # fmt: skip


def implied_bytes(record: Record, key: str, fits: dict[str, LinearTerm]) -> int | None:
    """The bytes fit `key`'s term took in the record's start: the KV budget its plan leaves with the term at 0, less the
    KV memory its log printed (or its printed tokens stand for); None where the start is not planned or judged.
    Planned again only where a fit the plan reads changed (`fold_memo`: each fold of the judgement asks again)."""
    if record.model is None or record.gpu_total_bytes is None:
        return None
    names = engine_rules(record.engine).calibration.FIT_TERMS[key][1]
    at_zero = {**fits, key: without_term(key, names)}
    return fold_memo(record, f"implied_bytes {key}", at_zero, lambda subset, _: _implied_bytes(record, subset))


def _implied_bytes(record: Record, fits: dict[str, LinearTerm]) -> int | None:
    """`implied_bytes`, planned with `fits` (the term at 0). Its centre only (`calibrated_ledger`: the ledger
    `planned_capacity` shows, without the two ends' solves it would add and this never reads)."""
    assert record.model is not None and record.gpu_total_bytes is not None
    weights = record.figures.get("weights")
    stage = engine_rules(record.engine).logged_weights_stage if weights is not None else None
    measured = record.host_measured(weights_bytes=weights, weights_stage=stage)
    try:
        ledger = calibrated_ledger(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                                   draft=record.draft, gpu_name=gpu_key(record.gpu), measured=measured,
                                   fits=fits)  # fmt: skip
    except UnsupportedModelError:
        return None
    budget, tokens = ledger.engine.kv_budget_bytes, ledger.token_capacity
    if record.tokens and tokens:
        return round(budget * (1 - record.tokens / tokens))
    kv = record.figures.get("kv")
    return None if kv is None else budget - kv


def implied_rows(records: list[Record], key: str, fits: dict[str, LinearTerm],
                 leave_out: str | None = None) -> list[tuple[FitRow, RowOrigin]]:  # fmt: skip
    """(features, implied GiB) of every record (but `leave_out`) the fit applies to and whose log printed its
    capacity, and where each came from."""
    calibration = engine_rules(records[0].engine).calibration if records else None
    rows: list[tuple[FitRow, RowOrigin]] = []
    for record in records:
        if calibration is None or left_out(record, leave_out) or record.excluded(calibration.FIT_TERMS[key][0]):
            continue
        values = record.memo(("fit_features", key), lambda r=record: calibration.fit_features(key, r.inputs()))
        if values is None:
            continue
        found = implied_bytes(record, key, fits)
        if found is not None:
            rows.append(((values, found / GIB), origin(record)))
    return rows
