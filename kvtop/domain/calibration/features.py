"""Features the engines' fitted terms share (GiB), and the step from a fit to a `TermEstimate`.

A fit's features and coefficients are in GiB, not bytes: the least squares (benchmarks/calibration/) stay well
conditioned beside the log2(TP) and per-100-SM features, and a coefficient reads as the logs print it (0.75 per
doubling of TP). They stay floats of arithmetic: bytes come from `LinearTerm.predict` (an int), and text from
kvtop/domain/wording.py's `gib` (`gib(value * GIB)`), never a figure formatted in place.

What a profiling run allocates follows what it executes: a forward over N tokens keeps the MLP's
transient (the gate-up output and its activation, or a fused MoE's caches per routed expert) and the
sampler keeps float32 logits over the vocabulary; NCCL's buffers grow with the ranks of the group.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.host_memory import CONTEXT_ERROR_WORDS
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.gpus import NVLINK_GPUS, gpu_model_key, resident_threads
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.wording import GIB, gib

CONTEXT_FEATURES = ("1 GiB", "log2(TP) on NVLink GPUs", "log2(TP) on PCIe GPUs")
# the context assumed where no fit reaches: (GiB alone, GiB per doubling of TP)
ASSUMED_CONTEXT_GIB = (0.75, 0.75)
# its half-width: how far the context every engine's logs measured (CUDA's total less the free memory before the load)
# fell from that assumption, the 90th percentile with each source weighing as one (unified-memory and desktop hosts
# left out: what their host holds is not the engine's); an engine with no record of its own (LMDeploy) is judged by
# what the others measured, never by its own capacity misses (docs/calibration.md)
# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
ASSUMED_CONTEXT_ERROR_GIB = 1.246
ASSUMED_CONTEXT_RECORDS = 186
ASSUMED_CONTEXT_SOURCES = 73
# END FITTED
# the same error as a fit (one coefficient, GiB), where the corpus's blind plans measure it again without the judged
# record's source (benchmarks/calibration/evaluate.py `assumed_context_fits`); no committed fit holds it
ASSUMED_CONTEXT_ERROR_KEY = "context.assumed_error"
ASSUMED_CONTEXT_ERROR_FEATURES = ("|measured − assumed| GiB",)


def mlp_transient_gib(m: ModelSpec, layout: ParallelLayout, tokens: int, *, intermediates: int | None = None) -> float:
    """tokens × experts per token × (3 × intermediate ÷ shards + hidden) × 2 B (dense: one 'expert'). A dense MLP
    holds its up projection's output and the activation's at once: a gated one's gate-up output is two intermediates
    wide (`gate_up, _ = self.gate_up_proj(x); x = self.act_fn(gate_up)`, vLLM llama.py `LlamaMLP.forward`), an ungated
    one's fc1 output one (`fc1 → activation_fn → fc2`, vLLM opt.py `OPTDecoderLayer.forward`, gpt2.py `GPT2MLP`): 2 ×
    intermediate where the architecture says ungated (`ModelSpec.mlp_gated`). `intermediates`: how many
    [tokens, intermediate] tensors a dense forward holds at once where a runtime's differs from the architecture's
    (None: 3 gated, 2 ungated); an MoE layer's routed and shared experts are gated and keep 3."""
    tp = layout.tp
    if m.moe is not None and MlpKind.MOE in m.layer_mlp:
        routed = m.moe.experts_per_token * (3 * m.moe.expert_intermediate_size / max(layout.moe_shards, 1)
                                            + m.hidden_size)  # fmt: skip
        width = routed + 3 * m.moe.shared_intermediate_size / tp
    else:
        held = intermediates if intermediates is not None else (3 if m.mlp_gated else 2)
        width = held * m.intermediate_size / tp + m.hidden_size
    return tokens * width * 2 / GIB


def logits_gib(requests: int, m: ModelSpec) -> float:
    """requests × vocabulary × 4 B: one float32 copy of the sampler's logits."""
    return requests * m.vocab_size * 4 / GIB


def tp_features(inputs: CalibrationInputs) -> tuple[float, ...]:
    """(1, log2 TP on NVLink GPUs, log2 TP on PCIe GPUs): a constant and a part per doubling of the TP
    group (NCCL's communicators; the custom all-reduce's peer buffers only where NVLink joins the GPUs)."""
    doublings = math.log2(max(inputs.layout.tp, 1))
    linked = gpu_model_key(inputs.gpu_name) in NVLINK_GPUS
    return (1.0, doublings if linked else 0.0, 0.0 if linked else doublings)


# The GPU's resident threads ÷ 204,800 (100 SMs of 2,048 threads: an H100's 132 SMs are 1.32, an L40S's 142 SMs of
# 1,536 threads 1.065): its coefficient is GiB per 100 such SMs
SM_FEATURE = "100 SMs of 2,048 threads"
THREADS_PER_FEATURE = 100 * 2048


def context_threads(gpu_name: str | None) -> float | None:
    """The GPU's resident threads in units of 100 SMs of 2,048 (`SM_FEATURE`): what a CUDA context reserves grows with
    them, not with the SMs alone (the local memory for every resident thread's stack, which the driver grows to the
    largest a loaded kernel needs and never shrinks: CUDA driver API, cuCtxSetLimit CU_LIMIT_STACK_SIZE; an SM holds
    2,048 threads on the data-centre chips, 1,536 on Ada, GA10x and consumer Blackwell, 1,024 on Turing:
    `gpus.MAX_THREADS_PER_SM`). Per SM alone, the fits over-predicted the 1,536-thread cards' context (three L40S
    sources 0.36–0.51 GiB against 0.75; the engine-neutral fit's held-out error 0.27 GiB, 0.24 by threads). None
    where the SM count or the compute capability is unknown (`gpus.resident_threads`)."""
    threads = resident_threads(gpu_name)
    return None if threads is None else threads / THREADS_PER_FEATURE


