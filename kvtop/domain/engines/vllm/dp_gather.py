"""vLLM's data-parallel profile run, priced where its code was read: a MoE's batch gathered over the DP ranks and the
DP group's NCCL communicators (vLLM 0.10.1-0.10.2 with the naive all-to-all, v0.11.0-v0.34.x with
'allgather_reducescatter', Triton experts, one node of NVLink GPUs: `dp_eras.PRICED_ERAS`; MXFP4 Marlin experts at
v0.29.0-v0.34.x: dp_marlin.py), and a dense model's DP communicators (v0.10.1-v0.13.0; from v0.14.0 a dense model's
DP ranks are independent engines: none).

The gathered batch. Each DP rank's `profile_run` runs `_dummy_run(max_num_batched_tokens)` (v1/worker/
gpu_model_runner.py at v0.10.1.1; `get_dp_padding` pads every rank to the largest, all equal here), and every MoE
layer runs on the tokens of all the DP ranks: `FusedMoE.forward_impl` dispatches whenever dp_size > 1 and no DeepEP
high-throughput or FlashInfer CUTLASS kernel runs (fused_moe/layer.py:1638-1645 at v0.10.1.1, :1768 at v0.10.2), and
`NaiveAll2AllManager.naive_multicast` allocates the gathered hidden states and router logits, dp × tokens rows each
(distributed/device_communicators/all2all.py:33-60). The Fp8MoEMethod (block FP8, DeepGEMM off by default:
envs.py `VLLM_USE_DEEP_GEMM` '0') and the unquantized method then call `fused_experts` (quantization/fp8.py:1159-1172
at v0.10.2), whose `fused_experts_impl` (fused_moe.py:1501-1546 at v0.10.1.1) takes chunks of at most
`VLLM_FUSED_MOE_CHUNK_SIZE` (32,768) rows and allocates `cache13` (M × top-k × max(N, K)) and `intermediate_cache2`
(M × top-k × N ÷ 2) in the model dtype, N the gate-up width a rank holds, K the hidden size; for FP8 the chunk's
input and the second GEMM's input are quantized (`moe_kernel_quantize_input`: 1 B each and a float32 scale per 128).
The experts write in place into the gathered hidden states (`inplace=True`), and `combine` all-reduces them on the DP
group (pynccl's out-of-place all-reduce: a second gathered tensor). The profile's peak is the larger of that layer
and what kvtop's fit and floors give (`with_gathered_forward`).

The DP group's communicators. `CudaCommunicator` makes a pynccl communicator on every group but EP's and a custom
all-reduce on TP's alone (cuda_communicator.py:26-55 at v0.10.1.1); the worker's memory snapshot precedes the
distributed init to v0.10.x (gpu_worker.py:174-192 at v0.10.1.1, `calibration_snapshot.SNAPSHOT_BEFORE_NCCL`), so
the DP group's pynccl communicator is charged as non-torch memory, and the naive dispatch's `broadcast` on the DP
device group (parallel_state.py:454-467) makes torch's NCCL communicator during the profile. A TP group's are the
same two (its pynccl communicator, its device group's torch communicator at the profile's first collective), which
kvtop's fits measure on NVLink GPUs: the context fit's part beyond one rank and the non-torch fit's TP > 1 part. They
stand in for the DP group's, each ± its own size (not measured on a DP group; NCCL's NVLS buffers not read).

v0.11.0 (read in its wheel). The default all-to-all is 'allgather_reducescatter' (envs.py:1240-1246; no
--all2all-backend flag yet; `FusedMoE.forward_impl` dispatches as before, fused_moe/layer.py:2001-2022):
`AgRsAll2AllManager.dispatch` all-gathers the same dp × tokens rows of hidden states and
router logits on the DP group (all2all.py:97-140, pynccl's `all_gatherv`, cuda_communicator.py:260-300), the
unquantized experts run the same `fused_experts_impl` (fused_moe.py:1484-1706, caches and chunk as at v0.10.2), and
`combine` reduce-scatters into a tensor of the rank's own rows (`reduce_scatterv`, cuda_communicator.py:186-220), not
a second gathered one. FP8 block experts take DeepGEMM by default (`VLLM_USE_DEEP_GEMM` '1', envs.py:1148-1149;
fp8.py:453-463): not read, named. The worker snapshots after the distributed init (gpu_worker.py:165-182), so the DP
group's pynccl communicator is outside the budget; but the DP padding now all-reduces on the DP group's device group
(`DPMetadata.num_tokens_across_dp`, forward_context.py:89-114, made by `set_forward_context` in every dummy run; on
the Gloo CPU group at v0.10.2, forward_context.py:72-85), so torch's NCCL communicator on it is made in the profile,
non-torch memory, for a dense model too (unless VLLM_DISABLE_NCCL_FOR_DP_SYNCHRONIZATION, which a plan cannot see, or
from v0.11.1 `--disable-nccl-for-dp-synchronization`, which it reads: dp_flags.py).
v0.11.2 and v0.12.0 do the same from `_dummy_run`'s `coordinate_batch_across_dp` (v1/worker/dp_utils.py), and at
v0.12.0 `--async-scheduling` moves it to Gloo (dp_flags.NCCL_OFF_ERAS). Their MoE layer is v0.11.0's but for two
things: v0.11.2 runs the shared experts after the routed ones (`SHARED_FIRST`), v0.12.0's VLLM_FUSED_MOE_CHUNK_SIZE
is 16,384 (moe_workspace.CHUNK_ERAS). v0.11.1 is v0.11.2 in every file of this path (its wheel read).
After v0.12.0 (every wheel to v0.33.0 read for the communicators). The worker snapshots after the distributed init
and the V1 model runner's `_dummy_run` pads on the DP device group unless disable_nccl_for_dp_synchronization, which
async scheduling sets (at v0.13.0 when asked; from v0.14.0 async scheduling is on by default and the field follows
it). From v0.14.0 a dense model's DP ranks are independent engines of DP size 1 (`DENSE_RANKS_INDEPENDENT`): no DP
group, nothing padded; a MoE's default profile pads on Gloo. The V2 model runner (dense models from
v0.25.0, all from v0.29.0: `runner_eras.runs_v2`) pads on the Gloo CPU group always (v1/worker/gpu/dp_utils.py). The MoE
layer at v0.13.0 is v0.12.0's (its apply's arguments now read off the layer); v0.14.x's unquantized experts run a
modular kernel over the worker's workspace manager, priced in dp_workspace.py (FP8 experts there named), and so are
v0.15.x's to v0.19.x's (the same layer, its code moved; unchunked from v0.18.0). From v0.20.0 the unquantized
kernel gathers itself, routing the rank's own rows first (dp_kernel_gather.py, on the V1 and V2 runners; read to
v0.34.0, one own-rows tensor fewer from v0.32.0). `PRICED_ERAS` (dp_eras.py) names where each era was read.
At v0.29.0-v0.34.x one path is read: MXFP4 experts on Marlin at TP 1 without EP (the modular kernel's naive DP prepare and
MarlinExperts over the workspace manager, unchunked), priced in dp_marlin.py (`MARLIN_DP_ERAS`).
The non-torch fit's TP > 1 part stands in for it, as above.

A dense model. DP changes nothing else of its profile: each rank runs its own `max_num_batched_tokens` (padded to
the largest, all equal in the profile) through layers that do not gather. Its DP group's communicators are the ones
above: the pynccl one at v0.10.1-0.10.2, torch's at the padding from v0.11.0 where it pads on NCCL
(`COMMUNICATOR_ERAS`, `communicators_made`). The Ray DP backend
(`--data-parallel-backend ray`) runs the same engine core in a Ray actor (`DPEngineCoreActor` subclasses
`DPEngineCoreProc`, v1/engine/core.py:1133-1193 at v0.11.0, only setting CUDA_VISIBLE_DEVICES first); at TP × PP = 1
its executor stays in-process (config/parallel.py:447), the same worker and groups as mp's; at TP × PP > 1 it makes
the executor Ray's (:465-468). kvtop plans it as mp at TP × PP = 1 and refuses it by name above (dp_flags.py).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.batching_async import async_scheduling
from kvtop.domain.engines.vllm.calibration_eras import non_torch_key
from kvtop.domain.engines.vllm.dp_eras import PRICED_ERAS
from kvtop.domain.engines.vllm.dp_flags import padding_on_gloo
from kvtop.domain.engines.vllm.dp_kernel_gather import (
    KERNEL_GATHERS,
    V2_PROFILE_READ,
    kernel_layer_bytes,
    kernel_workspace_bytes,
)
from kvtop.domain.engines.vllm.dp_marlin import (
    MARLIN_DP_ERAS,
    SCATTER_INTO_OUTPUT,
    marlin_dp_read,
    marlin_layer_bytes,
    marlin_workspace_bytes,
)
from kvtop.domain.engines.vllm.dp_workspace import HELD_ROWS, MODULAR_ERAS, TOPK_BYTES, modular_layer_bytes
from kvtop.domain.engines.vllm.moe_workspace import CHUNK_ERAS, experts_workspace_bytes, gate_up_width
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.gpus import NVLINK_GPUS, compute_capability, gpu_model_key
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import GIB, gib

SOURCE = "fused_moe/layer.py `FusedMoE.forward_impl`, all2all.py `NaiveAll2AllManager`, fused_moe.py `fused_experts_impl`"
# The all-to-all a DP launch's MoE layers take without --all2all-backend, by release (every one gathers the DP ranks'
# tokens onto each rank); the flag itself is not in v0.11.0's arg_utils.py (VLLM_ALL2ALL_BACKEND only)
DISPATCH_ERAS: Eras[str | None] = Eras((
    Era("", None, "not read before v0.10.1"),
    Era("0.10.1", "naive", "envs.py:1021-1022 at v0.10.1.1 (VLLM_ALL2ALL_BACKEND, default 'naive'; also v0.10.2)"),
    Era("0.11.0", "allgather_reducescatter", "envs.py:1240-1246 at v0.11.0; config/parallel.py:152 at v0.14.0, "
                                             ":220 at v0.33.0 (every wheel v0.11.0-v0.33.0 read)"),
))  # fmt: skip
# The --all2all-backend values a release removed: ParallelConfig falls back to 'allgather_reducescatter'
REMOVED_BACKENDS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "none removed to v0.16.0"),
    Era("0.17.0", frozenset({"pplx"}), "config/parallel.py:343-348 at v0.17.0, :370-375 at v0.18.0: 'pplx' removed"),
    Era("0.19.0", frozenset({"pplx", "naive"}), "config/parallel.py:344-350 at v0.19.0, :537-543 at v0.33.0"),
))  # fmt: skip
# Whether the combine leaves a second gathered tensor: the naive all-reduce's out-of-place output (dp × tokens rows,
# all2all.py:62-72 at v0.10.1.1) or reduce_scatterv's own rows only (cuda_communicator.py:186-220 at v0.11.0)
COMBINE_GATHERED = {"naive": True, "allgather_reducescatter": False}
# Whether FP8 block experts run DeepGEMM by default (VLLM_USE_DEEP_GEMM): its workspaces were not read
DEEP_GEMM_DEFAULT: Eras[bool] = Eras((
    Era("", False, "envs.py:974-975 at v0.10.2: VLLM_USE_DEEP_GEMM '0'"),
    Era("0.11.0", True, "envs.py:1148-1149 at v0.11.0: VLLM_USE_DEEP_GEMM '1' (fp8.py:453-463 takes it on Hopper); "
                        "'1' in every wheel to v0.33.0"),
))  # fmt: skip
# Which of the DP group's NCCL communicators land in the profile's non-torch growth, by release: (its pynccl
# communicator, made in the distributed init; torch's communicator on its device group, made lazily at its first
# collective, here the DP padding's all-reduce). None: not read.
COMMUNICATOR_ERAS: Eras[tuple[bool, bool] | None] = Eras((
    Era("", None, "not read before v0.10.1"),
    Era("0.10.1", (True, False), "gpu_worker.py:174-192 at v0.10.1.1: the snapshot before the distributed init; "
                                 "forward_context.py:72-85 at v0.10.2: the DP padding on the Gloo CPU group"),
    Era("0.11.0", (False, True), "gpu_worker.py:165-182 at v0.11.0: the snapshot after the distributed init; "
                                 "forward_context.py:89-114 at v0.11.0: the DP padding all-reduces on the DP device "
                                 "group (NCCL) unless VLLM_DISABLE_NCCL_FOR_DP_SYNCHRONIZATION"),
    Era("0.11.1", (False, True), "the same in every wheel v0.11.1-v0.33.0 (V1 model runner): the snapshot after "
                                 "init_worker_distributed_environment (gpu_worker.py:224/240 at v0.11.1-v0.11.2, "
                                 ":216/232 v0.12.0, :263/282 v0.18.0-v0.20.2, :504/541 v0.33.0); `_dummy_run` pads "
                                 "through coordinate_batch_across_dp (gpu_model_runner.py:3718 at v0.11.1; by "
                                 "_determine_batch_execution_and_padding from v0.12.0, :4064 v0.13.0, :5558 v0.33.0), "
                                 "whose all-reduce takes the DP device group unless disable_nccl_for_dp_synchronization "
                                 "(v1/worker/dp_utils.py:24/30 at v0.11.1, :23/29 v0.13.0-v0.19.1, :21/27 "
                                 "v0.20.0-v0.27.1, :42/48 v0.30.0-v0.33.0)"),
))  # fmt: skip
# Whether a dense model's DP ranks run as independent engines of DP size 1 (no DP group of more than one rank, no
# padding across ranks): vLLM's `is_moe` is false
DENSE_RANKS_INDEPENDENT: Eras[bool] = Eras((
    Era("", False, "v1/engine/core.py:847-853 at v0.13.0: every DP rank runs DPEngineCoreProc"),
    Era("0.14.0", True, "v1/engine/core.py:916-927 at v0.14.0 ('Non-MoE DP ranks are completely independent, so treat "
                        "like DP=1': data_parallel_size = 1 in each engine core; :1546-1555 at v0.33.0, every wheel "
                        "between alike)"),
))  # fmt: skip
# The V2 model runner (`runner_eras.runs_v2`) syncs the DP padding on the Gloo CPU group at every release read: no
# torch NCCL communicator on the DP device group in its profile
V2_PADDING_SOURCE = ("v1/worker/gpu/dp_utils.py `dispatch_cg_and_sync_dp`: group = get_dp_group().cpu_group (:31 at "
                     "v0.22.0, :32 v0.24.0-v0.27.1, :55 v0.29.0, :66 v0.31.0-v0.32.0), cpu_all_reduce_ (:79 at "
                     "v0.33.0); model_runner.py `_dummy_run` runs execute_model")
# Whether the shared experts run before the routed ones (their output held through them) or after (v0.11.2:
# `forward_impl` calls them after `quant_method.apply`, fused_moe/layer.py:1757-1799; before again at v0.12.0, :1944)
SHARED_FIRST: Eras[bool] = Eras((
    Era("", True, "fused_moe/layer.py:2008-2013 at v0.11.0: shared_output before the dispatch"),
    Era("0.11.1", False, "fused_moe/layer.py:1757-1799 at v0.11.2 (v0.11.1's the same): after the routed experts"),
    Era("0.12.0", True, "fused_moe/layer.py:1944 at v0.12.0: 'Run shared experts before matrix multiply'"),
))  # fmt: skip
# Why FP8 block experts are not priced where the unquantized ones run the modular kernel: their backend is the install's
FP8_BACKEND_BY_INSTALL = ("the FP8 experts' kernel is the install's: DeepGEMM where the deep_gemm package is installed, "
                          "the GPU 9.0/10.0 and the experts' TP below 8 unless VLLM_MOE_USE_DEEP_GEMM, else Triton "
                          "(fused_moe/oracle/fp8.py:111-150 at v0.14.0, 'DeepGEMM backend requested but not available' "
                          "falls through), each with its own buffers: not read")
FP8_SCALE_GROUP = 128  # per_token_group_quant_fp8: one float32 scale per 128 inputs (the block's columns)
SCALE_BYTES = 4


class DpGather(BaseModel):
    """Whether a launch's gathered MoE batch and DP communicators are priced, and why not where they are not."""

    model_config = ConfigDict(frozen=True)

    priced: bool
    why: str


