"""vLLM's pre-load memory terms, by what its profiling run executes (docs/engines/vllm.md §2, docs/calibration.md).

    available KV = ceil(CUDA total × util) − weights − non-torch − activation peak − CUDA graphs (v0.20+)

This module holds the fits' table (what each fit's coefficients multiply, the committed FITS that
`benchmarks/calibration/run.py --write` rewrites), the feature values each fit reads from a launch, and `terms`, which
gathers the estimates. Each term's rule is its own module: the activation peak `calibration_activation.py`, non-torch
memory and the context `calibration_non_torch.py`, the eras that pick a fit `calibration_eras.py`.
- CUDA graphs: charged to the budget from v0.20.0 (`profile_cudagraph_memory`, PR #38284); before,
  graphs were captured after the KV cache, from the share left above `--gpu-memory-utilization`. The
  estimate (printed from v0.18.0, "Estimated CUDA graph memory") captures each mode's two largest sizes
  and extrapolates: max over modes of the first capture + Σ second capture × (sizes − 1). A capture's
  memory grows with the graph's nodes, so with the layers on the rank, the first capture's as each later one's:
  the fit is a part per graph the estimate counts (the first capture and each mode's sizes beyond its first) ×
  layers (`profile_run.graph_counts`), no constant (`GRAPH_FEATURES`). The V2 runner's estimate (v0.29.0 on)
  measures every PIECEWISE graph and extrapolates FULL alone: its graphs beyond the first are the FULL ones
  (`v2_graphs.v2_graph_extras`).
"""

from __future__ import annotations

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.defaults import weights_built_ahead as weights_built_ahead
from kvtop.domain.calibration.extrapolation import Extrapolation
from kvtop.domain.calibration.features import SM_FEATURE, assumed_estimate, fitted_estimate
from kvtop.domain.calibration.gpu_totals import cuda_total_estimate
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.plan_fits import committed_fits
from kvtop.domain.calibration.start_facts import StartMeasures
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.calibration.weights import weights_estimate
from kvtop.domain.engines.versions import era_for
from kvtop.domain.engines.vllm.calibration_activation import activation_estimate
from kvtop.domain.engines.vllm.calibration_activation import fit_features as activation_fit_features
from kvtop.domain.engines.vllm.calibration_eras import (
    ACTIVATION_ERAS,
    CONTEXT_INSIDE,
    INIT_APART,
    NON_TORCH_ERAS,
    NOT_FITTED,
    THREADS_SCALED,
    activation_key,
    non_torch_key,
)
from kvtop.domain.engines.vllm.calibration_eras import (
    IMPLIED_FITS as IMPLIED_FITS,
)
from kvtop.domain.engines.vllm.calibration_non_torch import (
    context_features,
    context_term,
    non_torch_estimate,
    non_torch_features,
)
from kvtop.domain.engines.vllm.calibration_snapshot import nccl_inside_non_torch, startup_free_is_context
from kvtop.domain.engines.vllm.compilation import graph_config
from kvtop.domain.engines.vllm.dflash import shared_error
from kvtop.domain.engines.vllm.eagle3_head import unsized_error
from kvtop.domain.engines.vllm.extensible_kv import extensible
from kvtop.domain.engines.vllm.fusion_workspace import fusion_workspace
from kvtop.domain.engines.vllm.hybrid_graph_sample import (
    SAMPLE_FEATURES,
    SAMPLE_KEY,
    full_sample_words,
    sample_row_features,
    with_hybrid_sample,
)
from kvtop.domain.engines.vllm.hybrid_graph_sample import (
    SPAN_FITS as SPAN_FITS,
)
from kvtop.domain.engines.vllm.moe_workspace import fused_moe_workspace
from kvtop.domain.engines.vllm.mxfp4_weights import backend_weights
from kvtop.domain.engines.vllm.nvls_buffers import nvls_buffers
from kvtop.domain.engines.vllm.pp_split import PP_SPLIT_ERAS
from kvtop.domain.engines.vllm.profile_run import (
    GRAPHS_PROFILED,
    batch_limits,
    engine_era,
    graph_counts,
    graphs_charged,
    with_pinned_segments,
)
from kvtop.domain.engines.vllm.spec_graph_mode import spec_mode_words
from kvtop.domain.engines.vllm.startup_split import logged_terms as logged_terms  # v0.27+'s split, read back
from kvtop.domain.engines.vllm.v0_charge import profile_charge
from kvtop.domain.engines.vllm.v2_graphs import (
    stand_in,
    v1_graph_extras,
    v2_graph_extras,
    v2_graphs_not_modelled,
    v2_measures_graphs,
    v2_placeholder,
    with_v2_beside,
)
from kvtop.domain.engines.vllm.v2_sampler_state import v2_sampler_state
from kvtop.domain.engines.vllm.weights_held import allocator_rounding, held_beside
from kvtop.domain.layout import largest_stage_layers
from kvtop.domain.wording import GIB

