"""vLLM's data-parallel MoE profile run, priced where its code was read: the MoE batch gathered over the DP ranks and
the DP group's NCCL communicators (vLLM 0.10.1-0.10.2, the naive all-to-all, Triton fused experts, NVLink GPUs).

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
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.calibration_eras import non_torch_key
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.gpus import NVLINK_GPUS, compute_capability, gpu_model_key
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import GIB

SOURCE = "fused_moe/layer.py `FusedMoE.forward_impl`, all2all.py `NaiveAll2AllManager`, fused_moe.py `fused_experts_impl`"
# Whether the gathered batch and the DP group's communicators are priced: the releases whose code was read
PRICED_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.10.1"),
    Era("0.10.1", True, "read at v0.10.1.1 and v0.10.2: the naive all-to-all, fused_experts_impl, the snapshot "
                        "before the distributed init"),
    Era("0.11.0", False, "from v0.11.0 the default all-to-all is 'allgather_reducescatter' and the snapshot follows "
                         "the distributed init: not read for sizes"),
))  # fmt: skip
FUSED_MOE_CHUNK = 32 * 1024  # VLLM_FUSED_MOE_CHUNK_SIZE, envs.py:616-617 at v0.10.1.1 (:629-630 at v0.10.2)
FP8_SCALE_GROUP = 128  # per_token_group_quant_fp8: one float32 scale per 128 inputs (the block's columns)
SCALE_BYTES = 4
TOPK_BYTES = 8  # select_experts: a float32 weight and an int32 id per token and chosen expert
HELD_ROWS = 2  # the decoder layer's residual and normed input of the rank's own batch, held across its MoE


class DpGather(BaseModel):
    """Whether a launch's gathered MoE batch and DP communicators are priced, and why not where they are not."""

    model_config = ConfigDict(frozen=True)

    priced: bool
    why: str


def dp_gather(model: ModelSpec, layout: ParallelLayout, version: ResolvedVersion, gpu_name: str | None,
              settings: LaunchSettings) -> DpGather | None:  # fmt: skip
    """None where there is nothing to gather (one replica, a dense model); else whether kvtop prices it here."""
    if layout.replicas < 2 or model.moe is None:
        return None
    if settings.flags.get("all2all-backend") not in (None, "naive"):
        return DpGather(priced=False, why="an all-to-all backend other than the naive one")
    era = PRICED_ERAS.era(version)
    if not era.value:
        return DpGather(priced=False, why=f"vLLM {version.label}: {era.source}")
    capability = compute_capability(gpu_name)
    if capability is None or not (8, 0) <= capability < (10, 0) or gpu_model_key(gpu_name) not in NVLINK_GPUS:
        return DpGather(priced=False, why="priced on NVLink GPUs of compute capability 8.x-9.0 only (the Triton "
                                          "experts; the TP group's communicators measured on NVLink)")  # fmt: skip
    quant = model.quant
    if not (quant.method == "none" or quant.method == "fp8" and quant.block == (128, 128)):
        return DpGather(priced=False, why=f"{quant.method} experts: only unquantized and FP8 128 × 128 block "
                                          "experts (fused_experts_impl) are read")  # fmt: skip
    if quant.method == "fp8" and capability < (8, 9):
        return DpGather(priced=False, why="FP8 experts below compute capability 8.9 run Marlin: not read")
    return DpGather(priced=True, why=f"vLLM {version.label}: {era.source}")


def gathered_forward_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int) -> int:
    """One rank's MoE layer at its largest in the DP profile (module docstring): the gathered hidden states (the
    experts' in-place output), router logits and top-k, a chunk's two caches and FP8 inputs, beside the rank's held
    residual, normed input and shared experts' output; or the combine's all-reduce output beside them, the larger."""
    moe = model.moe
    assert moe is not None
    dtype, hidden, topk = model.dtype_bytes, model.hidden_size, moe.experts_per_token
    gathered = layout.replicas * tokens
    split = 1 if layout.ep > 1 else max(layout.moe_shards, 1)  # EP: whole experts (config.py FusedMoEParallelConfig)
    gate_up = 2 * (moe.expert_intermediate_size // split)
    chunk = min(gathered, FUSED_MOE_CHUNK)
    held = HELD_ROWS * tokens * hidden * dtype + (tokens * hidden * dtype if moe.shared_intermediate_size else 0)
    multicast = gathered * hidden * dtype + gathered * moe.num_routed_experts * dtype
    caches = chunk * topk * max(gate_up, hidden) * dtype + chunk * topk * (gate_up // 2) * dtype
    quantized = 0
    if model.quant.method == "fp8":
        quantized = sum(rows * width + rows * ceil_div(width, FP8_SCALE_GROUP) * SCALE_BYTES
                        for rows, width in ((chunk, hidden), (chunk * topk, gate_up // 2)))  # fmt: skip
    experts = multicast + gathered * topk * TOPK_BYTES + caches + quantized
    combine = multicast + gathered * hidden * dtype
    return held + max(experts, combine)


def _priced(inputs: CalibrationInputs) -> bool:
    found = None if inputs.model is None else dp_gather(inputs.model, inputs.layout, inputs.version, inputs.gpu_name,
                                                        inputs.settings)  # fmt: skip
    return found is not None and found.priced


def with_gathered_forward(activation: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The profile's peak, never below the MoE layer on the batch gathered over the DP ranks where it is priced."""
    if inputs.model is None or not _priced(inputs):
        return activation
    tokens = batch_limits(inputs)[0]
    layer = gathered_forward_bytes(inputs.model, inputs.layout, tokens)
    if layer <= activation.bytes:
        return activation
    return activation.model_copy(update={
        "bytes": layer,
        "basis": f"{activation.basis}; the MoE layer on the batch gathered over {inputs.layout.replicas} DP ranks "
                 f"({inputs.layout.replicas} × {tokens:,} tokens: {layer / GIB:.2f} GiB, dp_gather.py), larger",
    })  # fmt: skip


def with_dp_communicators(estimate: TermEstimate, inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> TermEstimate:
    """The non-torch growth with the DP group's two NCCL communicators where priced (module docstring): the context
    fit's part beyond one rank and the non-torch fit's TP > 1 part stand in, each ± its own size."""
    if not _priced(inputs):
        return estimate
    context, growth = fits.get("vllm.context"), fits.get(non_torch_key(inputs))
    stand_ins = ((context, "pynccl communicator (made after the worker's snapshot)"),
                 (growth, "torch communicator on its device group (made at the profile's first broadcast)"))
    for fit, what in stand_ins:
        if fit is None or len(fit.coefficients) < 2:
            continue
        part = round(max(fit.coefficients[1], 0.0) * GIB)
        estimate = estimate.plus(part, part, why=f"+ {part / GIB:.2f} GiB ± as much for the DP group's {what}: "
                                                 f"{fit.key}'s TP part stands in (dp_gather.py)")  # fmt: skip
    return estimate
