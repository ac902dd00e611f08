"""vLLM's pre-load memory terms, by what its profiling run executes (docs/engines/vllm.md §2, docs/calibration.md).

    available KV = ceil(CUDA total × util) − weights − non-torch − activation peak − CUDA graphs (v0.21+)

- activation peak (`torch_peak_increase`): `profile_run` runs the model on `max_num_batched_tokens`
  tokens, then the sampler on `max_num_seqs` requests. The forward's largest transient is the MLP's
  (gate-up output, its activation, the expert caches of a fused MoE: tokens × experts per token ×
  (3 × intermediate ÷ TP + hidden) × 2 B); the sampler's is its float32 logits and the copies
  softmax, top-k/top-p and log-probs make of them (seqs × vocab × 4 B). The fit weighs both, per era
  (V0 before 0.8.0, V1 after: V1's sampler keeps several more copies of the logits); V0's is the larger side by the
  code's counts, its fit the sampler's on sampler-bound logs (`v0_profile.py`). The peak is never less
  than the forward's MLP transient (`_forward_floor`), and its interval spans FlashInfer's sampler where the
  install decides the path, and is centred on FlashInfer's where the release and the GPU take it
  (`sampler_path.py`, `_sampler_path_error`).
- non-torch memory (`non_torch_increase`): grows while profiling with the TP group's custom all-reduce
  buffers: a constant, plus a part once the custom all-reduce runs (TP > 1 on NVLink GPUs, unless
  disabled: vLLM's custom_all_reduce.py turns it off on more than two GPUs joined only by PCIe, and on two
  where the P2P test fails, as on GeForce cards; `custom_all_reduce_on`). From v0.18.0 FlashInfer's all-reduce
  fusion workspace joins it at TP > 1 on Hopper: its bytes come from the code (`fusion_workspace.py`, 1.5 GiB per
  rank before v0.22.0, 2 MiB-rounded buffers from it), the fit takes the rest (`fit_offset`), and an era the corpus holds too few logs of for its own
  fit takes the previous era's (`NON_TORCH_STAND_IN`: the same growth without the workspace). Before V1 at TP 8 on
  H100/H200 it also holds NCCL's NVLS buffers of two communicators (`nvls_buffers.py`: 2 x 2.5 GiB with NCCL 2.20,
  2 x 1.5 GiB with 2.21), taken off the logged figure before fitting the same way. Before v0.11.0 the worker
  snapshots before the TP group's NCCL init, which the growth then holds: V1's fit leaves such starts out, and a
  plan adds the context fit's part beyond one rank (`calibration_snapshot.py`).
- CUDA graphs: charged to the budget from v0.21.0 (`profile_cudagraph_memory`, PR #38284); before,
  graphs were captured after the KV cache, from the share left above `--gpu-memory-utilization`. The
  estimate (printed from v0.18.0, "Estimated CUDA graph memory") captures each mode's two largest sizes
  and extrapolates: max over modes of the first capture + Σ second capture × (sizes − 1). A capture's
  memory grows with the graph's nodes, so with the layers on the rank: the fit is a constant (the first
  capture) plus a part per captured graph beyond the first × layers (`profile_run.graph_counts`).
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.features import (
    CONTEXT_LABEL,
    assumed_estimate,
    context_estimate,
    fitted_estimate,
    logits_gib,
    mlp_transient_gib,
)
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.calibration.weights import weights_estimate
from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.engines.vllm.calibration_snapshot import (
    init_inside,
    nccl_inside_non_torch,
    startup_free_is_context,
)
from kvtop.domain.engines.vllm.fusion_workspace import fusion_workspace
from kvtop.domain.engines.vllm.nvls_buffers import nvls_buffers
from kvtop.domain.engines.vllm.profile_run import (
    GRAPHS_PROFILED,
    batch_limits,
    graph_counts,
    graphs_charged,
    lora,
)
from kvtop.domain.engines.vllm.sampler_path import sampler_path
from kvtop.domain.engines.vllm.sampler_peak import counted_sampler_bytes, logits_copies
from kvtop.domain.engines.vllm.v0_profile import (
    MOE_FORWARD_ERROR,
    v0_forward_bound,
    v0_forward_bytes,
    v0_moe_forward,
)
from kvtop.domain.engines.vllm.v2_graphs import v2_placeholder
from kvtop.domain.engines.vllm.weights_held import allocator_rounding, held_beside
from kvtop.domain.gpus import NVLINK_GPUS, gpu_model_key
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB

# The profiled activation peak is mostly the sampler's copies of its float32 logits; their number fell
# in v0.17.0 (a 60 % lower peak at the same batch: llm-d-planner's version sweep, docs/calibration.md).
ACTIVATION_ERAS: Eras[str] = Eras((
    Era("", "v0", "V0: profile_run over max_num_batched_tokens, the sampler over max_num_seqs"),
    Era("0.8.0", "v1", "V1's _dummy_run and _dummy_sampler_run"),
    Era("0.17.0", "v17", "V1 from v0.17.0: the sampler's profile keeps fewer copies of its logits"),
))
# What `non_torch_memory` counts: at v0.6.4 (vllm#9352, until #10511) the whole device's used memory (every process on
# the GPU) less this process's torch-allocated bytes: the CUDA context, library handles, torch's pool left reserved (V0's
# FlashInfer workspace is a torch tensor, never in it); v0.4.x and v0.6.5-v0.6.6 against a baseline, the context
# outside (docs/engines/vllm.md, the non-torch bullet); from v0.7.0 its growth while profiling (PR #12126), in V1 before
# v0.11.0 with the TP group's NCCL and custom all-reduce init inside it (`calibration_snapshot.py`); from v0.18.0
# FlashInfer's all-reduce fusion workspace too (`fusion_workspace.py`: 1.5 GiB per rank at TP 2–8 on Hopper up to
# v0.21, each buffer at the 2 MiB allocation granularity from v0.22.0; counted apart from the fit).
NON_TORCH_ERAS: Eras[str] = Eras((
    Era("", "v06", "before v0.7: the device's used memory less this process's torch allocations (v0.6.4), or its "
                   "growth from a baseline (v0.4.x, v0.6.5-v0.6.6)"),
    Era("0.7.0", "v0", "PR #12126: the growth of non-torch memory while profiling"),
    Era("0.8.0", "v1", "V1's memory_profiling: the growth from the worker's init snapshot (before v0.11.0 with the "
                       "TP group's NCCL init inside, counted apart: calibration_snapshot.py)"),
    Era("0.18.0", "v18", "V1 from v0.18.0: the growth less FlashInfer's all-reduce fusion workspace"),
))
# The fit that stands in for an era's remainder where the corpus holds too few logs of the era to fit it: v0.18's
# growth less the workspace is V1's (NCCL's channels connected by the profile's first large all-reduces, CUDA's
# lazily loaded kernels): 0.55 GiB at TP 2 on H100 at v0.11.0, 0.57 at v0.19.0 once the workspace is taken off.
NON_TORCH_STAND_IN = {"vllm.non_torch.v18": "vllm.non_torch.v1"}
# The fits whose rows are the growth after the TP group's NCCL init: a start whose worker snapshots before that init
# (V1 before v0.11.0, `calibration_snapshot.py`) at TP × PP > 1 is judged, not fitted, and planned as the fit plus the
# init the context fit measures beyond one rank (`init_inside`). V0's fits keep the init in (their rows hold it alike).
INIT_APART = frozenset({"vllm.non_torch.v1"})
# §2.4: the pool is ceil(total × gpu_memory_utilization) less the weights and what the profile finds, never the free
# memory after the load (gpu_worker.py determine_available_memory, v0.8.0–v0.33.0): --free-after-load measures
# no term of vLLM's, so the weights stay the calibrated book (the estimate reads this, `preload_estimate`)
READS_FREE_AFTER_LOAD = False
# V1 splits the forward's transient into a dense MLP's and a fused MoE's (its expert caches are not the
# dense MLP's gate-up output); V0's corpus holds no MoE start to fit a separate part on.
ACTIVATION_FEATURES = ("1 GiB", "max_num_seqs × vocab × 4 B", "dense MLP transient of max_num_batched_tokens",
                       "MoE transient of max_num_batched_tokens")
# V0's profile peak is the larger of its forward and its sampler (`v0_profile.py`): the fit is the sampler's, on the
# starts whose forward the code's count puts below it; a forward-bound start's peak is the forward as counted.
V0_ACTIVATION_FEATURES = ("1 GiB", "max_num_seqs × vocab × 4 B")
# the TP group's all-reduce buffers appear once the custom all-reduce runs (custom_all_reduce_on)
NON_TORCH_FEATURES = ("1 GiB", "1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)")
# GPU names that cover a PCIe board too (A100 80GB/40GB PCIe, A800 PCIe): `custom_all_reduce_on` takes them as SXM4,
# but whether the custom all-reduce runs is the driver's P2P report's to decide, which a plan cannot see (vLLM
# 0.10.1.1 on two A100-80GB of one pod: 'Custom allreduce is disabled because your platform lacks GPU P2P capability or
# P2P test failed', dennislee22/vLLM-benchmarking; custom_all_reduce.py's P2P check, read at v0.9.2 and v0.33.0: every
# release with the custom all-reduce): the non-torch interval keeps both states (`_board_error`)
BOARD_NOT_NAMED = frozenset({"A100", "A100-80GB", "A100-40GB", "A800"})
# What a worker holds before its weights (`worker init memory snapshot`): the CUDA context, NCCL's
# communicators once there are several ranks, and an MoE model's all-to-all buffers across TP ranks.
# vLLM's budget does not read it (it takes a share of the total); a restart needs it free.
CONTEXT_FEATURES = ("1 GiB", "1 GiB when TP × PP > 1", "1 GiB for an MoE model when TP > 1")
# CUDA graphs: the first capture, and each further graph's capture (its nodes: per layer on the rank)
GRAPH_FEATURES = ("1 GiB", "graphs captured beyond each mode's first × layers on the rank ÷ 1000")
# the fits this engine makes: key → (the term it estimates, what its coefficients multiply)
FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {
    **{f"vllm.activation.{era.value}": (Term.ACTIVATION, V0_ACTIVATION_FEATURES if era.value == "v0" else ACTIVATION_FEATURES)
       for era in ACTIVATION_ERAS},
    **{f"vllm.non_torch.{era.value}": (Term.NON_TORCH, NON_TORCH_FEATURES) for era in NON_TORCH_ERAS},
    "vllm.cuda_graphs": (Term.CUDA_GRAPHS, GRAPH_FEATURES),
    "vllm.context": (Term.CONTEXT, CONTEXT_FEATURES),
}
# An era whose logs are too few to fit every feature (rows_needed: one per feature and two more, from two sources) is
# fitted on the sampler's logits alone: the profiles the corpus holds are sampler-bound (their MLP coefficients are
# near 0, and `_forward_floor` keeps the forward's transient), so the logits carry the peak (V1 at v0.10.2-v0.16.0:
# 9.7 × seqs × vocab × 4 B on H100 and L40S alike, llm-d-planner's sweep and search-index id 38962983769).
FEWER_ROWS_FEATURES: dict[str, tuple[int, ...]] = {
    f"vllm.activation.{era.value}": (1,) for era in ACTIVATION_ERAS  # index of "max_num_seqs × vocab × 4 B"
}

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
    'vllm.activation.v0': LinearTerm(
        key='vllm.activation.v0', features=('1 GiB', 'max_num_seqs × vocab × 4 B'),
        coefficients=(0.451937, 6.606439), error_bytes=21475125, records=4,
        sources=3, gpus=('H100', 'V100-32GB'),
        novel_error_bytes=21475125, feature_sources=(3, 3),
    ),
    'vllm.activation.v1': LinearTerm(
        key='vllm.activation.v1', features=('1 GiB', 'max_num_seqs × vocab × 4 B', 'dense MLP transient of max_num_batched_tokens', 'MoE transient of max_num_batched_tokens'),
        coefficients=(0.022205, 9.565728, 0.089135, 0.027395), error_bytes=134767912, records=11,
        sources=5, gpus=('H100', 'H200', 'L40S'),
        novel_error_bytes=134767912, feature_sources=(5, 5, 3, 3),
    ),
    'vllm.activation.v17': LinearTerm(
        key='vllm.activation.v17', features=('1 GiB', 'max_num_seqs × vocab × 4 B', 'dense MLP transient of max_num_batched_tokens', 'MoE transient of max_num_batched_tokens'),
        coefficients=(0.391187, 3.09698, 0.039291, 0.60056), error_bytes=432863511, records=25,
        sources=3, gpus=('H100',),
        novel_error_bytes=432863511, feature_sources=(3, 3, 3, 1), unseen_error_bytes=1435706586,
    ),
    'vllm.context': LinearTerm(
        key='vllm.context', features=('1 GiB', '1 GiB when TP × PP > 1', '1 GiB for an MoE model when TP > 1'),
        coefficients=(0.510714, 1.025, 0.494286), error_bytes=64424509, records=38,
        sources=2, gpus=('H100',),
        novel_error_bytes=64424509, feature_sources=(2, 1, 1), unseen_error_bytes=1653562410,
    ),
    'vllm.cuda_graphs': LinearTerm(
        key='vllm.cuda_graphs', features=('1 GiB', "graphs captured beyond each mode's first × layers on the rank ÷ 1000"),
        coefficients=(0.333999, 0.184319), error_bytes=1762710477, records=36,
        sources=5, gpus=('A100-40GB', 'H100', 'L40S'),
        novel_error_bytes=1762710477, feature_sources=(5, 5),
    ),
    'vllm.non_torch.v0': LinearTerm(
        key='vllm.non_torch.v0', features=('1 GiB', '1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)'),
        coefficients=(0.1, 2.0), error_bytes=177167401, records=12,
        sources=12, gpus=('A10', 'A100-40GB', 'H100', 'L40', 'RTX4090', 'T4', 'V100-32GB'),
        novel_error_bytes=2147483648, feature_sources=(12, 1), unseen_error_bytes=2147483648,
    ),
    'vllm.non_torch.v06': LinearTerm(
        key='vllm.non_torch.v06', features=('1 GiB', '1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)'),
        coefficients=(0.266667, 3.913333), error_bytes=4201909671, records=4,
        sources=3, gpus=('A100-40GB', 'H200', 'RTX3090'),
        novel_error_bytes=4201909671, feature_sources=(3, 1), unseen_error_bytes=4201909671,
    ),
    'vllm.non_torch.v1': LinearTerm(
        key='vllm.non_torch.v1', features=('1 GiB', '1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)'),
        coefficients=(0.126, 0.419), error_bytes=467077693, records=12,
        sources=5, gpus=('H100',),
        novel_error_bytes=467077693, feature_sources=(5, 1), unseen_error_bytes=467077693,
    ),
    'vllm.non_torch.v18': LinearTerm(
        key='vllm.non_torch.v18', features=('1 GiB', '1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)'),
        coefficients=(0.252188, 0.379062), error_bytes=365072220, records=48,
        sources=3, gpus=('GB200', 'H100'),
        novel_error_bytes=365072220, feature_sources=(3, 2),
    ),
}  # fmt: skip
INTERVAL_SCALE: IntervalScale | None = IntervalScale(
    engine='vllm', factor=1.3791, records=73, sources=35,
)
# END FITTED


def activation_key(inputs: CalibrationInputs) -> str:
    return f"vllm.activation.{era_for(ACTIVATION_ERAS, inputs.version).value}"


def non_torch_key(inputs: CalibrationInputs) -> str:
    return f"vllm.non_torch.{era_for(NON_TORCH_ERAS, inputs.version).value}"


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """Feature values (GiB) of fit `key` for this launch; None where it does not apply (another era; a
    multimodal model, whose encoder profile is not modelled; pipeline stages, whose peaks differ)."""
    if key == activation_key(inputs):
        if key == "vllm.activation.v0" and (v0_forward_bound(inputs) or v0_moe_forward(inputs)):
            return None  # its log measures the forward (or a MoE's, not counted), not the sampler the fit is of
        return _plan_features(key, inputs)
    if key == non_torch_key(inputs):
        if key in INIT_APART and nccl_inside_non_torch(inputs):
            return None  # its figure holds the TP group's init, which the fit leaves to the context's part
        return _non_torch_features(inputs)
    if key == "vllm.cuda_graphs":
        return _graph_features(inputs)
    if key == "vllm.context":
        # a log whose startup snapshot precedes NCCL's init printed the free memory before NCCL, not before the weights
        return _context_features(inputs) if startup_free_is_context(inputs) else None
    return None


def _non_torch_features(inputs: CalibrationInputs) -> tuple[float, ...]:
    """(1, the custom all-reduce runs)."""
    return (1.0, 1.0 if custom_all_reduce_on(inputs) else 0.0)


def _plan_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """The activation fit's feature values for a plan (a forward-bound V0 launch's too: `_forward_floor` sets its
    peak); None for a multimodal model, pipeline stages or LoRA."""
    if inputs.model is None or inputs.model.multimodal or inputs.layout.pp > 1 or lora(inputs):
        return None
    return _activation_features(inputs, inputs.model)


def fit_offset(key: str, inputs: CalibrationInputs) -> int:
    """Bytes of what fit `key` measures that the code sizes, taken off the logged figure before fitting and added to
    the fit's estimate: FlashInfer's all-reduce fusion workspace (`fusion_workspace.py`) and NCCL's NVLS buffers
    (`nvls_buffers.py`) in non-torch memory."""
    if key != non_torch_key(inputs):
        return 0
    tokens = batch_limits(inputs)[0]
    workspace, nvls = fusion_workspace(inputs, tokens), nvls_buffers(inputs, tokens)
    return (workspace.bytes if workspace is not None else 0) + (nvls.bytes if nvls is not None else 0)


def custom_all_reduce_on(inputs: CalibrationInputs) -> bool:
    """Whether the TP group's all-reduce buffers (most of non-torch memory's growth at TP > 1) are held: TP > 1,
    not `--disable-custom-all-reduce`, and GPUs joined by NVLink. vLLM's custom_all_reduce.py (read at v0.13.0
    and v0.33.0) turns the custom all-reduce off on more than two GPUs joined only by PCIe ("not supported on
    more than two PCIe-only GPUs", as 4 x L40S at v0.19.0 printed) and on two where `_can_p2p` fails ("lacks
    GPU P2P capability or P2P test failed": GeForce cards, most cloud VMs), and its symmetric-memory
    all-reduce needs compute capability 9.0 or later (symm_mem.py). Two PCIe GPUs whose P2P test passes keep
    the custom all-reduce, which kvtop cannot see; no start in the corpus shows the growth there, while two
    do without it: 2 x RTX 4090 at vLLM 0.7.2 printed 0.25 GiB of non-torch memory at TP 2 (vllm#13061),
    and 2 x L4 at v0.28.0 charged 0.76 GiB beside weights and KV at TP 2 (search-index id 59672298265), where
    the H100 runs add 1.8 GiB at TP > 1 (1.5 of it FlashInfer's fusion workspace before v0.22.0,
    `fusion_workspace.py`). An
    unnamed GPU keeps vLLM's rule on TP alone."""
    tp = inputs.layout.tp
    if tp <= 1 or inputs.settings.flags.get("disable-custom-all-reduce") not in (None, False):
        return False
    if inputs.gpu_name is None:
        return tp <= 2
    return gpu_model_key(inputs.gpu_name) in NVLINK_GPUS


def _context_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """(1, several ranks, MoE across TP ranks); None where the model is not known and TP > 1."""
    layout = inputs.layout
    if inputs.model is None and layout.tp > 1:
        return None
    moe = inputs.model is not None and inputs.model.moe is not None and layout.tp > 1
    return (1.0, 1.0 if layout.tp * layout.pp > 1 else 0.0, 1.0 if moe else 0.0)


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    """What a worker holds before its weights load (not a term of vLLM's budget: a restart needs it free)."""
    fits = {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits
    return context_estimate("vllm.context", CONTEXT_LABEL, fits, inputs, _context_features(inputs))


def _graph_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """(1, graphs beyond each mode's first × layers on the rank ÷ 1000); None before v0.18.0, eager, or no model."""
    if not era_for(GRAPHS_PROFILED, inputs.version).value or inputs.settings.enforce_eager or inputs.model is None:
        return None
    piecewise, full = graph_counts(inputs)
    extra = max(piecewise - 1, 0) + max(full - 1, 0)
    layers = math.ceil(inputs.model.num_layers / max(inputs.layout.pp, 1))
    return (1.0, extra * layers / 1000)


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the weights, non-torch memory, the activation peak and (v0.21+) CUDA graphs."""
    fits = {**CUDA_TOTAL_FITS, **FITS} if fits is None else fits
    tokens, seqs, why = batch_limits(inputs)
    key = activation_key(inputs)
    label = "vLLM's profiled activation peak"
    values = _plan_features(key, inputs)
    activation = fitted_estimate(Term.ACTIVATION, label, fits.get(key), values,
                                 f"{tokens:,} tokens, {seqs:,} seqs ({why})")  # fmt: skip
    # the sampler's path first, then the floor: a peak lowered to FlashInfer's one copy is still never below the
    # forward's MLP transient, taken once here
    activation = _forward_floor(_sampler_path_error(activation, inputs, fits.get(key), seqs), inputs, tokens)
    if activation is None:
        activation = _unfitted_activation(inputs, fits.get(key), key, label, tokens, seqs)
    activation = _sampler_floor(activation, inputs, tokens, seqs)
    if v0_moe_forward(inputs) and activation.source == "calibrated":
        activation = assumed_estimate(Term.ACTIVATION, label, activation.bytes, max(activation.error_bytes, MOE_FORWARD_ERROR),
                                      f"{activation.basis}; a fused MoE's forward in V0 is not counted (v0_profile.py): "
                                      "± 2 GiB assumed")  # fmt: skip
    found = [cuda_total_estimate(inputs.gpu_name, inputs.gpu_total_bytes, fits), weights_estimate(inputs, extra=held(inputs)), activation,
             non_torch_estimate(inputs, fits, tokens)]
    if graphs_charged(inputs):
        placeholder = v2_placeholder(inputs)
        label = "vLLM's CUDA-graph estimate" if placeholder is None else "vLLM V2's memory beside its profile"
        piecewise, full = graph_counts(inputs)
        basis = placeholder or (f"charged since v0.21.0: {piecewise} PIECEWISE + {full} FULL graphs (vLLM's default "
                                "sizes); from v0.26.0 the first FULL capture's transient at max_num_batched_tokens is "
                                "not modelled")  # fmt: skip
        graphs = fitted_estimate(Term.CUDA_GRAPHS, label, fits.get("vllm.cuda_graphs"),
                                 fit_features("vllm.cuda_graphs", inputs), basis)  # fmt: skip
        found.append(graphs or assumed_estimate(
            Term.CUDA_GRAPHS, label, 2 * GIB, 5 * GIB // 2,
            "charged since v0.21.0; the model's layers are not known (0.36 GiB on a small TP 2 model, 4.99 GiB on "
            "GLM-5.2 TP 4): 2 GiB assumed"))  # fmt: skip
    return tuple(found)


def non_torch_estimate(inputs: CalibrationInputs, fits: dict[str, LinearTerm], tokens: int) -> TermEstimate:
    """The fitted growth (the era's fit, else its stand-in's, else 0.25 GiB assumed) plus what the code sizes: NCCL's
    NVLS buffers in V0 at TP 8 on H100/H200 (`nvls_buffers.py`) and FlashInfer's all-reduce fusion workspace
    (`fusion_workspace.py`)."""
    key = non_torch_key(inputs)
    label, stand_in = "vLLM's non-torch memory", NON_TORCH_STAND_IN.get(key)
    fit = fits.get(key) or (fits.get(stand_in) if stand_in else None)
    basis = f"TP {inputs.layout.tp}, custom all-reduce {'on' if custom_all_reduce_on(inputs) else 'off'}"
    if fit is not None and fit.key != key:
        basis += f"; {key} has too few logs to fit: {fit.key} stands in for the growth beside the workspace"
    estimate = fitted_estimate(Term.NON_TORCH, label, fit, _non_torch_features(inputs), basis) or assumed_estimate(
        Term.NON_TORCH, label, GIB // 4, GIB // 2, "0.25 GiB assumed: not fitted for this era")  # fmt: skip
    if fit is not None and fit.key in INIT_APART and custom_all_reduce_on(inputs):
        estimate = init_inside(estimate, context(inputs, fits), fits, inputs, charged=not _board_open(inputs))
    nvls = nvls_buffers(inputs, tokens)
    if nvls is not None:
        estimate = estimate.model_copy(update={
            "bytes": estimate.bytes + nvls.bytes, "basis": f"{estimate.basis}; + {nvls.why}",
        })  # fmt: skip
    estimate = _board_error(estimate, inputs, fit)
    workspace = fusion_workspace(inputs, tokens)
    if workspace is None:
        return estimate
    return estimate.model_copy(update={
        "bytes": estimate.bytes + workspace.bytes, "basis": f"{estimate.basis}; {'+ ' if workspace.modelled else ''}{workspace.why}",
    })  # fmt: skip


def _board_open(inputs: CalibrationInputs) -> bool:
    """Whether the GPU's name covers PCIe boards too (`BOARD_NOT_NAMED`): the driver's P2P report decides."""
    return inputs.gpu_name is not None and gpu_model_key(inputs.gpu_name) in BOARD_NOT_NAMED


def _board_error(estimate: TermEstimate, inputs: CalibrationInputs, fit: LinearTerm | None) -> TermEstimate:
    """The non-torch estimate with the custom all-reduce's part kept in its interval where the GPU's name leaves the
    board open (`BOARD_NOT_NAMED`): the fit's own coefficient of the custom all-reduce's buffers, added to the error as
    independent errors add (as the sampler's path is, `_sampler_path_error`)."""
    if fit is None or not custom_all_reduce_on(inputs) or not _board_open(inputs):
        return estimate
    part = round(max(fit.coefficients[1], 0.0) * GIB)
    return estimate.model_copy(update={
        "error_bytes": round(math.hypot(estimate.error_bytes, part)),
        "basis": f"{estimate.basis} (the GPU's name covers PCIe boards too: the driver's P2P report decides, "
                 f"± {part / GIB:.2f} GiB)",
    })  # fmt: skip


def _forward_floor(
    activation: TermEstimate | None, inputs: CalibrationInputs, tokens: int
) -> TermEstimate | None:
    """The fitted peak, or the forward's own MLP transient where that is larger. `profile_run` runs the forward over
    `max_num_batched_tokens` before the sampler (V0 model_runner.profile_run, V1 gpu_model_runner.profile_run →
    _dummy_run, every release), and the MLP holds its gate-up output and the activation's output at once (tokens ×
    (3 × intermediate ÷ TP + hidden) × 2 B, `mlp_transient_gib`); the torch peak is the larger of that and the sampler's
    copies, never less than either. The fits' logs (8,192 tokens with 1,024 seqs on H100, 2,048 with 256) are
    sampler-bound, so their MLP coefficient is near 0; a launch of many tokens and few seqs is forward-bound (Qwen3-14B
    AWQ at 8,192 tokens and 8 seqs on an L40S, vLLM 0.28.0: 0.88 GiB of MLP transient where the fit gives 0.44)."""
    if activation is None or inputs.model is None:
        return activation
    v0 = v0_forward_bytes(inputs, tokens)
    floor = v0 if v0 is not None else round(mlp_transient_gib(inputs.model, inputs.layout, tokens) * GIB)
    if floor <= activation.bytes:
        return activation
    return activation.model_copy(update={
        "bytes": floor, "basis": f"{activation.basis}; the forward's MLP transient at {tokens:,} tokens, larger than the fit",
    })  # fmt: skip


def _unfitted_activation(
    inputs: CalibrationInputs, fit: LinearTerm | None, key: str, label: str, tokens: int, seqs: int
) -> TermEstimate:
    """The peak where no fit gives it. A multimodal model (or pipeline stages, LoRA) takes the text model's fit, said
    to be a guess; an era whose logs are too few to fit takes the sampler as vLLM's code counts it (v0.17+ on the
    native path, `sampler_peak.py`) or the forward's MLP transient, the larger, ± the 2 GiB the assumption had; else
    2 GiB, said why."""
    model = inputs.model
    if fit is not None and model is not None:
        guess = max(fit.predict(_activation_features(inputs, model)), 0)
        return assumed_estimate(Term.ACTIVATION, label, guess, max(guess, 2 * GIB), "the text model's fit: an "
                                "encoder's profile run, pipeline stages and LoRA buffers are not modelled")  # fmt: skip
    counted = _counted_sampler(inputs, tokens, seqs)
    if counted is not None and model is not None:
        forward = round(mlp_transient_gib(model, inputs.layout, tokens) * GIB)
        return assumed_estimate(
            Term.ACTIVATION, label, max(counted, forward), 2 * GIB,
            f"{key} has too few logs to fit: the sampler's {logits_copies(model):g} copies of {seqs:,} seqs × "
            f"{model.vocab_size:,} × 4 B and the forward's output, as vLLM's code counts them (sampler_peak.py), or the "
            f"forward's MLP transient at {tokens:,} tokens, the larger; ± 2 GiB assumed (no log of another source "
            "measures the count's error)",
        )  # fmt: skip
    why = f"2 GiB assumed: {key} has too few logs to fit" if model else "2 GiB assumed: the model's config is not known"
    return assumed_estimate(Term.ACTIVATION, label, 2 * GIB, 2 * GIB, why)


def _counted_sampler(inputs: CalibrationInputs, tokens: int, seqs: int) -> int | None:
    """The sampler's peak as vLLM's code counts it (`sampler_peak.py`); None where the path is not counted, and on
    pipeline stages (the sampler runs on the last only) or with LoRA (its buffers join the profile)."""
    if inputs.model is None or inputs.layout.pp > 1 or lora(inputs):
        return None
    return counted_sampler_bytes(inputs.model, inputs.layout, inputs.version, inputs.gpu_name, tokens, seqs)


def _sampler_floor(activation: TermEstimate, inputs: CalibrationInputs, tokens: int, seqs: int) -> TermEstimate:
    """The peak never below the sampler as vLLM's code counts it: `profile_run` holds those copies whatever the fit
    says. It binds where the vocabulary is large (Gemma-3's 262,208 at 1,024 seqs: 3.72 GiB counted, the v17 fit's
    text form 3.53; its v0.19.0 log printed 3.99)."""
    counted = _counted_sampler(inputs, tokens, seqs)
    if counted is None or counted <= activation.bytes:
        return activation
    return activation.model_copy(update={
        "bytes": counted, "basis": f"{activation.basis}; the sampler as vLLM's code counts it, larger (sampler_peak.py)",
    })  # fmt: skip


def _sampler_path_error(
    activation: TermEstimate | None, inputs: CalibrationInputs, fit: LinearTerm | None, seqs: int
) -> TermEstimate | None:
    """The fitted peak for the sampler's path (`sampler_path.py`). The fits count the native path's copies of the
    logits (their logs are v0.8-v0.19 starts on it); FlashInfer's keeps one of them (vLLM 0.10.1.1, Qwen2-7B at 256
    seqs: 0.50-0.62 GiB beside weights and KV on FlashInfer, 1.56 on the native path). Where the install decides
    the path, the interval is widened by the copies beyond one; where the release and the GPU take FlashInfer's,
    the peak is lowered by them and the interval keeps them, for a start whose FlashInfer build fails or that sets
    VLLM_USE_FLASHINFER_SAMPLER=0. `_forward_floor` applies after it."""
    if activation is None or fit is None or inputs.model is None or activation.source != "calibrated":
        return activation
    path, why = sampler_path(inputs.version, inputs.gpu_name)
    if path == "native":
        return activation
    copies = max(fit.coefficients[1] - 1, 0.0)  # the fit's logits coefficient: copies of seqs × vocab × 4 B
    extra = round(copies * logits_gib(seqs, inputs.model) * GIB)
    if not extra:
        return activation
    error = round(math.hypot(activation.error_bytes, extra))
    if path == "either":
        return activation.model_copy(update={
            "error_bytes": error,
            "basis": f"{activation.basis}; FlashInfer's or the native top-k/top-p sampler, not known before the start",
        })  # fmt: skip
    return activation.model_copy(update={
        "bytes": max(activation.bytes - extra, 0), "error_bytes": error,
        "basis": f"{activation.basis}; FlashInfer's top-k/top-p sampler ({why}): the fit's logits copies beyond one "
                 "taken off, kept in the interval",
    })  # fmt: skip


def held(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """What vLLM's load holds beside the book: the loader's own tensors (rope cache, MXFP4 copies) and the caching
    allocator's rounding of the weights (`weights_held.py`)."""
    parts = [part for part in (held_beside(inputs), allocator_rounding(inputs)) if part is not None]
    if not parts:
        return None
    return sum(size for size, _ in parts), "; ".join(why for _, why in parts)


def _activation_features(inputs: CalibrationInputs, model: ModelSpec) -> tuple[float, ...]:
    """(1, logits, the forward's transient): V0's as one feature, V1's split into dense and MoE parts."""
    tokens, seqs, _ = batch_limits(inputs)
    logits, mlp = logits_gib(seqs, model), mlp_transient_gib(model, inputs.layout, tokens)
    if activation_key(inputs) == "vllm.activation.v0":
        return (1.0, logits)
    moe = model.moe is not None
    return (1.0, logits, 0.0 if moe else mlp, mlp if moe else 0.0)