# §2.4: the pool is ceil(total × gpu_memory_utilization) less the weights and what the profile finds, never the free
# memory after the load (gpu_worker.py determine_available_memory, v0.8.0–v0.33.0): --free-after-load measures
# no term of vLLM's, so the weights stay the calibrated book (the estimate reads this, `preload_estimate`)
READS_FREE_AFTER_LOAD = False
# V1 splits the forward's transient into a dense MLP's and a fused MoE's (its expert caches are not the
# dense MLP's gate-up output); V0's corpus holds no MoE start to fit a separate part on.
# No constant: the V1 profile's peak is the larger of its forward and its sampler, each of which scales with the batch,
# and the dummy run's hidden states (max_num_batched_tokens × hidden in the model dtype) stay held while the sampler
# runs (gpu_model_runner.py profile_run: `hidden_states, last_hidden_states = self._dummy_run(...)`, then
# `_dummy_sampler_run(last_hidden_states)`, `del hidden_states, output` after; v0.20.0:5848-5859). A constant fitted on
# H100 starts of 8B-70B models at 8,192 tokens and 1,024 seqs (0.39 GiB at v0.17+) charged a 0.5B model at 4 seqs
# 0.39 GiB its profile never held (the RTX 5060 Ti records: 0.19-0.31 GiB beside weights and KV for this term and
# non-torch memory together).
ACTIVATION_FEATURES = ("hidden states of max_num_batched_tokens", "max_num_seqs × vocab × 4 B",
                       "dense MLP transient of max_num_batched_tokens", "MoE transient of max_num_batched_tokens")
# V0's profile peak is the larger of its forward and its sampler (`v0_profile.py`): the fit is the sampler's, on the
# starts whose forward the code's count puts below it; a forward-bound start's peak is the forward as counted.
V0_ACTIVATION_FEATURES = ("1 GiB", "max_num_seqs × vocab × 4 B")
# the TP group's all-reduce buffers appear once the custom all-reduce runs (custom_all_reduce_on)
NON_TORCH_FEATURES = ("1 GiB", "1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)")
# v0.3.1–v0.6.3's charge grows with the GPU's resident threads (`calibration_eras.THREADS_SCALED`)
THREADS_NON_TORCH_FEATURES = (SM_FEATURE, NON_TORCH_FEATURES[1])
# What a worker holds before its weights (`worker init memory snapshot`): the CUDA context, NCCL's
# communicators once there are several ranks, and an MoE model's all-to-all buffers across TP ranks.
# vLLM's budget does not read it (it takes a share of the total); a restart needs it free.
CONTEXT_FEATURES = ("1 GiB", "1 GiB when TP × PP > 1", "1 GiB for an MoE model when TP > 1")
# CUDA graphs: the graphs vLLM's estimate counts, the first capture and each mode's sizes beyond its first (`profile_
# cudagraph_memory`, v1/worker/gpu_model_runner.py:6447-6596 at v0.24.0, the same arithmetic v0.18.0-v0.30.0), each
# graph's memory growing with its nodes, per layer on the rank. No constant (session 54): the one fitted beside the
# per-graph part (0.11 GiB) rested on the H100 sweeps and charged the small models of consumer cards what they never
# held (Qwen2.5-0.5B on an RTX 4090 printed 0.28 GiB, Qwen2.5-1.5B on a T4 0.42, where the constant and the part read
# 0.55 and 0.63); with the first capture counted as one more graph the held-out error fell from 1.19 to 1.13 GiB.
GRAPH_FEATURES = ("graphs the estimate counts (the first capture and each mode's further sizes) × layers on the "
                  "rank ÷ 1000",)  # fmt: skip
