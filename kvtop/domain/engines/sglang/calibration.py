"""SGLang's pre-load terms (docs/engines/sglang.md §4, docs/calibration.md).

SGLang sizes KV from the memory free before the weights load (`Load weight begin. avail mem`, the
least over ranks) and after them; its reserve is a rule of that figure, not a profile. What a plan
must estimate is therefore that free memory: CUDA's total less what the CUDA context, NCCL's
communicators and the driver took first. The context grows with the TP group where NVLink joins the
GPUs (NCCL and the custom all-reduce's peer buffers: 1.6–2.6 GiB at TP 8 on H20/H100/H200), not across
PCIe (0.44–0.68 GiB at TP 2–4 on RTX 4090 and L4: the custom all-reduce is off), and it is larger on
Blackwell parts before anything loads (0.98–1.07 GiB on B200 and 1.16–1.78 on RTX 5090 at TP 1, against
0.60–0.72 on H100/H200). The weights come from kvtop's book.
"""

from __future__ import annotations

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.features import CONTEXT_LABEL, context_estimate, tp_features
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.start_facts import StartMeasures
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.calibration.weights import weights_estimate
from kvtop.domain.engines.sglang.weights_held import held_beside
from kvtop.domain.gpus import compute_capability, gpu_model_key

BLACKWELL_MAJOR = 10  # compute capability 10.x (B200, GB200, B300) and 12.x (RTX 50, RTX PRO 6000)
CONTEXT_FEATURES = ("1 GiB", "log2(TP) on NVLink GPUs", "log2(TP) on PCIe GPUs", "1 GiB on Blackwell GPUs")
FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {"sglang.context": (Term.CONTEXT, CONTEXT_FEATURES)}

# what a start's log measures of the terms, read by the calibration store (calibration/node.py)
START_MEASURES = StartMeasures(weights_from_free_drop=True, source=(
    "sglang/srt/model_executor/model_runner.py load_model (v0.3–v0.5.23): 'mem usage' is avail mem before − after the load; its reserve is the fraction's rest, not a profiled charge"
))

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
    'sglang.context': LinearTerm(
        key='sglang.context', features=('1 GiB', 'log2(TP) on NVLink GPUs', 'log2(TP) on PCIe GPUs', '1 GiB on Blackwell GPUs'),
        coefficients=(0.572084, 0.522576, 0.0, 0.525653), error_bytes=854899285, records=25,
        sources=23, gpus=('B200', 'H100', 'H20', 'H200', 'L4', 'L40S', 'RTX4090', 'RTX5080', 'RTX5090'),
        novel_error_bytes=1071125346, feature_sources=(23, 5, 4, 6),
    ),
}  # fmt: skip
INTERVAL_SCALE: IntervalScale | None = IntervalScale(
    engine='sglang', factor=1.3147, records=19, sources=18,
)
# END FITTED


def context_features(inputs: CalibrationInputs) -> tuple[float, ...]:
    """(1, log2 TP on NVLink GPUs, log2 TP on PCIe GPUs, 1 on Blackwell GPUs): `tp_features` and whether
    the GPU is a Blackwell part (compute capability 10 or later; 0 for a GPU kvtop does not know)."""
    capability = compute_capability(gpu_model_key(inputs.gpu_name)) if inputs.gpu_name else None
    blackwell = capability is not None and capability[0] >= BLACKWELL_MAJOR
    return (*tp_features(inputs), 1.0 if blackwell else 0.0)


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    return context_features(inputs) if key == "sglang.context" else None


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the context before the weights load, the weights."""
    fits = {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits
    return (
        cuda_total_estimate(inputs.gpu_name, inputs.gpu_total_bytes, fits),
        context(inputs, fits),
        weights_estimate(inputs, extra=held_beside(inputs)),  # the rope cache the load measures (weights_held.py)
    )


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    """The memory a start takes before the weights load (its term among `terms`)."""
    fits = {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits
    return context_estimate("sglang.context", CONTEXT_LABEL, fits, inputs, context_features(inputs))
