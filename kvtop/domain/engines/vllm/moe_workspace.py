"""The fused MoE's workspace: torch bytes vLLM's profile run leaves allocated, sized by the code (docs/engines/vllm.md
§2, "the startup line's split").

What it is. The modular fused-MoE kernel takes its two scratch buffers from the worker's `WorkspaceManager`
(fused_moe/modular_kernel.py `_allocate_buffers`, :1135-1174 at v0.27.1; `current_workspace_manager` in the file
from v0.13.0 to v0.33.0; the unquantized experts reach it from v0.14.0, docs/engines/vllm.md §12):
`get_simultaneous` rounds each buffer to 256 B and grows one torch tensor that the manager keeps
(v1/worker/workspace.py:92-190 at v0.27.1: `_ensure_workspace_size`, never shrunk). The profile run's forward over
max_num_batched_tokens grows it to its largest, and it stays allocated after the profile.

Where vLLM counts it. Up to v0.26.x the startup line's `peak activation` is torch's peak increase over the profile
(gpu_worker.py:526 at v0.26.0), which holds it. From v0.27.0 `consumed memory (weights + non-torch)` is the drop of
free memory from the worker's init snapshot to after the profile (utils/mem_utils.py:317-326 at v0.27.1) and
`peak activation` only the transient above what stays allocated (`transient_peak_headroom`, :323-325): the
workspace moves into the 'non-torch' figure (`startup_split.py`). The KV budget is the same either way.

Its bytes (TritonExperts, fused_moe/experts/triton_moe.py:197-212 at v0.27.1, fused_moe.py:1988-1990 at v0.19.0), M the profile's tokens, N the
gate-up width a rank holds (2 × expert intermediate ÷ the experts' TP split; whole experts under expert parallelism),
K the hidden size, in the activations' dtype (`workspace_dtype` returns it, modular_kernel.py:815-819):
    round256(M × top-k × max(N ÷ 2, K) × dtype) + round256(M × top-k × max(N, K) × dtype)
(the first buffer also holds the output, M × K, which is never larger). Only the Triton experts are taken: FP8
128 × 128 block checkpoints on compute capability 12.x (DeepGEMM fails there, 'Unknown SF transformation', so a start
runs with VLLM_USE_DEEP_GEMM=0; FlashInfer's CUTLASS block path is 9.0 only, flashinfer_cutlass_moe.py:165-174; vLLM's
CUTLASS FP8 experts take no block scales, cutlass_moe.py:313-318; oracle/fp8.py:395-410 then falls to TRITON) and on
9.0 without expert parallelism (oracle/fp8.py:113-122 puts TRITON first; :85-95 at v0.19.0). At v0.14.x the same
Triton experts run FP8 block checkpoints on 12.x (fused_moe/oracle/fp8.py:51-150: no other backend takes them there)
over the same manager; v0.15.0-v0.18.x are not read (`WORKSPACE_ERAS`). Other backends' workspaces are not read.

One truth for its bytes (`experts_workspace_bytes`): an unquantized MoE's Triton experts take the same two buffers, and
the sampler's count (`sampler_peak.py`, `v2_profile.py`) reads them from here. M is a chunk's tokens at most up to
v0.17.x (`CHUNK_ERAS`); `kept_workspace` says what a launch's profile keeps on either path, `fused_moe_workspace`
what is charged whole in the activation peak (the FP8 block path; an unquantized MoE's from v0.14.0, when its experts
moved onto the WorkspaceManager, to v0.16.x, where the sampler is not counted and the v1 fit's rows, v0.8-v0.13
starts, never held it: `UNQUANTIZED_CHARGED_ERAS`; from v0.17.0 it is counted under the sampler). telco-rag's
Qwen3-30B-A3B-2507 on an H200 at v0.15.0 (8,192 tokens, top-8, N = 1,536, K = 2,048): 2 × 8,192 × 8 × 2,048 × 2 B
= 0.50 GiB, of the 0.64 GiB its blind plan missed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.profile_run import batch_limits, intermediate_tensor_bytes
from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import gib

ALIGNMENT = 256  # WorkspaceManager.get_simultaneous: round_up(actual, 256) per buffer
FP8_BLOCK = (128, 128)  # the block scales the Triton FP8 path takes (kFp8Static128BlockSym)
# Where FP8 128 × 128 block experts were read to run Triton over the persistent WorkspaceManager, by release: the
# GPUs: "12.x", "9.0" (without expert parallelism only); empty where not read
WORKSPACE_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "not read before v0.14.0"),
    Era("0.14.0", frozenset({"12.x"}),
        "read at v0.14.0 (v0.14.1 byte-identical in quantization/fp8.py, fused_moe/ and utils/deep_gemm.py): on 12.x "
        "fused_moe/oracle/fp8.py:51-150 falls to TRITON (FlashInfer only on 9.0/10.x and with "
        "VLLM_USE_FLASHINFER_MOE_FP8, Marlin below 8.9, DeepGEMM only where utils/deep_gemm.py:69-77 finds 9.0/10.x, "
        "vLLM's CUTLASS not for block scales), make_fp8_moe_kernel :353-357 builds FusedMoEModularKernel("
        "MoEPrepareAndFinalizeNoEP, TritonExperts) (quantization/fp8.py:822, :1062), its buffers from the "
        "WorkspaceManager (modular_kernel.py:855-867) in the activations' dtype (:530-534); on 9.0 DeepGEMM where "
        "the deep_gemm package is installed and the experts' TP is below 8: the install's, not read"),
    Era("0.15.0", frozenset(), "not read at v0.15.0-v0.18.x: oracle/fp8.py picks the first supported kernel class, "
                               "DEEPGEMM's TritonOrDeepGemmExperts before TRITON (:145-156, :69-74 at v0.15.0), "
                               "whose device support and buffers on 12.x were not read"),
    Era("0.19.0", frozenset({"12.x", "9.0"}),
        "fused_moe/modular_kernel.py `current_workspace_manager().get_simultaneous` (v0.19.0-v0.33.0); "
        "oracle/fp8.py:85-95 at v0.19.0 (:113-122 at v0.27.1) puts TRITON first on 9.0"),
))  # fmt: skip
# Whether an unquantized MoE's workspace is charged whole in the profile's peak, by release: the Triton experts keep
# it in the WorkspaceManager past the forward and through the sampler from v0.14.0, whose sort-based sampler the
# v1 fit measures without it (its rows are v0.8-v0.13 starts, whose experts' caches die with each layer); from
# v0.17.0 the sampler's count holds it (sampler_peak.py) and the v17 fit's rows do too
UNQUANTIZED_CHARGED_ERAS: Eras[bool] = Eras((
    Era("", False, "fused_experts_impl's caches (fused_moe.py:1838-1843 at v0.13.0, called by the unquantized method's "
                   "forward_cuda, unquantized_fused_moe_method.py:325), freed when each layer returns"),
    Era("0.14.0", True, "FusedMoEModularKernel(MoEPrepareAndFinalizeNoEP, TritonExperts) (unquantized_fused_moe_method"
                        ".py:281-287 at v0.14.0; oracle/unquantized.py:160-167 at v0.15.0-v0.15.1, :188-195 at v0.16.0, "
                        "TRITON unless VLLM_USE_FLASHINFER_MOE_FP16) takes its buffers from the WorkspaceManager "
                        "(modular_kernel.py:855-867 at v0.14.0, :963-978 at v0.15.0, :971-986 at v0.16.0; "
                        "v1/worker/workspace.py:74-101 get_simultaneous, grow-only), kept through "
                        "`_dummy_sampler_run` (gpu_model_runner.py:4750 at v0.14.0, :4981 v0.15.0, :5175 v0.16.0)"),
    Era("0.17.0", False, "counted under the sampler from v0.17.0 (sampler_peak.py; the v17 fit's rows hold it)"),
))  # fmt: skip
# The most tokens the experts take at once (None: the whole batch, one chunk)
CHUNK_ERAS: Eras[int | None] = Eras((
    Era("", 32768, "chunks of min(M, VLLM_FUSED_MOE_CHUNK_SIZE), 32768 by default (envs.py:430 at v0.7.3, :779 at "
                   "v0.11.2)"),
    Era("0.12.0", 16 * 1024, "fused_moe/modular_kernel.py:1042-1050 at v0.17.0 (:862-870 at v0.15.1): chunks of "
                             "min(M, VLLM_FUSED_MOE_CHUNK_SIZE), 16 * 1024 by default (envs.py:790 at v0.12.0, "
                             ":824-825 at v0.17.0)"),
    Era("0.18.0", None, "modular_kernel.py:1189-1193 at v0.18.0 (:1308-1312 at v0.27.0): M_full passed as M_chunk, "
                        "'there is only one chunk' (:1061)"),
))  # fmt: skip


class MoeWorkspace(BaseModel):
    """The workspace one rank keeps after the profile run (bytes), or why it is not sized (`modelled` False)."""

    model_config = ConfigDict(frozen=True)

    bytes: int = 0
    modelled: bool = False
    why: str
    unquantized: bool = False  # the unquantized experts' (counted under the sampler, sampler_peak.py), not FP8 block


def triton_workspace_bytes(tokens: int, top_k: int, gate_up_width: int, hidden: int, dtype_bytes: int) -> int:
    """TritonExperts' two buffers as the WorkspaceManager holds them: each rounded up to 256 B."""
    first = tokens * top_k * max(gate_up_width // 2, hidden) * dtype_bytes
    second = tokens * top_k * max(gate_up_width, hidden) * dtype_bytes
    return sum(round_up(size, ALIGNMENT) for size in (first, second))


def experts_workspace_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int, chunk: int | None) -> int:
    """The Triton experts' workspace on one rank for `tokens` (at most `chunk` at once, `CHUNK_ERAS`); 0 without
    routed experts. N is the gate-up width the rank holds: 2 × (I ÷ the experts' TP split), I whole under expert
    parallelism (FusedMoEParallelConfig.make sets the experts' tp_size to 1, config.py at v0.13.0 and v0.33.0)."""
    if model.moe is None:
        return 0
    rows = tokens if chunk is None else min(tokens, chunk)
    return triton_workspace_bytes(rows, model.moe.experts_per_token, gate_up_width(model, layout), model.hidden_size,
                                  model.dtype_bytes)  # fmt: skip