# the fits this engine makes: key → (the term it estimates, what its coefficients multiply)
FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {
    **{f"vllm.activation.{era.value}": (Term.ACTIVATION, V0_ACTIVATION_FEATURES if era.value == "v0" else ACTIVATION_FEATURES)
       for era in ACTIVATION_ERAS},
    # an era whose figure holds the worker's CUDA context (`CONTEXT_INSIDE`: v0.6.4's device-wide form) is not fitted
    # as a constant: the context grows with the GPU's SMs (0.15 GiB printed on a T4's 40, 0.39 on a V100's 80), so it
    # is planned as its stand-in's growth plus one process's context by SM count (`calibration_non_torch._context_inside`)
    **{key: (Term.NON_TORCH, THREADS_NON_TORCH_FEATURES if key in THREADS_SCALED else NON_TORCH_FEATURES)
       for era in NON_TORCH_ERAS if (key := f"vllm.non_torch.{era.value}") not in CONTEXT_INSIDE | NOT_FITTED},
    "vllm.cuda_graphs": (Term.CUDA_GRAPHS, GRAPH_FEATURES),
    "vllm.context": (Term.CONTEXT, CONTEXT_FEATURES),
    # after the graphs' fit: its rows are what the capacity leaves once the others are taken (implied.py)
    SAMPLE_KEY: (Term.CUDA_GRAPHS, SAMPLE_FEATURES),
}
# An era whose logs are too few to fit every feature (rows_needed: one per feature and two more, from two sources) is
# fitted on the sampler's logits alone: the profiles the corpus holds are sampler-bound (their MLP coefficients are
# near 0, and `_forward_floor` keeps the forward's transient), so the logits carry the peak (V1 at v0.10.2-v0.16.0:
# 9.7 × seqs × vocab × 4 B on H100 and L40S alike, llm-d-planner's sweep and search-index id 38962983769).
FEWER_ROWS_FEATURES: dict[str, tuple[int, ...]] = {
    f"vllm.activation.{era.value}": (1,) for era in ACTIVATION_ERAS  # index of "max_num_seqs × vocab × 4 B"
}

