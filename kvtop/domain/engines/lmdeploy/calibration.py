"""LMDeploy's pre-load terms (docs/engines/lmdeploy.md §1, docs/calibration.md).

Both LMDeploy engines give `cache_max_entry_count` of the memory free once the weights are resident
(the least over TP ranks): CUDA's total less the CUDA context and NCCL less the weights. Its logs print
the blocks, not the free memory, so the corpus measures the context only through the block count.
"""

from __future__ import annotations

from kvtop.domain.calibration.features import CONTEXT_FEATURES, context_estimate, tp_features
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.calibration.weights import weights_estimate

FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {"lmdeploy.context": (Term.CONTEXT, CONTEXT_FEATURES)}

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
}  # fmt: skip
# END FITTED


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    return tp_features(inputs) if key == "lmdeploy.context" else None


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the context before the weights load, the weights."""
    fits = {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits
    return (
        cuda_total_estimate(inputs.gpu_name, inputs.gpu_total_bytes, fits),
        context_estimate("lmdeploy.context", "CUDA context and NCCL before the weights load", fits, inputs),
        weights_estimate(inputs),
    )