def sm_tp_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """(resident threads ÷ 204,800, log2 TP on NVLink GPUs, log2 TP on PCIe GPUs): `tp_features` with the constant
    replaced by the GPU's resident threads (`context_threads`). None for a GPU whose SM count or compute capability
    kvtop does not know (`gpus.GPU_SMS`, `gpus.GPU_CAPABILITY`): the term is assumed."""
    threads = context_threads(inputs.gpu_name)
    if threads is None:
        return None
    return (threads, *tp_features(inputs)[1:])


def fitted_estimate(
    term: Term,
    label: str,
    fit: LinearTerm | None,
    values: tuple[float, ...] | None,
    basis: str,
    by_group: bool = False,
) -> TermEstimate | None:
    """The estimate of a fitted term (None where no fit or no features: the caller assumes instead); `by_group`: its
    error the held-out error of the plan's feature group where the fit measured one (`LinearTerm.error_for`)."""
    if fit is None or values is None:
        return None
    error = fit.error_for(values) if by_group else fit.error_bytes
    return TermEstimate(
        term=term, label=label, bytes=max(fit.predict(values), 0), error_bytes=error,
        source="calibrated", basis=f"{fit.key}, fitted on {fit.records} logs: {basis}", fit_key=fit.key, values=values,
    )  # fmt: skip


def assumed_estimate(term: Term, label: str, value_bytes: int, error_bytes: int, basis: str) -> TermEstimate:
    """A stated assumption where no fit reaches (its error as wide as the figure's plausible range)."""
    return TermEstimate(term=term, label=label, bytes=value_bytes, error_bytes=error_bytes, source="assumed", basis=basis)


CONTEXT_LABEL = "CUDA context and NCCL before the weights load"


CONTEXT_TOO_FEW_LOGS = "too few logs in the corpus to fit it"


def sm_count_unknown(key: str, inputs: CalibrationInputs) -> str:
    """Why a fit on the GPU's resident threads (`sm_tp_features`: its SM count × the threads an SM holds) cannot be
    read for this launch, in words: no GPU model is named (a plan by --gpu-memory alone), or kvtop's tables do not
    hold the one named (every GPU of `gpus.GPU_SMS` has its threads per SM: tests/domain/test_resident_threads.py)."""
    if not inputs.gpu_name:
        return f"the GPU model is not named, so its SM count, which {key} is fitted on, is unknown: pass --gpu"
    return f"kvtop does not know the {inputs.gpu_name}'s SM count, which {key} is fitted on"


def context_estimate(
    key: str, label: str, fits: dict[str, LinearTerm], inputs: CalibrationInputs, values: tuple[float, ...] | None,
    by_group: bool = False, unknown_because: str | None = None, counted: str | None = None,
) -> TermEstimate:
    """The memory taken before the weights load (CUDA context, NCCL): fitted (on the fit's feature
    `values`; None where they are not known), else 0.75 GiB + 0.75 GiB per doubling of TP assumed, saying why
    (`assumed_because`): no fit, or the fit's features unknown here (`unknown_because`, e.g. `sm_count_unknown`).
    `counted`: what the fit's TP features count where that is not the whole group (a group over nodes), for its basis."""
    fit = fits.get(key)
    found = fitted_estimate(Term.CONTEXT, label, fit, values, counted or f"TP {inputs.layout.tp}", by_group)
    if found is not None:
        return found
    if fit is None:
        because = CONTEXT_TOO_FEW_LOGS
    else:
        because = unknown_because or f"the features {key} is fitted on are not known for this launch"
    tp = max(inputs.layout.tp, 1)
    value = assumed_context_gib(tp)
    held_out = fits.get(ASSUMED_CONTEXT_ERROR_KEY)
    error = held_out.coefficients[0] if held_out is not None else ASSUMED_CONTEXT_ERROR_GIB
    assumed = assumed_estimate(
        Term.CONTEXT, label, round(value * GIB), round(error * GIB),
        f"{gib(value * GIB)} assumed at TP {tp} (0.75 GiB + 0.75 GiB per doubling of TP); {because}; ± {gib(error * GIB)}: "
        f"{CONTEXT_ERROR_WORDS}",
    )
    return assumed.model_copy(update={"assumed_because": because})


def assumed_context_gib(tp: int) -> float:
    """The context assumed at a TP group of `tp` GPUs: 0.75 GiB + 0.75 GiB per doubling (GiB)."""
    return ASSUMED_CONTEXT_GIB[0] + ASSUMED_CONTEXT_GIB[1] * math.log2(max(tp, 1))


def free_memory_terms(key: str, fits: dict[str, LinearTerm], inputs: CalibrationInputs) -> tuple[TermEstimate, ...]:
    """The terms of an engine that sizes from the memory free around the weights load (SGLang, LMDeploy):
    CUDA's total, the context taken before the weights load (fit `key`, else assumed), the weights."""
    from kvtop.domain.calibration.gpu_totals import cuda_total_estimate
    from kvtop.domain.calibration.weights import weights_estimate

    return (
        cuda_total_estimate(inputs.gpu_name, inputs.gpu_total_bytes, fits, wsl2=inputs.wsl2),
        context_estimate(key, CONTEXT_LABEL, fits, inputs, tp_features(inputs)),
        weights_estimate(inputs),
    )
