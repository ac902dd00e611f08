"""TensorRT-LLM's pre-load terms (docs/engines/trtllm.md §3, §4, docs/calibration.md).

The PyTorch backend profiles a forward of `max_num_tokens` and sizes KV from what is free at the
peak: CUDA's total less the memory outside torch once the weights are in (CUDA context, NCCL), the
weights, what the run allocated inside torch (the activation peak) and what grew outside it (NCCL
buffers, CUDA graphs). A TensorRT engine's C++ runtime sizes from what is free once the engine, its
execution context and buffers are resident: only the context is fitted there, the rest assumed.
"""

from __future__ import annotations

from kvtop.domain.calibration.features import (
    CONTEXT_FEATURES,
    assumed_estimate,
    context_estimate,
    fitted_estimate,
    logits_gib,
    mlp_transient_gib,
    tp_features,
)
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.calibration.weights import weights_estimate
from kvtop.domain.engines.trtllm.budget import DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_NUM_TOKENS, runtime
from kvtop.domain.wording import GIB

ACTIVATION_FEATURES = ("1 GiB", "max_batch_size × vocab × 4 B", "MLP transient of max_num_tokens")
# a TensorRT engine's C++ runtime: no constant (what it holds at 1 slot and few tokens is a few hundred MiB, below
# the logs' spread), so that 4 logs fit it with 2 to spare for its held-out error
RUNTIME_FEATURES = ("max_batch_size × vocab × 4 B", "MLP transient of max_num_tokens")
RUNTIME_LABEL = "TensorRT engine's execution context, buffers, decoder"
FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {
    "trtllm.context": (Term.CONTEXT, CONTEXT_FEATURES),
    "trtllm.activation": (Term.ACTIVATION, ACTIVATION_FEATURES),
    "trtllm.non_torch": (Term.NON_TORCH, CONTEXT_FEATURES),
    "trtllm.runtime": (Term.ACTIVATION, RUNTIME_FEATURES),
}

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
    'trtllm.runtime': LinearTerm(
        key='trtllm.runtime', features=('max_batch_size × vocab × 4 B', 'MLP transient of max_num_tokens'),
        coefficients=(7.069858, 3.629811), error_bytes=3382779957, records=4,
    ),
}  # fmt: skip
# END FITTED


def _profiled(inputs: CalibrationInputs) -> bool:
    return runtime(inputs.settings, inputs.version) == "pytorch"


def weights_built_ahead(inputs: CalibrationInputs) -> bool:
    """A TensorRT engine holds the weights its build wrote (its own weights error, `BUILT_WEIGHTS_…`); the
    PyTorch backend loads the checkpoint as it starts."""
    return not _profiled(inputs)


def _batch_and_tokens(inputs: CalibrationInputs) -> tuple[int, int]:
    """The build's (or the PyTorch executor's) max_batch_size and max_num_tokens, else the defaults (§6)."""
    s = inputs.settings
    return s.max_running_requests or DEFAULT_MAX_BATCH_SIZE, s.max_num_batched_tokens or DEFAULT_MAX_NUM_TOKENS


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    if key == "trtllm.context":
        return tp_features(inputs)
    if key == "trtllm.runtime":
        if _profiled(inputs) or inputs.model is None or inputs.model.multimodal:
            return None
        batch, tokens = _batch_and_tokens(inputs)
        return (logits_gib(batch, inputs.model), mlp_transient_gib(inputs.model, inputs.layout, tokens))
    if not _profiled(inputs):
        return None
    if key == "trtllm.activation":
        if inputs.model is None or inputs.model.multimodal:
            return None
        batch, tokens = _batch_and_tokens(inputs)
        return (1.0, logits_gib(batch, inputs.model), mlp_transient_gib(inputs.model, inputs.layout, tokens))
    if key == "trtllm.non_torch":
        return tp_features(inputs)
    return None


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the context, the weights, and the profiled activation peak and non-torch growth."""
    fits = {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits
    found = [
        cuda_total_estimate(inputs.gpu_name, inputs.gpu_total_bytes, fits),
        context(inputs, fits),
        weights_estimate(inputs, built_ahead=weights_built_ahead(inputs)),
    ]
    if not _profiled(inputs):
        found.append(fitted_estimate(Term.ACTIVATION, RUNTIME_LABEL, fits.get("trtllm.runtime"),
                                     fit_features("trtllm.runtime", inputs), "the engine's build limits")
                     or assumed_estimate(Term.ACTIVATION, RUNTIME_LABEL, 2 * GIB, 2 * GIB,
                                         "2 GiB assumed: the C++ runtime's buffers are not fitted"))  # fmt: skip
        return tuple(found)
    for key, label, assumed in (("trtllm.activation", "TensorRT-LLM's profiled activation peak", 2 * GIB),
                                ("trtllm.non_torch", "NCCL and CUDA graphs outside torch", GIB // 2)):  # fmt: skip
        term = FIT_TERMS[key][0]
        found.append(fitted_estimate(term, label, fits.get(key), fit_features(key, inputs), "the profiling run")
                     or assumed_estimate(term, label, assumed, assumed, f"{assumed / GIB:g} GiB assumed: no fit"))  # fmt: skip
    return tuple(found)


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    """The memory outside torch once the engine is built (CUDA context, NCCL): its term among `terms`."""
    fits = {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits
    return context_estimate("trtllm.context", "CUDA context and NCCL outside torch", fits, inputs, tp_features(inputs))