def gate_up_width(model: ModelSpec, layout: ParallelLayout) -> int:
    """The gate-up width N one rank holds of an expert: 2 × (I ÷ the experts' TP split), I whole under expert
    parallelism (FusedMoEParallelConfig.make, config.py at v0.13.0 and v0.33.0)."""
    moe = model.moe
    assert moe is not None
    return 2 * (moe.expert_intermediate_size // (1 if layout.ep > 1 else max(layout.moe_shards, 1)))


def unquantized_experts(model: ModelSpec) -> bool:
    """Whether the model's routed experts run unquantized (taken as the Triton experts: sampler_peak.py)."""
    return model.moe is not None and MlpKind.MOE in model.layer_mlp and model.quant.method == "none"


def kept_workspace(inputs: CalibrationInputs) -> MoeWorkspace:
    """The workspace this launch's profile leaves allocated, on either Triton path (unquantized or FP8 block); else
    not modelled (`why`)."""
    model = inputs.model
    if model is None or model.moe is None:
        return MoeWorkspace(why="no routed experts")
    tokens, chunk = batch_limits(inputs)[0], CHUNK_ERAS.at(inputs.version)
    if unquantized_experts(model):
        size = experts_workspace_bytes(model, inputs.layout, tokens, chunk)
        return MoeWorkspace(bytes=size, modelled=True, unquantized=True,
                            why=f"unquantized Triton fused MoE at {tokens:,} tokens (counted under the sampler)")  # fmt: skip
    return fused_moe_workspace(inputs)


def fused_moe_workspace(inputs: CalibrationInputs) -> MoeWorkspace:
    """The workspace charged whole in the activation peak: the FP8 block path's, where the Triton experts run it, and
    an unquantized MoE's at v0.14.0-v0.16.x (`UNQUANTIZED_CHARGED_ERAS`); else not modelled (an unquantized MoE's is
    counted under the sampler from v0.17.0: `kept_workspace`)."""
    model = inputs.model
    if model is None or model.moe is None:
        return MoeWorkspace(why="no routed experts")
    if unquantized_experts(model):
        return _unquantized_charged(inputs)
    read = WORKSPACE_ERAS.era(inputs.version)
    if not read.value:
        return MoeWorkspace(why=f"vLLM {inputs.version.label}: the fused MoE's buffers not read ({read.source})")
    quant, capability, layout = model.quant, compute_capability(inputs.gpu_name), inputs.layout
    block_fp8 = quant.method == "fp8" and quant.block == FP8_BLOCK
    triton = (
        block_fp8
        and capability is not None
        and ((capability[0] == 12 and "12.x" in read.value)
             or (capability == (9, 0) and layout.ep == 1 and "9.0" in read.value))
    )  # fmt: skip
    if not triton:
        where = "12.x, or on 9.0 without expert parallelism" if "9.0" in read.value else "12.x"
        return MoeWorkspace(why=f"another fused-MoE backend's workspace (only FP8 block experts on {where}, are read "
                                f"at vLLM {inputs.version.label}: Triton)")  # fmt: skip
    tokens, _, _ = batch_limits(inputs)
    size = experts_workspace_bytes(model, layout, tokens, CHUNK_ERAS.at(inputs.version))
    return MoeWorkspace(bytes=size, modelled=True,
                        why=f"Triton fused MoE at {tokens:,} tokens: top-{model.moe.experts_per_token}, hidden "
                            f"{model.hidden_size:,} (WorkspaceManager, kept after the profile)")  # fmt: skip


def _unquantized_charged(inputs: CalibrationInputs) -> MoeWorkspace:
    """An unquantized MoE's workspace where it is charged whole (`UNQUANTIZED_CHARGED_ERAS`, one replica: a DP rank's
    experts run on the batch gathered over the ranks, whose layer dp_gather.py prices as the larger peak, the buffer
    it keeps through the sampler not added); else not modelled here."""
    model = inputs.model
    assert model is not None and model.moe is not None
    era = UNQUANTIZED_CHARGED_ERAS.era(inputs.version)
    if not era.value:
        return MoeWorkspace(why=f"vLLM {inputs.version.label}: the unquantized experts' workspace is not charged "
                                f"apart: {era.source}")  # fmt: skip
    if inputs.layout.replicas > 1:
        return MoeWorkspace(why="DP replicas: the experts' rows are the batch gathered over the ranks; dp_gather.py "
                                "prices that layer with its buffer at v0.14.0-v0.15.x, the buffer kept through the "
                                "sampler beside the fit is not added (not modelled)")  # fmt: skip
    tokens = batch_limits(inputs)[0]
    size = experts_workspace_bytes(model, inputs.layout, tokens, CHUNK_ERAS.at(inputs.version))
    return MoeWorkspace(bytes=size, modelled=True, unquantized=True,
                        why=f"unquantized Triton fused MoE at {tokens:,} tokens (WorkspaceManager, kept through the "
                            f"sort-based sampler, vLLM {inputs.version.label})")  # fmt: skip


def with_workspace(activation: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The profile's peak with the workspace charged whole where the code sizes it: the buffer stays allocated through
    the profile, under the forward's transient and the sampler's alike, so it is added to the peak the fit (its MoE
    feature 0 there) and the floors give, and taken off the fit's logged rows (calibration.py `fit_offset`)."""
    workspace = fused_moe_workspace(inputs)
    if not workspace.modelled:
        return activation
    return activation.plus(workspace.bytes,
                           why=f"+ the fused MoE's workspace, {gib(workspace.bytes)} ({workspace.why})")


def with_stage_buffers(activation: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The peak with the buffers the profile leaves allocated that the code sizes: the fused MoE's workspace
    (`with_workspace`) and, on pipeline stages, a later stage's intermediate tensors (profile_run.py)."""
    activation = with_workspace(activation, inputs)
    buffer = intermediate_tensor_bytes(inputs)
    if not buffer:
        return activation
    return activation.plus(buffer, why=f"+ a later pipeline stage's intermediate tensors, {gib(buffer)} "
                                       "(hidden states and residual at max_num_batched_tokens, kept after the profile)")
