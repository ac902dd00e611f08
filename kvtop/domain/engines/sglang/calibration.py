"""SGLang's pre-load terms (docs/engines/sglang.md §4, docs/calibration.md).

SGLang sizes KV from the memory free before the weights load (`Load weight begin. avail mem`, the
least over ranks) and after them; its reserve is a rule of that figure, not a profile. What a plan
must estimate is therefore that free memory: CUDA's total less what the start took first. What it takes
first is, by SGLang's code, the CUDA context of the scheduler's process (`set_device`) and the TP group's
communicators (`init_torch_distributed`: NCCL, and the custom all-reduce's peer buffers where NVLink joins
the GPUs); the workspaces that differ by GPU (cuBLAS, FlashInfer's, the attention backend's, CUDA graphs)
come after the KV pool (model_runner.py `initialize`: load_model, then init_memory_pool, then init_cublas and
init_attention_backend; v0.4.10.post2:285-343, v0.5.3.post1:346-450, v0.5.15.post1:702-920). At TP 1 the
communicators take nothing ('Init torch distributed ends. mem usage=0.00 GB' at v0.5.6.post2, 0.09 GB on
a B200), so no term by GPU architecture: the B200's starts measure 0.69–0.78 GiB against CUDA's B200 total
as torch prints it (178.35 GiB, gpus.jsonl), the H100's 0.60–0.72; the part per doubling of TP grows where
NVLink joins the GPUs (1.5–2.6 GiB at TP 8 on H20/H100/H200, 3.0 at TP 4 on B200) and not across PCIe
(0.41–0.69 GiB at TP 2–4 on RTX 4090 and L4: the custom all-reduce is off). The context alone is a part per 100 SMs
of 2,048 threads, the GPU's resident threads (`sm_tp_features`, `features.context_threads`: an Ada, GA10x or consumer
Blackwell SM holds 1,536, a Turing SM 1,024), not a constant nor a part per SM: the TP 1 starts measure 0.29 GiB on the
RTX 5080 (84 SMs of 1,536), 0.36–0.51 on the L40S (142 of 1,536), 0.60–0.72 on H100/H200 (132 of 2,048), 0.69–0.78 on
B200 (148 of 2,048), and the L4's (58 of 1,536) TP 4 start 0.44 with 0.13 of NCCL; per SM the three L40S sources were
planned 0.75 GiB and the PCIe part fitted 0 (docs/engines/sglang.md §4). The context's error is that of the plan's
feature group where wider than the pool's (NVLink TP > 1 starts miss by up to 1.35 GiB held out; `error_for`).
The weights come from kvtop's book.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.defaults import FEWER_ROWS_FEATURES as FEWER_ROWS_FEATURES
from kvtop.domain.calibration.defaults import IMPLIED_FITS as IMPLIED_FITS
from kvtop.domain.calibration.defaults import READS_FREE_AFTER_LOAD as READS_FREE_AFTER_LOAD
from kvtop.domain.calibration.defaults import SPAN_FITS as SPAN_FITS
from kvtop.domain.calibration.defaults import fit_offset as fit_offset
from kvtop.domain.calibration.defaults import weights_built_ahead as weights_built_ahead
from kvtop.domain.calibration.extrapolation import Extrapolation
from kvtop.domain.calibration.features import (
    CONTEXT_LABEL,
    SM_FEATURE,
    context_estimate,
    sm_count_unknown,
    sm_tp_features,
)
from kvtop.domain.calibration.gpu_totals import cuda_total_estimate
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.plan_fits import committed_fits
from kvtop.domain.calibration.read_back import logged_terms as logged_terms  # its log prints its terms
from kvtop.domain.calibration.start_facts import StartMeasures
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.calibration.weights import weights_estimate
from kvtop.domain.engines.sglang.span import span
from kvtop.domain.engines.sglang.weights_held import held_beside

CONTEXT_FEATURES = (SM_FEATURE, "log2(TP) on NVLink GPUs", "log2(TP) on PCIe GPUs")
FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {"sglang.context": (Term.CONTEXT, CONTEXT_FEATURES)}

# what a start's log measures of the terms, read by the calibration store (calibration/node.py)
START_MEASURES = StartMeasures(weights_from_free_drop=True, source=(
    "sglang/srt/model_executor/model_runner.py load_model (v0.3–v0.5.23): 'mem usage' is avail mem before − after the load; its reserve is the fraction's rest, not a profiled charge"
))

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
    'sglang.context': LinearTerm(
        key='sglang.context', features=('100 SMs of 2,048 threads', 'log2(TP) on NVLink GPUs', 'log2(TP) on PCIe GPUs'),
        coefficients=(0.569292, 0.471425, 0.05953), error_bytes=480879581, records=99,
        sources=50, gpus=('A100-40GB', 'A100-80GB', 'A800', 'B200', 'B300', 'GB300', 'H100', 'H100-PCIE', 'H20', 'H200', 'L4', 'L40S', 'RTX4090', 'RTX5080', 'RTX5090', 'RTXPRO6000', 'T4'),
        novel_error_bytes=522544496, feature_sources=(50, 12, 4),
        group_errors=(('100 SMs of 2,048 threads', 329246048), ('100 SMs of 2,048 threads + log2(TP) on NVLink GPUs', 590071594), ('100 SMs of 2,048 threads + log2(TP) on PCIe GPUs', 282897487)),
    ),
}  # fmt: skip
INTERVAL_SCALE: IntervalScale | None = IntervalScale(
    engine='sglang', factor=1.0, records=176, sources=82,
)
EXTRAPOLATION: Extrapolation | None = Extrapolation(
    engine='sglang', gpus=('A100-40GB', 'A100-80GB', 'A40', 'A800', 'B200', 'B300', 'GB10', 'GB300', 'GH200', 'H100', 'H100-PCIE', 'H20', 'H200', 'H800', 'L20', 'L4', 'L40S', 'RTX3060', 'RTX3090', 'RTX4060-TI-16GB', 'RTX4090', 'RTX5080', 'RTX5090', 'RTXA6000', 'RTXPRO6000', 'T4'), band_depth=3, newest_band=(0, 5, 21), classes=('MLA with MoE', 'MoE', 'dense', 'state-space hybrid', 'vision-language', 'vision-language with MoE'), gpu_fraction=0.0, version_fraction=0.0, class_fraction=0.0, records=524, sources=82,
)  # fmt: skip
# END FITTED


def context_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """(resident threads ÷ 204,800, log2 TP on NVLink GPUs, log2 TP on PCIe GPUs): `sm_tp_features`, the CUDA context
    (by the threads the GPU holds resident: a stack each) and the TP group's communicators; None for a GPU of unknown
    SM count or compute capability (the context is then assumed). A TP
    group over several nodes (`--nnodes`) counts its NVLink doublings within one node: NVLink joins a node's GPUs,
    and SGLang does not build the custom all-reduce (its peer buffers) for a group that spans nodes
    (distributed/device_communicators/custom_all_reduce.py:83-87 at 0.5.8, "Custom allreduce is disabled because
    this process group spans across nodes"; 0.4.10.post1:96-100; at 0.5.15.post1:356 "custom AR is intra-node
    only")."""
    features = sm_tp_features(inputs)
    nodes = tp_group_nodes(inputs)
    if features is None or nodes <= 1 or not features[1]:
        return features
    return (features[0], math.log2(max(inputs.layout.tp // nodes, 1)), features[2])


def tp_group_nodes(inputs: CalibrationInputs) -> int:
    """The nodes one TP group spans: SGLang gives each pipeline stage its own nodes, `nnodes_per_tp_group =
    max(nnodes // pp_size, 1)`, `tp_size_per_node = tp_size // nnodes_per_tp_group` (srt/entrypoints/engine.py
    `_launch_subprocesses`, 0.4.x-0.5.x): TP 8 PP 2 over 2 nodes of 8 keeps each TP group on one node (it had been
    counted as 4 GPUs a node, 0.42 GiB less context and NCCL than `plan --nodes 2 --gpus-per-node 8`)."""
    return max(span(inputs.settings).nnodes // max(inputs.layout.pp, 1), 1)


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    return context_features(inputs) if key == "sglang.context" else None


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the context before the weights load, the weights."""
    fits = committed_fits(FITS) if fits is None else fits
    return (
        cuda_total_estimate(inputs.gpu_name, inputs.gpu_total_bytes, fits, wsl2=inputs.wsl2),
        context(inputs, fits),
        weights_estimate(inputs, extra=held_beside(inputs)),  # the rope cache the load measures (weights_held.py)
    )


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    """The memory a start takes before the weights load (its term among `terms`)."""
    fits = committed_fits(FITS) if fits is None else fits
    features = context_features(inputs)
    return context_estimate(
        "sglang.context", CONTEXT_LABEL, fits, inputs, features, by_group=True,
        unknown_because=sm_count_unknown("sglang.context", inputs), counted=_counted_over_nodes(inputs, features),
    )  # fmt: skip


def _counted_over_nodes(inputs: CalibrationInputs, features: tuple[float, ...] | None) -> str | None:
    """What the fit counts of a TP group over several nodes (`context_features`): the NVLink doublings of one node's
    GPUs, said as such (not "TP 16", which the count is not); None for a group on one node."""
    nodes = tp_group_nodes(inputs)
    if nodes <= 1:
        return None
    tp = inputs.layout.tp
    if features is None or not features[1]:
        return f"TP {tp} over {nodes} nodes"
    return (f"TP {tp} over {nodes} nodes, counted as {max(tp // nodes, 1)} GPUs a node on NVLink ({features[1]:g} "
            "doublings: no custom all-reduce across nodes)")
