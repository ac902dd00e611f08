"""The CUDA context one process holds on one GPU before any communicator, by the GPU's resident threads (engine-neutral).

What a process holds once CUDA is up and before its weights load is the same for every engine: the CUDA context
(its local memory for every resident thread's stack grows with the GPU's resident threads, its SMs × the threads
one SM holds: CUDA driver API, cuCtxSetLimit CU_LIMIT_STACK_SIZE, `features.context_threads`), the runtime's modules and library handles. Each engine whose log
measures that memory at TP × PP = 1 (CUDA's total less the free memory before the load: SGLang's `avail mem`, vLLM's
startup snapshot, a TensorRT engine's free memory) feeds one fit of it, per 100 SMs of 2,048 threads; no communicator exists at one
rank, so nothing of an engine's TP group is in it. A term whose figure holds a process's context beside what the
engine measures itself (vLLM v0.6.4's non-torch memory: `engines/vllm/calibration_non_torch.py`) charges it from
here, not from another engine's rule.
"""

from __future__ import annotations

from kvtop.domain.calibration.features import (
    SM_FEATURE,
    assumed_context_gib,
    assumed_estimate,
    context_threads,
    fitted_estimate,
    sm_count_unknown,
)
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.wording import GIB, gib

CUDA_CONTEXT_KEY = "cuda_context.one_process"
CUDA_CONTEXT_FEATURES = (SM_FEATURE,)
CUDA_CONTEXT_LABEL = "one process's CUDA context, before any communicator"
# where no fit or SM count reaches: the engine-neutral assumed context at one rank, as wide as its held-out spread
ASSUMED_ONE_PROCESS_ERROR_GIB = 0.75

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
CUDA_CONTEXT_FITS: dict[str, LinearTerm] = {
    'cuda_context.one_process': LinearTerm(
        key='cuda_context.one_process', features=('100 SMs of 2,048 threads',),
        coefficients=(0.483063,), error_bytes=281791088, records=131,
        sources=52, gpus=('A100-40GB', 'A100-80GB', 'A800', 'B200', 'B300', 'GB300', 'H100', 'H100-NVL', 'H100-PCIE', 'H20', 'H200', 'L4', 'L40S', 'RTX3090', 'RTX4090', 'RTX5080', 'RTX5090', 'RTXPRO6000', 'T4'),
        novel_error_bytes=607051526, feature_sources=(52,),
        group_errors=(('100 SMs of 2,048 threads', 281791088),),
    ),
}  # fmt: skip
# END FITTED


def one_process_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """(resident threads ÷ 204,800,) at any TP (a context is one process's on one GPU: `features.context_threads`);
    None where the SM count or the compute capability is not known."""
    threads = context_threads(inputs.gpu_name)
    return None if threads is None else (threads,)


def one_process_context(inputs: CalibrationInputs, fits: dict[str, LinearTerm], basis: str) -> TermEstimate:
    """The context of one process on the plan's GPU: the engine-neutral fit `fits` carries (a plan's defaults carry the
    committed `CUDA_CONTEXT_FITS`: `plan_fits.committed_fits`; a judgement, the one it refitted without the judged
    source), by the GPU's resident threads; else 0.75 GiB ± 0.75 assumed, saying why. Never the committed fit behind the
    caller's back: a plan judged without its source would read a fit its own log helped make."""
    fit = fits.get(CUDA_CONTEXT_KEY)
    values = one_process_features(inputs)
    found = fitted_estimate(Term.CONTEXT, CUDA_CONTEXT_LABEL, fit, values, basis)
    if found is not None:
        return found
    because = sm_count_unknown(CUDA_CONTEXT_KEY, inputs) if fit is not None else "too few logs in the corpus to fit it"
    value = assumed_context_gib(1)
    return assumed_estimate(
        Term.CONTEXT, CUDA_CONTEXT_LABEL, round(value * GIB), round(ASSUMED_ONE_PROCESS_ERROR_GIB * GIB),
        f"{gib(value * GIB)} assumed ({because}): {basis}",
    ).model_copy(update={"assumed_because": because})

