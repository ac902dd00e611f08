"""SGLang's pre-load terms (docs/engines/sglang.md §4, docs/calibration.md).

SGLang sizes KV from the memory free before the weights load (`Load weight begin. avail mem`, the
least over ranks) and after them; its reserve is a rule of that figure, not a profile. What a plan
must estimate is therefore that free memory: CUDA's total less what the CUDA context, NCCL's
communicators and the driver took first, which grows with the TP group (about 0.6–1 GiB alone, 2–3
GiB at TP 8). The weights come from kvtop's book.
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

FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {"sglang.context": (Term.CONTEXT, CONTEXT_FEATURES)}

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
    'sglang.context': LinearTerm(
        key='sglang.context', features=('1 GiB', 'log2(TP) on NVLink GPUs', 'log2(TP) on PCIe GPUs'),
        coefficients=(0.833241, 0.540434, 0.0), error_bytes=1105823872, records=14,
    ),
}  # fmt: skip
# END FITTED


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    return tp_features(inputs) if key == "sglang.context" else None


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the context before the weights load, the weights."""
    return free_memory_terms("sglang.context", {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits, inputs)


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    """The memory a start takes before the weights load (its term among `terms`)."""
    return context_estimate(
        "sglang.context", CONTEXT_LABEL, {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits, inputs, tp_features(inputs)
    )
