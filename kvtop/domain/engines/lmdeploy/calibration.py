"""LMDeploy's pre-load terms (docs/engines/lmdeploy.md §1, docs/calibration.md).

Both LMDeploy engines give `cache_max_entry_count` of the memory free once the weights are resident
(the least over TP ranks): CUDA's total less the CUDA context and NCCL less the weights. Its logs print
the blocks, not the free memory, so the corpus measures the context only through the block count.
"""

from __future__ import annotations

from kvtop.domain.calibration.features import (
    CONTEXT_FEATURES,
    CONTEXT_LABEL,
    context_estimate,
    free_memory_terms,
    tp_features,
)
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate

FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {"lmdeploy.context": (Term.CONTEXT, CONTEXT_FEATURES)}

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
    'lmdeploy.interval': LinearTerm(
        key='lmdeploy.interval', features=("× the terms' held-out errors together",),
        coefficients=(2.3103,), error_bytes=0, records=4,
        sources=4, gpus=(),
        novel_error_bytes=0,
    ),
}  # fmt: skip
# END FITTED


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    return tp_features(inputs) if key == "lmdeploy.context" else None


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the context before the weights load, the weights."""
    return free_memory_terms("lmdeploy.context", {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits, inputs)


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    """The memory a start takes before the weights load (its term among `terms`)."""
    return context_estimate(
        "lmdeploy.context", CONTEXT_LABEL, {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits, inputs, tp_features(inputs)
    )
