"""The leave-one-source-out judgement: every record planned blind with fits that never saw its source, its interval
scaled by its engine's interval scale fitted on the other sources' coverage scores.

`plan_scores` scores every record's unscaled interval (fully blind and with the logged weights), `engine_scale` fits
an engine's scale from those scores, `judge_all` judges every record with both, and `judge_corpus` makes the one
`Judgement` that run.py writes the fitted blocks and docs/calibration.md from and the tests check. The fits and the
blind plan of one record are evaluate.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchmarks.calibration.evaluate import Corpus, Judged, blind, fit_all
from kvtop.domain.calibration.coverage import IntervalScale, coverage_score, scale_fit, too_few_sources
from kvtop.domain.calibration.linear import LinearTerm

if TYPE_CHECKING:
    from benchmarks.calibration.groups import GroupMiss


FitCache = dict[str, dict[str, LinearTerm]]  # the fits without each source, made once per run
Scores = dict[str, list[tuple[float, str]]]  # by engine: each plan's coverage score, and its source


@dataclass(frozen=True)
class PlanScores:
    """The coverage scores of the two ways `plan` is used, by engine: fully blind (the weights book's weights) and
    with the weights a log printed (`--engine-log`). One interval scale serves both, so it is fitted to hold in each."""

    blind: Scores
    logged: Scores


def _fits_without(corpus: Corpus, source: str, cache: FitCache) -> dict[str, LinearTerm]:
    if source not in cache:
        cache[source] = fit_all(corpus, leave_out=source)
    return cache[source]


def _scores(corpus: Corpus, cache: FitCache, *, weights_logged: bool) -> Scores:
    scores: Scores = {}
    for engine, records in corpus.items():
        for record in records:
            found = blind(record, _fits_without(corpus, record.source, cache), weights_logged=weights_logged)
            score = coverage_score(found.truth, found.predicted, found.low, found.high, found.truth_half) if found else None
            if score is not None:
                scores.setdefault(engine, []).append((score, record.source))
    return scores


def plan_scores(corpus: Corpus, cache: FitCache | None = None) -> PlanScores:
    """Every record planned with fits that left its source out, its interval unscaled, fully blind and (where its
    log printed them) with the logged weights: how many of its half-widths its log's figure fell from the plan
    (`coverage_score`), by engine."""
    cache = {} if cache is None else cache
    return PlanScores(blind=_scores(corpus, cache, weights_logged=False),
                      logged=_scores(corpus, cache, weights_logged=True))  # fmt: skip


def engine_scale(engine: str, scores: PlanScores, leave_out: str | None = None) -> IntervalScale | None:
    """The engine's interval scale from the scores of every source but `leave_out` (`coverage.scale_fit`): the larger
    of the fully blind plans' and the logged-weights plans' scales, a way scored on fewer than 9 sources not voting
    (`coverage.too_few_sources`: its floor at 1 is about its few sources). A plan with the weights measured has
    narrower terms, and the blind plans' scale alone held vLLM's logged-weights intervals in 88.6 % (session 51)."""
    fitted = []
    for by_engine, logged in ((scores.blind, False), (scores.logged, True)):
        kept = [(score, source) for score, source in by_engine.get(engine, []) if source != leave_out]
        scale = scale_fit(engine, [score for score, _ in kept], [source for _, source in kept], weights_logged=logged)
        if scale is not None and not (logged and too_few_sources(scale.sources)):
            fitted.append(scale)
    return max(fitted, key=lambda scale: scale.factor) if fitted else None


def judge_all(corpus: Corpus, *, weights_logged: bool, scores: PlanScores | None = None,
              cache: FitCache | None = None) -> dict[str, list[Judged]]:  # fmt: skip
    """Every record planned blind with fits that left its whole source out (leave-one-source-out), its interval
    scaled by the engine's scale fitted on the other sources' scores, by engine."""
    cache = {} if cache is None else cache
    scores = plan_scores(corpus, cache) if scores is None else scores
    judged: dict[str, list[Judged]] = {}
    for engine, records in corpus.items():
        for record in records:
            scale = engine_scale(engine, scores, leave_out=record.source)
            result = blind(record, _fits_without(corpus, record.source, cache), weights_logged=weights_logged,
                           scale=scale)  # fmt: skip
            if result is not None:
                judged.setdefault(engine, []).append(result)
    return judged


@dataclass(frozen=True)
class Judgement:
    """The corpus judged once: the fits on every record, the fits without each source (`cache`), the fully blind
    plans' coverage scores (`PlanScores`) and both leave-one-source-out judgements. run.py writes the fitted blocks and
    docs/calibration.md from it, and the tests check the same one (one truth: a test asserts what the doc claims)."""

    corpus: Corpus
    fits: dict[str, LinearTerm]
    cache: FitCache
    scores: PlanScores
    logged: dict[str, list[Judged]]  # the weights as the log printed them, every other term blind
    blind: dict[str, list[Judged]]  # fully blind (the weights book's weights)
    # every record planned fully blind with its GPU model, architecture class or release band absent (groups.py): what
    # each engine's widening outside its corpus is calibrated on (`extrapolation.py`)
    groups: tuple[GroupMiss, ...] = ()


def judge_corpus(corpus: Corpus) -> Judgement:
    """Every fit and judgement the doc shows, each made once."""
    from benchmarks.calibration.groups import judge_groups  # it plans with this module's fits and scores

    cache: FitCache = {}
    scores = plan_scores(corpus, cache)
    return Judgement(corpus=corpus, fits=fit_all(corpus), cache=cache, scores=scores,
                     logged=judge_all(corpus, weights_logged=True, scores=scores, cache=cache),
                     blind=judge_all(corpus, weights_logged=False, scores=scores, cache=cache),
                     groups=tuple(judge_groups(corpus, scores)))  # fmt: skip
