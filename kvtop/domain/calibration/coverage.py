"""How far a plan's interval must reach to hold the engine's figure for logs from sources the corpus has not seen.

The terms' held-out errors together (the root of their squares) give the interval's shape: which term widens it,
and how much at each end. Whether it holds the truth is measured on the whole plan: every corpus record planned
fully blind with fits that left its whole source out (`benchmarks/calibration/evaluate.py`), its miss scored in
units of its own interval's half-width on the side it fell (`coverage_score`). The engine's interval scale is the
90th percentile of those scores with split conformal prediction's small-sample correction over its sources
(`held_out_quantile(..., corrected=True)`): of n sources, ⌈(n + 1) × 0.9⌉-th by weight, so that a log from a new
source falls inside the scaled interval with probability ≥ 0.9 where the sources are exchangeable. It is an
`IntervalScale` of its own, kept beside the engine's fits (its calibration module's `INTERVAL_SCALE`, written by
`benchmarks/calibration/run.py --write`); an engine without one keeps 1, and the scale never goes below 1
(`scale_fit`): it may widen the terms' errors together, never narrow them. Leave-one-source-out is kinder than a start
from nowhere: #27's own measure (starts the project had never seen, planned blind before they were added) held 108
intervals of 123 through session 53 and 59 of 68 in session 54, both below 90 %, while the scales stood near 1; the
corrected quantiles of session 54's corpus asked for × 0.64 (SGLang), × 0.81 (vLLM) and × 0.72 (TensorRT-LLM). Plans are scored in both ways `plan` is used, fully blind and with the weights a log
printed; the engine's scale is the larger of the two, a way scored on fewer than 9 sources not voting (its floor
at 1 says it has too few sources, not that the interval is too narrow).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.fit import held_out_quantile
from kvtop.domain.calibration.linear import ERROR_QUANTILE


class IntervalScale(BaseModel):
    """The factor on an engine's terms' held-out errors together that makes its plans' intervals hold the engine's
    figure in 90 % of blind plans, and the plans (`records`) and sources it was measured on."""

    model_config = ConfigDict(frozen=True)

    engine: str
    factor: float
    records: int  # plans scored
    sources: int  # the sources (threads, repositories, files) they came from
    weights_logged: bool = False  # scored with the weights their logs printed (else fully blind)

    @property
    def basis(self) -> str:
        """The scale in words, as a plan states it."""
        plans = "plans with their logs' weights" if self.weights_logged else "blind plans"
        return (f"× {self.factor:.2f}: the terms' errors together reach the engine's figure in 90 % of {self.records} "
                f"{plans} from {self.sources} sources, each judged by fits that left its source out")  # fmt: skip


def too_few_sources(count: int) -> bool:
    """Whether `count` sources are too few for the corrected quantile (⌈(n + 1) × 0.9⌉ > n: fewer than 9)."""
    return math.ceil((count + 1) * ERROR_QUANTILE - 1e-9) > count


def coverage_score(
    truth: float, predicted: float, low: float, high: float, truth_half: float = 0.0
) -> float | None:
    """The miss in half-widths of the interval on the side the truth fell (0 inside the printed rounding);
    None where that side has no width (every term measured: no scale widens it)."""
    miss = max(abs(truth - predicted) - truth_half, 0.0)
    side = predicted - low if truth < predicted else high - predicted
    if miss == 0:
        return 0.0
    return miss / side if side > 0 else None


def scale_fit(engine: str, scores: Sequence[float], sources: Sequence[str], *,
              weights_logged: bool = False) -> IntervalScale | None:  # fmt: skip
    """The engine's interval scale from its blind plans' scores (None for none): their corrected 90th percentile, at
    least 1.

    Of fewer sources than the correction needs (⌈(n + 1) × 0.9⌉ > n: fewer than 9) the quantile is the largest score,
    which guarantees less than 0.9. Below 1 a scale would shrink the errors the terms state (an assumed term's among
    them) to fit the records it is judged on, which unseen starts did not bear out (module docstring)."""
    if not scores:
        return None
    scale = max(held_out_quantile(scores, ERROR_QUANTILE, sources, corrected=True), 1.0)
    count = len(set(sources))
    return IntervalScale(engine=engine, factor=round(scale, 4), records=len(scores), sources=count,
                         weights_logged=weights_logged)  # fmt: skip