def dispatch_backend(version: ResolvedVersion, settings: LaunchSettings) -> str | None:
    """The all-to-all a DP launch's MoE layers dispatch with: --all2all-backend (less one the release removed,
    `REMOVED_BACKENDS`, which falls back to 'allgather_reducescatter'), else the release's default."""
    named = settings.flags.get("all2all-backend")
    if not isinstance(named, str) or not named:
        return DISPATCH_ERAS.era(version).value
    return "allgather_reducescatter" if named.lower() in REMOVED_BACKENDS.era(version).value else named.lower()


def _on_one_nvlink_node(layout: ParallelLayout, gpu_name: str | None, settings: LaunchSettings) -> bool:
    """Whether the DP ranks share one node of NVLink GPUs, where the TP group's fitted parts were measured."""
    local = settings.flags.get("data-parallel-size-local")
    spread = settings.flags.get("nnodes") not in (None, "1") or (isinstance(local, str) and local != str(layout.dp))
    return not spread and gpu_model_key(gpu_name) in NVLINK_GPUS


def dp_gather(model: ModelSpec, layout: ParallelLayout, version: ResolvedVersion, gpu_name: str | None,
              settings: LaunchSettings) -> DpGather | None:  # fmt: skip
    """None where there is nothing to gather (one replica, a dense model); else whether kvtop prices it here."""
    if layout.replicas < 2 or model.moe is None:
        return None
    era, backend = PRICED_ERAS.era(version), dispatch_backend(version, settings)
    marlin = marlin_dp_read(model, layout, version, gpu_name, settings, backend)
    if marlin is not None:  # MXFP4 experts on Marlin at v0.29.0 (dp_marlin.py): no DP communicator in the growth
        return DpGather(priced=True, why=f"vLLM {version.label}: the MXFP4 Marlin experts' layer, {marlin}")
    if model.quant.method == "mxfp4" and not MARLIN_DP_ERAS.at(version):  # the MXFP4 experts' DP layer: Marlin's era
        return DpGather(priced=False, why=f"vLLM {version.label}: the MXFP4 experts' DP layer "
                                          f"{MARLIN_DP_ERAS.era(version).source}")  # fmt: skip
    if not era.value:
        return DpGather(priced=False, why=f"vLLM {version.label}: {era.source}")
    if backend not in era.value:
        return DpGather(priced=False, why=f"the '{backend}' all-to-all: not read at vLLM {version.label}")
    capability = compute_capability(gpu_name)
    if capability is None or not (8, 0) <= capability < (10, 0) or not _on_one_nvlink_node(layout, gpu_name, settings):
        return DpGather(priced=False, why="priced on one node of NVLink GPUs of compute capability 8.x-9.0 only (the "
                                          "Triton experts; the TP group's communicators measured on NVLink)")  # fmt: skip
    quant = model.quant
    if not (quant.method == "none" or quant.method == "fp8" and quant.block == (128, 128)):
        return DpGather(priced=False, why=f"{quant.method} experts: only unquantized and FP8 128 × 128 block "
                                          "experts (fused_experts_impl) are read")  # fmt: skip
    modular = MODULAR_ERAS.era(version)
    if quant.method != "none" and modular.value:
        return DpGather(priced=False, why=f"{quant.method} experts at vLLM {version.label}: only the unquantized "
                                          f"modular kernel is read ({modular.source}); {FP8_BACKEND_BY_INSTALL}")  # fmt: skip
    if KERNEL_GATHERS.at(version) and runs_v2(version, model, settings) and not V2_PROFILE_READ.at(version):
        return DpGather(priced=False, why=f"vLLM {version.label}'s V2 model runner with the kernel-gathered MoE layer: "
                                          f"its profile not read with it ({V2_PROFILE_READ.era(version).source})")  # fmt: skip
    if quant.method == "fp8" and capability < (8, 9):
        return DpGather(priced=False, why="FP8 experts below compute capability 8.9 run Marlin: not read")
    deep_gemm = DEEP_GEMM_DEFAULT.era(version)
    if quant.method == "fp8" and deep_gemm.value and capability >= (9, 0):
        return DpGather(priced=False, why=f"FP8 block experts run DeepGEMM by default ({deep_gemm.source}): its "
                                          "workspaces not read")  # fmt: skip
    return DpGather(priced=True, why=f"vLLM {version.label}: {era.source}")