# what a start's log measures of the terms, read by the calibration store (calibration/node.py)
START_MEASURES = StartMeasures(runtime_charge=True, source=(
    "vllm/v1/worker/gpu_worker.py determine_available_memory (v0.8.0–v0.33.0) and vllm/worker/worker.py (V0): the KV memory is requested − weights − the profiled non-KV charge, all logged"
))

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
    'vllm.activation.v0': LinearTerm(
        key='vllm.activation.v0', features=('1 GiB', 'max_num_seqs × vocab × 4 B'),
        coefficients=(0.004243, 9.580714), error_bytes=107038029, records=20,
        sources=17, gpus=('A100-80GB', 'GTX1080', 'H100', 'L4', 'L40S', 'RTX2080-TI', 'RTX4060', 'T4', 'V100-32GB'),
        novel_error_bytes=107038029, feature_sources=(17, 17),
        group_errors=(('1 GiB + max_num_seqs × vocab × 4 B', 107038029),),
    ),
    'vllm.activation.v1': LinearTerm(
        key='vllm.activation.v1', features=('hidden states of max_num_batched_tokens', 'max_num_seqs × vocab × 4 B', 'dense MLP transient of max_num_batched_tokens', 'MoE transient of max_num_batched_tokens'),
        coefficients=(1.374075, 9.54128, 0.007425, 0.007985), error_bytes=21125963, records=30,
        sources=12, gpus=('A100-40GB', 'A100-80GB', 'H100', 'H100-NVL', 'H200', 'L40S', 'RTX4090', 'T4'),
        novel_error_bytes=34897030, feature_sources=(12, 12, 9, 5),
        group_errors=(('hidden states of max_num_batched_tokens + max_num_seqs × vocab × 4 B + MoE transient of max_num_batched_tokens', 21125963), ('hidden states of max_num_batched_tokens + max_num_seqs × vocab × 4 B + dense MLP transient of max_num_batched_tokens', 35402624)),
    ),
    'vllm.activation.v17': LinearTerm(
        key='vllm.activation.v17', features=('hidden states of max_num_batched_tokens', 'max_num_seqs × vocab × 4 B', 'dense MLP transient of max_num_batched_tokens', 'MoE transient of max_num_batched_tokens'),
        coefficients=(3.078443, 2.924282, 0.318669, 0.976489), error_bytes=1889920950, records=31,
        sources=9, gpus=('A100-40GB', 'H100', 'H100-PCIE', 'H200', 'RTX3090', 'RTX5060-TI'),
        novel_error_bytes=1889920950, feature_sources=(9, 9, 8, 2),
        group_errors=(('hidden states of max_num_batched_tokens + max_num_seqs × vocab × 4 B + dense MLP transient of max_num_batched_tokens', 1467630784),),
    ),
    'vllm.context': LinearTerm(
        key='vllm.context', features=('1 GiB', '1 GiB when TP × PP > 1', '1 GiB for an MoE model when TP > 1'),
        coefficients=(0.551272, 0.849839, 0.361389), error_bytes=1148903752, records=81,
        sources=18, gpus=('A100-40GB', 'A100-80GB', 'H100', 'H100-NVL', 'H100-PCIE', 'L4', 'L40S', 'RTX3090', 'RTX4090', 'RTX5060-TI', 'RTX5090', 'RTXPRO6000'),
        novel_error_bytes=1148903752, feature_sources=(18, 4, 2),
        group_errors=(('1 GiB', 597986118), ('1 GiB + 1 GiB when TP × PP > 1', 677799526)),
    ),
    'vllm.cuda_graphs': LinearTerm(
        key='vllm.cuda_graphs', features=("graphs the estimate counts (the first capture and each mode's further sizes) × layers on the rank ÷ 1000",),
        coefficients=(0.241427,), error_bytes=1038489157, records=122,
        sources=38, gpus=('A100-40GB', 'A100-80GB', 'A40', 'GB10', 'GB300', 'H100', 'H100-NVL', 'H100-PCIE', 'H200', 'L40S', 'RTX3090', 'RTX4090', 'RTX5060-TI', 'RTX5090-LAPTOP', 'RTXA6000', 'RTXPRO6000', 'T4'),
        novel_error_bytes=1038489157, feature_sources=(38,),
        group_errors=(("graphs the estimate counts (the first capture and each mode's further sizes) × layers on the rank ÷ 1000", 1038489157),),
    ),
    'vllm.hybrid_sample': LinearTerm(
        key='vllm.hybrid_sample', features=('1 GiB on a hybrid with prefix caching and captured graphs (v0.24.0 – v0.27.x, V1 runner)',),
        coefficients=(1.753456,), error_bytes=1688135199, records=10,
        sources=6, gpus=('H100-PCIE', 'L40S', 'RTX5090', 'RTXPRO6000'),
        novel_error_bytes=1688135199, feature_sources=(6,),
        group_errors=(('1 GiB on a hybrid with prefix caching and captured graphs (v0.24.0 – v0.27.x, V1 runner)', 1688135199),),
        span_bytes=(-1688135199, 649470861),
    ),
    'vllm.non_torch.v0': LinearTerm(
        key='vllm.non_torch.v0', features=('1 GiB', '1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)'),
        coefficients=(0.110345, 1.989655), error_bytes=99704598, records=31,
        sources=31, gpus=('A10', 'A100-40GB', 'A100-80GB', 'H100', 'H100-NVL', 'L4', 'L40', 'L40S', 'RTX2060', 'RTX2080-TI', 'RTX3090', 'RTX4060', 'RTX4090', 'T4', 'V100-32GB'),
        novel_error_bytes=155309085, feature_sources=(31, 2),
        group_errors=(('1 GiB', 99704598),),
    ),
    'vllm.non_torch.v06': LinearTerm(
        key='vllm.non_torch.v06', features=('100 SMs of 2,048 threads', '1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)'),
        coefficients=(0.501218, 0.0), error_bytes=572582639, records=7,
        sources=7, gpus=('A100-40GB', 'A100-80GB', 'H100', 'L4', 'RTX3090', 'T4'),
        novel_error_bytes=572582639, feature_sources=(7, 0),
        group_errors=(('100 SMs of 2,048 threads', 572582639),),
    ),
    'vllm.non_torch.v1': LinearTerm(
        key='vllm.non_torch.v1', features=('1 GiB', '1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)'),
        coefficients=(0.06186, 0.48314), error_bytes=75712565, records=45,
        sources=17, gpus=('A100-40GB', 'A100-80GB', 'A30', 'H100', 'H100-NVL', 'L4', 'L40S', 'RTX4090', 'T4'),
        novel_error_bytes=75712565, feature_sources=(17, 1), unseen_error_bytes=534045276,
        group_errors=(('1 GiB', 85899346),),
    ),
    'vllm.non_torch.v18': LinearTerm(
        key='vllm.non_torch.v18', features=('1 GiB', '1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)'),
        coefficients=(0.259786, 0.359623), error_bytes=584896289, records=62,
        sources=10, gpus=('A100-40GB', 'A100-80GB', 'GB200', 'H100', 'H100-PCIE', 'RTX3090', 'RTX5060-TI', 'RTXPRO6000'),
        novel_error_bytes=584896289, feature_sources=(10, 2),
        group_errors=(('1 GiB', 588601244),),
    ),
}  # fmt: skip
INTERVAL_SCALE: IntervalScale | None = IntervalScale(
    engine='vllm', factor=1.0, records=720, sources=349,
)
EXTRAPOLATION: Extrapolation | None = Extrapolation(
    engine='vllm', gpus=('A10', 'A100-40GB', 'A100-80GB', 'A10G', 'A30', 'A40', 'A800', 'B200', 'GB10', 'GB200', 'GB300', 'GH200', 'GTX1080', 'GTX1650', 'GTX1660-SUPER', 'H100', 'H100-NVL', 'H100-PCIE', 'H20', 'H20-3E', 'H200', 'JETSON-AGX-THOR', 'L20', 'L4', 'L40', 'L40S', 'RTX2000-ADA', 'RTX2060', 'RTX2080-TI', 'RTX3050-6GB', 'RTX3050-LAPTOP', 'RTX3060', 'RTX3060-LAPTOP', 'RTX3060-TI', 'RTX3090', 'RTX4060', 'RTX4070-LAPTOP', 'RTX4070-TI-SUPER', 'RTX4080-LAPTOP', 'RTX4090', 'RTX4090-D', 'RTX5060-TI', 'RTX5070-TI', 'RTX5080', 'RTX5090', 'RTX5090-LAPTOP', 'RTX6000-ADA', 'RTX6000D', 'RTXA4000', 'RTXA5000', 'RTXA6000', 'RTXPRO4000', 'RTXPRO6000', 'T4', 'TITAN-RTX', 'V100', 'V100-32GB'), band_depth=2, newest_band=(0, 33), classes=('MLA with MoE', 'MoE', 'dense', 'state-space hybrid', 'vision-language', 'vision-language with MoE'), gpu_fraction=0.0, version_fraction=0.0, class_fraction=0.0, records=2150, sources=349,
)  # fmt: skip
# END FITTED


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """Feature values (GiB) of fit `key` for this launch; None where it does not apply (another era; a
    multimodal model, whose encoder profile is not modelled; pipeline stages, whose peaks differ)."""
    if key == activation_key(inputs):
        return activation_fit_features(key, inputs)  # a forward-bound log measures no sampler (calibration_activation)
    if key == non_torch_key(inputs):
        if profile_charge(inputs.version, engine_era(inputs)).value != "baseline":
            return None  # before v0.3.1 and in V1's v0.8.0–v0.9.0 the profile charges more than the growth (`v0_charge.py`)
        if key in INIT_APART and nccl_inside_non_torch(inputs):
            return None  # its figure holds the TP group's init, which the fit leaves to the context's part
        return non_torch_features(inputs)
    if key == "vllm.cuda_graphs":
        return _graph_features(inputs)
    if key == SAMPLE_KEY:
        return sample_row_features(inputs)  # a unified-memory host's start gives no row (hybrid_graph_sample.py)
    if key == "vllm.context":
        # a log whose startup snapshot precedes NCCL's init printed the free memory before NCCL, not before the weights
        return context_features(inputs) if startup_free_is_context(inputs) else None
    return None


