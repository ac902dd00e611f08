"""llama.cpp's pre-load terms (docs/calibration.md): CUDA's total and the context before the weights.

Its budget uses only the free memory before the weights load, to say whether the cache fits; no
llama.cpp case is in the calibration corpus yet, so the context is the generic estimate.
"""

from __future__ import annotations

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.defaults import FEWER_ROWS_FEATURES as FEWER_ROWS_FEATURES
from kvtop.domain.calibration.defaults import IMPLIED_FITS as IMPLIED_FITS
from kvtop.domain.calibration.defaults import READS_FREE_AFTER_LOAD as READS_FREE_AFTER_LOAD
from kvtop.domain.calibration.defaults import SPAN_FITS as SPAN_FITS
from kvtop.domain.calibration.defaults import fit_offset as fit_offset
from kvtop.domain.calibration.defaults import weights_built_ahead as weights_built_ahead
from kvtop.domain.calibration.extrapolation import Extrapolation
from kvtop.domain.calibration.features import (
    CONTEXT_FEATURES,
    CONTEXT_LABEL,
    context_estimate,
    free_memory_terms,
    tp_features,
)
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.plan_fits import committed_fits
from kvtop.domain.calibration.read_back import logged_terms as logged_terms  # its log prints its terms
from kvtop.domain.calibration.start_facts import StartMeasures
from kvtop.domain.calibration.terms import Term, TermEstimate

FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {"llamacpp.context": (Term.CONTEXT, CONTEXT_FEATURES)}

# what a start's log measures of the terms, read by the calibration store (calibration/node.py)
START_MEASURES = StartMeasures(source=(
    "docs/engines/llamacpp.md §1: the cache is sized by -c, not from memory: no charge or free figure is solved"
))

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
}  # fmt: skip
INTERVAL_SCALE: IntervalScale | None = None
EXTRAPOLATION: Extrapolation | None = None
# END FITTED


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    return tp_features(inputs) if key == "llamacpp.context" else None


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    return free_memory_terms("llamacpp.context", committed_fits(FITS) if fits is None else fits, inputs)


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    return context_estimate(
        "llamacpp.context", CONTEXT_LABEL, committed_fits(FITS) if fits is None else fits, inputs, tp_features(inputs)
    )
