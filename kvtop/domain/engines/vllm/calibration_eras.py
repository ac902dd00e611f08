"""vLLM's calibration eras: which fit of each term a release's profile is measured by (docs/calibration.md).

The activation peak and the non-torch growth change what they hold at named releases (V1 at v0.8.0, the sampler's
fewer copies at v0.17.0, v0.6.4's device-wide form, the growth from the worker's init from v0.6.5, FlashInfer's
fusion workspace at v0.18.0); each era is one fit, keyed `vllm.<term>.<era>`. Kept apart from the terms so the fits'
table (calibration.py) and the term functions read one selection.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.engines.vllm.batching import ENGINE_ERAS
from kvtop.domain.engines.vllm.profile_run import engine_era, runs_opt_in_v1

# The profiled activation peak is mostly the sampler's copies of its float32 logits; their number fell
# in v0.17.0 (a 60 % lower peak at the same batch: llm-d-planner's version sweep, docs/calibration.md).
ACTIVATION_ERAS: Eras[str] = Eras((
    Era("", "v0", "V0: profile_run over max_num_batched_tokens, the sampler over max_num_seqs"),
    Era("0.8.0", "v1", "V1's _dummy_run and _dummy_sampler_run"),
    Era("0.17.0", "v17", "V1 from v0.17.0: the sampler's profile keeps fewer copies of its logits"),
))
# What `non_torch_memory` counts, in the form of each release's code: v0.3.1–v0.6.3 `init_gpu_memory − free` after the
# profile, the context outside (`v0_charge.py`); v0.6.4 and v0.6.4.post1 (vllm#9352, until #10511) the whole device's
# used memory (every process on the GPU) less this process's torch-allocated bytes after the profile and `empty_cache`
# (vllm/worker/worker.py:206-213): the worker's CUDA context and library handles inside (`v064`, charged as the growth
# plus one process's context: calibration_non_torch.py); from v0.6.5 the growth from the worker's init (#10511's
# `memory_profiling`, worker.py:198 at v0.6.5; v0.7.0's PR #12126 keeps the meaning with a snapshot of non-torch
# memory, utils.py:1952-2056 at v0.7.1), in V1 before v0.11.0 with the TP group's NCCL and custom all-reduce init
# inside it (`calibration_snapshot.py`); from v0.18.0 FlashInfer's all-reduce fusion workspace too
# (`fusion_workspace.py`: 1.5 GiB per rank at TP 2–8 on Hopper up to v0.21, each buffer at the 2 MiB allocation
# granularity from v0.22.0; counted apart from the fit). V0's FlashInfer workspace is a torch tensor, never in it.
NON_TORCH_ERAS: Eras[str] = Eras((
    Era("", "v02", "v0.2.0 vllm/worker/worker.py:79-80, 119-125 to v0.2.4: torch's peak alone; v0.2.5 :91-92 to "
                   "v0.3.0 :121-122: total − free after the profile, the context inside (v0_charge.py); not fitted"),
    Era("0.3.1", "v06", "v0.3.1 vllm/worker/worker.py:88-89, 131-134 to v0.6.3.post1 :219-231: init_gpu_memory − "
                        "free after the profile, less torch's peak: the growth from the worker's start, the context "
                        "outside"),
    Era("0.6.4", "v064", "v0.6.4 and v0.6.4.post1 vllm/worker/worker.py:206-213 (vllm#9352): total − free − torch's "
                         "allocated bytes after the profile and empty_cache: the CUDA context and library handles "
                         "inside"),
    Era("0.6.5", "v0", "v0.6.5 vllm/worker/worker.py:198 memory_profiling(baseline_memory_in_bytes=total − "
                       "init_gpu_memory) (vllm#10511), v0.7.0 PR #12126: the growth of non-torch memory from the "
                       "worker's init"),
    Era("0.8.0", "v1", "V1: from v0.9.1 memory_profiling's growth from the worker's init snapshot (before v0.11.0 "
                       "with the TP group's NCCL init inside, counted apart: calibration_snapshot.py); v0.8.0–v0.9.0 "
                       "charge the device's used memory, the context inside (v0_charge.py), not fitted"),
    Era("0.18.0", "v18", "V1 from v0.18.0: the growth less FlashInfer's all-reduce fusion workspace"),
))
# The fit that stands in for an era's remainder where the corpus holds too few logs of the era to fit it: v0.18's
# growth less the workspace is V1's (NCCL's channels connected by the profile's first large all-reduces, CUDA's
# lazily loaded kernels): 0.55 GiB at TP 2 on H100 at v0.11.0, 0.57 at v0.19.0 once the workspace is taken off.
# v0.6.4's figure less the worker's context is the growth from the worker's init, the figure v0.6.5–v0.7.x measure
# (`v0`: 0.10–0.11 GiB at TP 1 on an RTX 3090, a T4 and an A100 at v0.6.6); its own fit, where the corpus holds enough
# v0.6.4 logs, would be of the whole figure, context inside (calibration_non_torch.py `_context_inside`).
NON_TORCH_STAND_IN = {"vllm.non_torch.v18": "vllm.non_torch.v1", "vllm.non_torch.v064": "vllm.non_torch.v0"}
# The era whose TP > 1 part stands in for another's where no source of that era measured it (`feature_sources` 0): V1's
# growth from the init snapshot at TP > 1 holds the same thing from v0.11.0 on, beside FlashInfer's workspace from
# v0.18.0. Before the snapshot (v0.11.0 vllm#25359; v1/worker/gpu_worker.py:217-233 at v0.14.0, :263-282 at v0.19.0):
# pynccl's communicator and its warm-up all-reduce (pynccl.py:139-146 at v0.14.0), the custom all-reduce's 8 MiB
# buffers (custom_all_reduce.py:59, 177-181) and the symmetric-memory buffer (all_reduce_utils.py:48-53: 64 MiB at TP 2
# on compute capability 9.0). After it, inside the profile: the TP device group's torch NCCL communicator, which
# torch makes at the group's first collective (init_process_group without device_id, parallel_state.py:1236 at v0.14.0,
# :1422 at v0.19.0): the logits' all-gather (logits_processor.py:74-85, `use_all_gather` True on CUDA;
# base_device_communicator.py:153 `dist.all_gather_into_tensor(..., group=self.device_group)` at v0.14.0, :196 at
# v0.19.0; CudaCommunicator overrides neither all_gather nor gather). llm-d's H100 starts: 0.54-0.55 GiB at TP 2 at
# v0.14 (0.13 at TP 1), 0.56-0.71 beside the 1.5 GiB workspace at TP 2-4 at v0.19.0 (0.24-0.27 at TP 1).
# v0.3.1–v0.6.3 read their snapshot before the TP group's NCCL and custom all-reduce init (vllm-project/vllm
# vllm/worker/worker.py `init_device`: init_gpu_memory at :94-95 before init_distributed_environment at :100 at v0.4.0;
# before init_worker_distributed_environment at :104-105/:110 at v0.4.1, :170-171/:176 at v0.6.3), as v0.6.5–v0.7 do:
# V0's part stands in (the corpus holds no start of the era at TP > 1 on NVLink).
TP_PART_STAND_IN = {"vllm.non_torch.v1": "vllm.non_torch.v18", "vllm.non_torch.v18": "vllm.non_torch.v1",
                    "vllm.non_torch.v06": "vllm.non_torch.v0"}
# The eras whose fit reads the GPU's resident threads, not a constant (`calibration_non_torch.non_torch_features`):
# v0.3.1–v0.6.3 take init_gpu_memory after set_device and empty_cache, before the profile, and charge
# init_gpu_memory − free after it with no empty_cache between (vllm-project/vllm vllm/worker/worker.py: `init_device`
# and `profile_num_available_blocks` :127-139 at v0.4.0, `determine_num_available_blocks` :134-146 at v0.4.1 and
# :219-231 at v0.6.3). What the profile's kernels make the driver add after the snapshot is charged: the local memory
# for every resident thread's stack, grown to the largest a loaded kernel needs and never shrunk (CUDA driver API,
# cuCtxSetLimit CU_LIMIT_STACK_SIZE; the context fit's feature, `features.context_threads`), the lazily loaded modules
# and cuBLAS's workspace, and torch's reserved-but-free segments. The era's logs print no figure of it: its rows are
# the capacity each log printed left over by the other terms (`IMPLIED_FITS`). At TP 1 they follow the threads (T4
# 0.09 GiB, L4 0.13, A100 0.29-0.31, RTX 3090 0.43, H100 0.80): held out by source, 0.36 GiB against a constant's
# 0.55; a constant beside the threads fits at 0.
THREADS_SCALED = frozenset({"vllm.non_torch.v06"})
# The fits whose logs print no figure of the term: each row is what the capacity the log printed leaves of the term
# once the plan's other terms (the weights as the log printed them where it did) are taken (benchmarks/calibration/
# implied.py), so its held-out error holds the other terms' errors too. So is a hybrid's transient with prefix caching
# and captured graphs (`hybrid_graph_sample.SAMPLE_KEY`): no log prints it apart from the graphs' estimate.
IMPLIED_FITS = frozenset({"vllm.non_torch.v06", "vllm.hybrid_sample"})
# The era no fit measures: before v0.3.1 the profile charges torch's peak alone or the device's used memory, never the
# growth alone (`v0_charge.profile_charge`), so no log of it gives the growth a row; a plan of it assumes the growth.
NOT_FITTED = frozenset({"vllm.non_torch.v02"})
# The era whose figure holds the worker's CUDA context beside the growth: a plan adds one process's context
# (`cuda_context.py`) to its stand-in's growth.
CONTEXT_INSIDE = frozenset({"vllm.non_torch.v064"})
# The fits whose rows are the growth after the TP group's NCCL init: a start whose worker snapshots before that init
# (V1 before v0.11.0, `calibration_snapshot.py`) at TP × PP > 1 is judged, not fitted, and planned as the fit plus the
# init the context fit measures beyond one rank (`init_inside`). V0's fits keep the init in (their rows hold it alike).
INIT_APART = frozenset({"vllm.non_torch.v1"})


def _runs_v0(inputs: CalibrationInputs) -> bool:
    """A V1-era release whose start runs V0, below compute capability 8.0 or under VLLM_USE_V1=0
    (`profile_run.engine_era`: the one predicate the batch and the profile read too): its profile is V0's
    (worker/worker.py `profile_run`, `memory_profiling`'s growth from the baseline), so V0's fits measure it. V0's own
    releases keep their eras' fits."""
    return ENGINE_ERAS.at(inputs.version) == "v1" and engine_era(inputs) == "v0"


def activation_key(inputs: CalibrationInputs) -> str:
    """The activation fit a start's profile is measured by: V1's v0.8.0 fit for a V0-era release's opt-in V1
    (`profile_run.runs_opt_in_v1`: its forward; none fitted on it), V0's for a V1-era start that runs V0, else the
    release's era's."""
    if runs_opt_in_v1(inputs):
        return "vllm.activation.v1"
    return "vllm.activation.v0" if _runs_v0(inputs) else f"vllm.activation.{era_for(ACTIVATION_ERAS, inputs.version).value}"


def non_torch_key(inputs: CalibrationInputs) -> str:
    """The non-torch fit: as `activation_key` (the opt-in V1's growth is v0.8.0's, its charge v0.8.0's form)."""
    if runs_opt_in_v1(inputs):
        return "vllm.non_torch.v1"
    return "vllm.non_torch.v0" if _runs_v0(inputs) else f"vllm.non_torch.{era_for(NON_TORCH_ERAS, inputs.version).value}"