def fit_offset(key: str, inputs: CalibrationInputs) -> int:
    """Bytes of what fit `key` measures that the code sizes, taken off the logged figure before fitting and added to
    the fit's estimate: FlashInfer's all-reduce fusion workspace (`fusion_workspace.py`) and NCCL's NVLS buffers
    (`nvls_buffers.py`) in non-torch memory, the V2 sampler's state the budget charges from v0.27.0
    (`v2_sampler_state.py`) in non-torch memory, and the fused MoE's workspace (`moe_workspace.py`) in the activation
    peak."""
    if key == activation_key(inputs):
        return fused_moe_workspace(inputs).bytes
    if key != non_torch_key(inputs):
        return 0
    tokens = batch_limits(inputs)[0]
    workspace, nvls, state = fusion_workspace(inputs, tokens), nvls_buffers(inputs, tokens), v2_sampler_state(inputs)
    return ((workspace.bytes if workspace is not None else 0) + (nvls.bytes if nvls is not None else 0)
            + (state[0] if state is not None else 0))  # fmt: skip


def _committed() -> dict[str, LinearTerm]:
    """The committed fits a product plan reads (`plan_fits.committed_fits`): the engine-neutral ones, among them one
    process's CUDA context (v0.6.4's non-torch memory holds it: `calibration_non_torch._context_inside`), and vLLM's
    own."""
    return committed_fits(FITS)


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    """What a worker holds before its weights load (not a term of vLLM's budget: a restart needs it free)."""
    return context_term(inputs, _committed() if fits is None else fits)


