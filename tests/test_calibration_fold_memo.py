"""A fold's desktop, unified-memory and implied plans are answered again from an earlier fold where only the weights'
relative errors moved (benchmarks/calibration/fold_memo.py `ERROR_ONLY`): those errors widen the weights term, and
the plan's centre, all those questions read, never adds a term's error (session 72: each left-out source moves them)."""

from __future__ import annotations

from benchmarks.calibration.desktop import _desktop_excess, _left_beside_plan, _plan
from benchmarks.calibration.fold_memo import ERROR_ONLY, fold_memo
from benchmarks.calibration.implied import _implied_bytes, without_term
from kvtop.domain.calibration.estimate import engine_fits
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term
from kvtop.domain.calibration.weights import LOADED_ERROR_KEY
from kvtop.domain.engines.registry import engine_rules
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

RECORDS = [record for rows in CORPUS.values() for record in rows]
DESKTOP = [record for record in RECORDS if record.desktop and record.model is not None]
WINDOWS = next(record for record in CORPUS["lmdeploy"] if record.id == "case-lmdeploy-1703-internlm-20b-w4-3090")


def _errors_tripled(fits: dict[str, LinearTerm]) -> dict[str, LinearTerm]:
    """`fits` with each weights relative error three times the corpus's (a fold never moves it that far)."""
    return {key: fit.model_copy(update={"coefficients": tuple(3 * c for c in fit.coefficients)})
            if key in ERROR_ONLY else fit for key, fit in fits.items()}  # fmt: skip


def test_the_weights_error_moves_the_ends_and_never_the_centre() -> None:
    """lmdeploy#1703's Windows start, planned with the corpus's fits and with its weights error tripled: the weights
    term's half-width and the interval's low end move, the centre's ledger does not."""
    fits = engine_fits("lmdeploy", corpus_fits())
    assert LOADED_ERROR_KEY in fits
    plan, moved = _plan(WINDOWS, fits, None), _plan(WINDOWS, _errors_tripled(fits), None)
    weights, weights_moved = plan.estimate.term(Term.WEIGHTS), moved.estimate.term(Term.WEIGHTS)
    assert weights is not None and weights_moved is not None and weights.error_bytes != weights_moved.error_bytes
    assert plan.token_capacity_min != moved.token_capacity_min
    assert plan.ledger == moved.ledger


def test_every_desktop_answer_is_the_same_with_the_weights_error_moved() -> None:
    fits = corpus_fits()
    moved = _errors_tripled(fits)
    asked = 0
    for record in DESKTOP:
        subset, subset_moved = engine_fits(record.engine, fits), engine_fits(record.engine, moved)
        assert subset != subset_moved
        assert _left_beside_plan(record, subset) == _left_beside_plan(record, subset_moved), record.id
        assert _desktop_excess(record, subset, fits) == _desktop_excess(record, subset_moved, moved), record.id
        asked += 1
    assert asked >= 10


def test_every_implied_row_is_the_same_with_the_weights_error_moved() -> None:
    fits = corpus_fits()
    moved = _errors_tripled(fits)
    rows = 0
    for record in CORPUS["vllm"]:
        calibration = engine_rules(record.engine).calibration
        for key in calibration.IMPLIED_FITS:
            if record.model is None or record.gpu_total_bytes is None or not record.tokens:
                continue
            if calibration.fit_features(key, record.inputs()) is None:
                continue
            names = calibration.FIT_TERMS[key][1]
            at_zero = {**fits, key: without_term(key, names)}
            at_zero_moved = {**moved, key: without_term(key, names)}
            found = _implied_bytes(record, engine_fits(record.engine, at_zero))
            assert found == _implied_bytes(record, engine_fits(record.engine, at_zero_moved)), record.id
            rows += found is not None
    assert rows >= 10


def test_the_memo_plans_again_where_a_centre_fit_moved_only() -> None:
    """Asked again with only the weights error moved, the memo answers without planning; with a fit the centre reads
    moved (the CUDA context's), it plans again."""
    fits = corpus_fits()
    plans: list[dict[str, LinearTerm]] = []

    def plan(subset: dict[str, LinearTerm], _: dict[str, LinearTerm]) -> int:
        plans.append(subset)
        return len(plans)

    question = "test: plans again where a centre fit moved"
    assert fold_memo(WINDOWS, question, fits, plan) == 1
    assert fold_memo(WINDOWS, question, _errors_tripled(fits), plan) == 1
    centre = next(key for key in engine_fits("lmdeploy", fits) if key.startswith("cuda_context"))
    context = fits[centre].model_copy(update={"coefficients": tuple(c + 0.01 for c in fits[centre].coefficients)})
    assert fold_memo(WINDOWS, question, {**fits, centre: context}, plan) == 2
    assert len(plans) == 2