def dp_communicators(model: ModelSpec, layout: ParallelLayout, version: ResolvedVersion, gpu_name: str | None,
                     settings: LaunchSettings) -> DpGather | None:  # fmt: skip
    """None for one replica; else whether the DP group's communicators in the profile's non-torch growth are priced
    (a MoE's with its gathered batch, `dp_gather`; a dense model's where their release was read, on one NVLink node)."""
    if layout.replicas < 2:
        return None
    if model.moe is not None:
        return dp_gather(model, layout, version, gpu_name, settings)
    era = COMMUNICATOR_ERAS.era(version)
    if era.value is None:
        return DpGather(priced=False, why=f"vLLM {version.label}: {era.source}")
    if not _on_one_nvlink_node(layout, gpu_name, settings):
        return DpGather(priced=False, why="priced on one node of NVLink GPUs only (the TP group's communicators "
                                          "that stand in are measured there)")  # fmt: skip
    return DpGather(priced=True, why=f"vLLM {version.label}: {era.source}")


def gathered_forward_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int, backend: str = "naive", *,
                           chunk_rows: int = 32 * 1024, shared_first: bool = True) -> int:  # fmt: skip
    """One rank's MoE layer at its largest in the DP profile (module docstring): the gathered hidden states (the
    experts' in-place output), router logits and top-k, a chunk's two caches and FP8 inputs, beside the rank's held
    residual, normed input and shared experts' output (held through the routed experts where they run first:
    `SHARED_FIRST`); or the combine's output beside them (the naive all-reduce's gathered rows, reduce_scatterv's own
    rows: `COMBINE_GATHERED`), the larger. `chunk_rows`: the release's chunk (moe_workspace.CHUNK_ERAS)."""
    moe = model.moe
    assert moe is not None
    dtype, hidden, topk = model.dtype_bytes, model.hidden_size, moe.experts_per_token
    gathered = layout.replicas * tokens
    gate_up = gate_up_width(model, layout)
    chunk = min(gathered, chunk_rows)
    shared = tokens * hidden * dtype if moe.shared_intermediate_size else 0
    held = HELD_ROWS * tokens * hidden * dtype
    multicast = gathered * hidden * dtype + gathered * moe.num_routed_experts * dtype
    caches = chunk * topk * max(gate_up, hidden) * dtype + chunk * topk * (gate_up // 2) * dtype
    quantized = 0
    if model.quant.method == "fp8":
        quantized = sum(rows * width + rows * ceil_div(width, FP8_SCALE_GROUP) * SCALE_BYTES
                        for rows, width in ((chunk, hidden), (chunk * topk, gate_up // 2)))  # fmt: skip
    experts = multicast + gathered * topk * TOPK_BYTES + caches + quantized
    combine = multicast + (gathered if COMBINE_GATHERED[backend] else tokens) * hidden * dtype
    if shared_first:
        return held + shared + max(experts, combine)
    return held + max(experts, combine + shared)


def _priced(inputs: CalibrationInputs, *, dense_too: bool = False) -> bool:
    if inputs.model is None:
        return False
    find = dp_communicators if dense_too else dp_gather
    found = find(inputs.model, inputs.layout, inputs.version, inputs.gpu_name, inputs.settings)
    return found is not None and found.priced


def with_gathered_forward(activation: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The profile's peak, never below the MoE layer on the batch gathered over the DP ranks where it is priced."""
    if inputs.model is None or not _priced(inputs):
        return activation
    tokens = batch_limits(inputs)[0]
    backend = dispatch_backend(inputs.version, inputs.settings) or "naive"
    scatter_rows = not SCATTER_INTO_OUTPUT.at(inputs.version)  # the finalize's own-rows tensor (to v0.31.x)
    if marlin_dp_read(inputs.model, inputs.layout, inputs.version, inputs.gpu_name, inputs.settings, backend):
        layer = marlin_layer_bytes(inputs.model, inputs.layout, tokens, scatter_rows=scatter_rows)
        # none of it in the count (a quantized MoE's workspace is not counted: sampler_peak.moe_workspace_bytes)
        kept = marlin_workspace_bytes(inputs.model, inputs.layout, inputs.layout.replicas * tokens)
        return _with_kept_workspace(activation, inputs, tokens, layer, kept, "MXFP4 Marlin MoE layer", "dp_marlin.py")
    if KERNEL_GATHERS.at(inputs.version):  # the modular kernel gathers (from v0.20.0, dp_kernel_gather.py)
        layer = kernel_layer_bytes(inputs.model, inputs.layout, tokens, scatter_rows=scatter_rows)
        # the manager's one buffer grows from the one rank's rows the count holds (sampler_peak.py) to the gathered
        grown = kernel_workspace_bytes(inputs.model, inputs.layout, tokens) - experts_workspace_bytes(
            inputs.model, inputs.layout, tokens, CHUNK_ERAS.at(inputs.version))
        return _with_kept_workspace(activation, inputs, tokens, layer, grown, "MoE layer", "dp_kernel_gather.py")
    chunk = CHUNK_ERAS.at(inputs.version)  # VLLM_FUSED_MOE_CHUNK_SIZE's default; None: unchunked (moe_workspace.py)
    if MODULAR_ERAS.at(inputs.version):
        layer = modular_layer_bytes(inputs.model, inputs.layout, tokens, chunk)
    else:  # fused_experts_impl's releases, each chunked (v0.10.1-v0.13.0)
        assert chunk is not None
        layer = gathered_forward_bytes(inputs.model, inputs.layout, tokens, backend, chunk_rows=chunk,
                                       shared_first=SHARED_FIRST.era(inputs.version).value)  # fmt: skip
    if layer <= activation.bytes:
        return activation
    return activation.model_copy(update={
        "bytes": layer,
        "basis": f"{activation.basis}; the MoE layer on the batch gathered over {inputs.layout.replicas} DP ranks "
                 f"({inputs.layout.replicas} × {tokens:,} tokens: {gib(layer)}, dp_gather.py), larger",
    })  # fmt: skip


def _with_kept_workspace(activation: TermEstimate, inputs: CalibrationInputs, tokens: int, layer: int, grown: int,
                         what: str, where: str) -> TermEstimate:  # fmt: skip
    """The profile's peak with a modular kernel's DP layer over the workspace manager: the layer itself, or the peak
    counted without it plus what the workspace it leaves adds to the count (`grown`: the buffer stays through the
    rest of the profile), the larger."""
    grown = max(grown, 0)  # the buffer only grows (v1/worker/workspace.py)
    kept = activation.bytes + grown
    peak = max(layer, kept)
    if peak <= activation.bytes:
        return activation
    which = "the layer" if layer >= kept else "the peak counted without it plus the workspace it keeps"
    replicas = inputs.layout.replicas
    return activation.model_copy(update={
        "bytes": peak,
        "basis": f"{activation.basis}; the {what} on the batch gathered over {replicas} DP ranks ({replicas} × "
                 f"{tokens:,} tokens: {gib(layer)}, its workspace {gib(grown)} kept beyond the count's; {which}, "
                 f"{gib(peak)}: {where})",
    })  # fmt: skip


def padding_on_nccl(model: ModelSpec, version: ResolvedVersion, settings: LaunchSettings) -> bool:
    """Whether the DP padding's all-reduce makes torch's NCCL communicator on the DP device group in the profile: the
    release pads there (`COMMUNICATOR_ERAS`), the model runs on the V1 model runner (the V2 one pads on Gloo:
    `V2_PADDING_SOURCE`), and disable_nccl_for_dp_synchronization does not move it to the Gloo CPU group (the flags,
    else async scheduling where the release lets it: dp_flags.padding_on_gloo; whether async scheduling runs, on by
    default from v0.14.0 but off where vLLM turns it off, e.g. PP > 1 at v0.14.x: batching_async.py)."""
    made = COMMUNICATOR_ERAS.era(version).value
    if made is None or not made[1] or runs_v2(version, model, settings):
        return False
    return not padding_on_gloo(settings, version, async_scheduling(settings, version, model)[0])[0]


class DpCommunicatorsMade(BaseModel):
    """The DP group's NCCL communicators a launch makes inside the profile's non-torch growth (`communicators_made`)."""

    model_config = ConfigDict(frozen=True)

    pynccl: bool  # its pynccl communicator, made in the distributed init after the worker's snapshot
    torch_device: bool  # torch's communicator on its device group, made lazily at the group's first collective
    made_by: str  # that first collective
    source: str

    @property
    def words(self) -> str | None:
        """What is made, for a not-modelled line; None where nothing is (the padding on Gloo, no broadcast)."""
        made = (["its pynccl communicator is made after the worker's snapshot"] if self.pynccl else []) + (
            [f"{self.made_by} makes torch's NCCL communicator on its device group in the profile"]
            if self.torch_device else [])  # fmt: skip
        return " and ".join(made) or None


def communicators_made(model: ModelSpec, version: ResolvedVersion, settings: LaunchSettings) -> DpCommunicatorsMade | None:
    """Which of the DP group's NCCL communicators land in the profile's non-torch growth (`COMMUNICATOR_ERAS`; torch's
    where the padding all-reduces on NCCL, `padding_on_nccl`, or a MoE's naive dispatch broadcasts on the device
    group): the one answer the priced growth and the dense and MoE not-modelled lines read. None: not read."""
    era = COMMUNICATOR_ERAS.era(version)
    if era.value is None:
        return None
    independent = DENSE_RANKS_INDEPENDENT.era(version)
    if model.moe is None and independent.value:
        return DpCommunicatorsMade(pynccl=False, torch_device=False, made_by="", source=independent.source)
    broadcast = model.moe is not None and dispatch_backend(version, settings) == "naive"
    return DpCommunicatorsMade(
        pynccl=era.value[0], torch_device=broadcast or padding_on_nccl(model, version, settings),
        made_by="the naive dispatch's first broadcast" if broadcast else "the DP padding's all-reduce",
        source=era.source,
    )  # fmt: skip


def with_dp_communicators(estimate: TermEstimate, inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> TermEstimate:
    """The non-torch growth with the DP group's NCCL communicators that this release makes inside it, where priced
    (`communicators_made`, module docstring): the context fit's part beyond one rank stands in for its pynccl
    communicator, the non-torch fit's TP > 1 part for torch's on a device group, each ± its own size."""
    if inputs.model is None or not _priced(inputs, dense_too=True):
        return estimate
    made = communicators_made(inputs.model, inputs.version, inputs.settings)
    if made is None:
        return estimate
    stand_ins = ((fits.get("vllm.context"), made.pynccl, "pynccl communicator (made after the worker's snapshot)"),
                 (fits.get(non_torch_key(inputs)), made.torch_device,
                  f"torch communicator on its device group (made at {made.made_by})"))
    for fit, inside, what in stand_ins:
        if fit is None or not inside or len(fit.coefficients) < 2:
            continue
        part = round(max(fit.coefficients[1], 0.0) * GIB)
        estimate = estimate.plus(part, part, why=f"+ {gib(part)} ± as much for the DP group's {what}: "
                                                 f"{fit.key}'s TP part stands in (dp_gather.py)")  # fmt: skip
    return estimate