def _graph_features(inputs: CalibrationInputs, *, v1_runner: bool = False) -> tuple[float, ...] | None:
    """(graphs the estimate counts × layers on the rank ÷ 1000,): its first capture (one: vLLM takes the larger of the
    modes' first captures) and the graphs it extrapolates beyond them, both modes' under the V1 runner, FULL's alone
    under V2 from v0.29.0 (`v2_graphs.v2_graph_extras`; `v1_runner`: the V1 runner's count whatever runs); None before
    v0.18.0, eager, or no model."""
    if not era_for(GRAPHS_PROFILED, inputs.version).value or inputs.settings.enforce_eager or inputs.model is None:
        return None
    piecewise, full = graph_counts(inputs)
    if not piecewise and not full:
        return None  # cudagraph_mode NONE (compilation.py): nothing captured
    extra = v1_graph_extras(piecewise, full) if v1_runner else v2_graph_extras(inputs, piecewise, full)
    layers = largest_stage_layers(inputs.model.num_layers, inputs.layout.pp, PP_SPLIT_ERAS.at(inputs.version))
    return ((extra + 1) * layers / 1000,)


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the weights, non-torch memory, the activation peak and (v0.20+) CUDA graphs; under v0.34.0's
    extensible KV cache the context too (the cache takes the free memory at the worker's start: extensible_kv.py)."""
    fits = _committed() if fits is None else fits
    tokens = batch_limits(inputs)[0]
    activation = activation_estimate(inputs, fits)
    total = cuda_total_estimate(inputs.gpu_name, inputs.gpu_total_bytes, fits, wsl2=inputs.wsl2)
    found = [total, _weights(inputs), activation, non_torch_estimate(inputs, fits, tokens)]
    if graphs_charged(inputs):
        placeholder = v2_placeholder(inputs)
        label = "vLLM's CUDA-graph estimate" if placeholder is None else "vLLM V2's memory beside its profile"
        piecewise, full = graph_counts(inputs)
        stated = graph_config(inputs.settings.flags, inputs.version).said
        sizes = f"the launch's {stated}" if stated else "vLLM's default sizes"
        sample = full_sample_words(inputs, fits)  # the first FULL capture's context (hybrid_graph_sample.py)
        lowered = spec_mode_words(inputs)  # the mode under speculative decoding (spec_graph_mode.py)
        basis = placeholder or (f"charged since v0.20.0: {piecewise} PIECEWISE + {full} FULL graphs ({sizes})"
                                + (f"; {lowered}" if lowered else "") + (f"; {sample}" if sample else ""))  # fmt: skip
        unmodelled = v2_graphs_not_modelled(inputs)  # V2's drafter, LoRA and v0.34 decode-shape graphs
        basis = f"{basis}; {unmodelled}" if unmodelled else basis
        read_at, grid = stand_in(inputs) if placeholder is not None else (inputs, "")  # V2's 256-seq stand-in
        graphs = fitted_estimate(Term.CUDA_GRAPHS, label, fits.get("vllm.cuda_graphs"),
                                 fit_features("vllm.cuda_graphs", read_at), f"{basis}; {grid}" if grid else basis)  # fmt: skip
        # the V1 runner's figure for what V2's profile holds beside (v0.29.0 on), read at the stand-in's grid as
        # before v0.29.0: it does not grow with max_num_seqs (v2_graphs.py, "Not scaled with max_num_seqs")
        beside_at, beside_grid = stand_in(inputs) if v2_measures_graphs(inputs) else (inputs, "")
        figure = fitted_estimate(Term.CUDA_GRAPHS, label, fits.get("vllm.cuda_graphs"),
                                 _graph_features(beside_at, v1_runner=True), basis)  # fmt: skip
        estimate = with_pinned_segments(with_v2_beside(graphs or assumed_estimate(
            Term.CUDA_GRAPHS, label, 2 * GIB, 5 * GIB // 2,
            "charged since v0.20.0; the model's layers are not known (0.36 GiB on a small TP 2 model, 4.99 GiB on "
            "GLM-5.2 TP 4): 2 GiB assumed"), inputs, figure, beside_grid), inputs.version)  # fmt: skip
        # a hybrid with prefix caching and captured graphs: its calibrated transient (hybrid_graph_sample.py)
        found.append(with_hybrid_sample(estimate, inputs, fits))
    if extensible(inputs.settings, inputs.version):  # v0.34.0: sized from the free memory at the worker's start
        found.append(context(inputs, fits))
    return tuple(found)


def _weights(inputs: CalibrationInputs) -> TermEstimate:
    """The weights term: the book and what the load holds beside it (`held`), with the error of an MXFP4 backend
    the plan assumed beside the fitted one (mxfp4_weights.py; root of squares, kept for `with_fitted_error`)."""
    estimate = weights_estimate(inputs, extra=held(inputs))
    # an EAGLE-3 head of unknown config, a DFlash drafter's embedding and head: assumed in the budget, sized in the interval
    draft = unsized_error(inputs) or shared_error(inputs)
    estimate = estimate.plus(error_bytes=draft[0], why=draft[1], beside=True) if draft else estimate
    backend = backend_weights(inputs)
    if backend is None or not backend[1] or estimate.source != "calibrated":
        return estimate
    return estimate.plus(error_bytes=backend[1], why=None if backend[2] in estimate.basis else backend[2], beside=True)


def held(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """What vLLM's load holds beside the book: the loader's own tensors (rope cache, MXFP4 copies), the caching
    allocator's rounding of the weights (`weights_held.py`) and a stated Marlin backend's layout (mxfp4_weights.py)."""
    backend = backend_weights(inputs)
    marlin = (backend[0], backend[2]) if backend is not None and backend[0] else None
    parts = [part for part in (held_beside(inputs), allocator_rounding(inputs), marlin) if part is not None]
    if not parts:
        return None
    return sum(size for size, _ in parts), "; ".join(why for _, why in parts)
