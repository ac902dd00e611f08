"""The CUTLASS fused-MoE workspace TensorRT-LLM's PyTorch backend keeps in torch after its warm-up (docs/engines/trtllm.md §26).

`FusedMoeRunner::getWorkspaceInfo` (cpp/tensorrt_llm/thop/moeOp.cpp; stored copies search-index ids 423924961 and
56159541360) caches one workspace per CUDA stream in `mStreamWorkspaces` as a torch tensor that only grows outside a
graph capture (`if (is_capturing || workspace.numel() < total_workspace_size) … torch::empty(…)`), and the runner hangs
off `MoERunner.runner_dict`, a class attribute shared by every MoE layer of one configuration (a 2026 unit test of the
tree says so, id 57477586757). The warm-up before the profiling baseline runs a pure-context pass of max_num_tokens
outside a capture (`Run warmup with 8192 tokens` in zufayu's 1.3.0rc10 logs, after the CUDA graphs' capture), so a
workspace for max_num_tokens rows stays allocated in torch and the line 'Memory used after loading model weights
(inside torch)' holds it beside the weights. TRTLLM-Gen allocates its buffers per call (`at::detail::empty_cuda` in
thop/fp4BlockScaleMoe.cpp, ids 46949670, 9020884683) and frees them, so it keeps none.

Its size is `CutlassMoeFCRunner::getWorkspaceDeviceBufferSizes` (cutlass_kernels/moe_gemm/moe_kernels.cu at 000dea27,
id 19518198733; id 3775219850 alike) plus moeOp.cpp's `src_to_dest_map` (top-k × rows × 4 B), with M = rows × top-k
routed rows, H the hidden size, I the expert intermediate per MoE-TP shard, a the activation's bytes (NVFP4 0.5, FP8
1, else 2), a gated activation and the GEMM output in the 16-bit backbone type:
- overlapped_gemm1_gemm2_inputs = max(M·H·a (permuted data), M·H·2 (fc2 result), M·I·a (fc1 result));
- overlapped_gemm1_gemm2_outputs = max(2·M·I·2 (the GLU intermediate), M·H·2, M·I·a); for a gated activation a never
  binds (M·H·2 and 2·M·I·2 are the larger), so per-tensor FP8 sizes as 16-bit activations do;
- FP8 block scales (`use_fp8_block_scaling`, a = 2): inputs max(M·H·2, M·I·2, M·H·2), outputs 2·M·I·2;
- the int maps (ids 40164402724, 66379864172): permuted_row_to_unpermuted_row, permuted_token_selected_experts,
  permuted_token_final_scales and src_to_dest_map (M × 4 B each), blocked_row_to_unpermuted_row (experts per rank ×
  rows × 4 B).
Not summed (left in the weights term's error, about 1/30 of the value): the block-scale factors of the permuted
activations (`fp4_act_scale`, about rows × H ÷ 16 B padded per expert), the TMA and GEMM workspaces (per-expert
descriptors), the FP8 block-scale GEMMs' `deepseek_fc_workspace` (`getWorkspaceSize` of the block-scale runner, not
read), the blocked expert counts (experts per rank × row blocks × 4 B), each buffer's 128 B alignment.
Which releases: the caching map is in every stored copy that carries gpt-oss's MXFP4 × FP8 path (id 423924961, the
1.1 era, August 2025); an older copy (id 5820830985) sized the workspace per call. The first release is not read in
a release tree: 1.1.0rc0 is assumed. No last release: PR #12407 (after 1.3.0rc10, whose logs still print `Running
torch.compile warmup`) releases the workspaces after the general warm-up (`MoERunner.clear_all_workspaces()`,
`FusedMoeRunner::clearWorkspaces`, id 56159541360), but its warm-up still ends with `_get_max_shape_warmup_requests`'
pure-context pass of max_num_tokens outside a capture (model_engine.py, ids 54626282323, 57353078453), which grows
the workspace again before the baseline; `CUDAGraphRunner.clear()` clears it again only when the estimating executor
is torn down, after the baseline (id 57477586757).
Not modelled, named: attention DP (`held_in_torch` None; the weights term's error widens by the workspace for the
gathered rows, `with_attention_dp_unmodelled`), a non-gated activation (every MoE kvtop reads is SwiGLU-gated).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.trtllm.budget import executor_max_num_tokens
from kvtop.domain.engines.trtllm.moe_weights import (
    CUTLASS,
    WEIGHT_ALIGNMENT,
    moe_backend,
    shard_width,
)
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_layers import MoeSpec
from kvtop.domain.rounding import ceil_div, round_up
from kvtop.domain.wording import gib

INT_BYTES = 4
BACKBONE_BYTES = 2  # the GEMM output (UnfusedGemmOutputType) is the 16-bit backbone type
ACTIVATION_BYTES = {"nvfp4": 0.5, "fp8": 1.0}  # `dtype_size` of the permuted activations; else the model dtype

CACHED_WORKSPACE_ERAS: Eras[bool] = Eras((
    Era("", False, "moeOp.cpp getWorkspaceInfo sized per call (older copy, search-index id 5820830985): freed"),
    Era("1.1.0rc0", True, "moeOp.cpp getWorkspaceInfo caches mStreamWorkspaces, grows only (ids 423924961, "
                          "56159541360); first release not pinned: the gpt-oss (1.1) era assumed; still held at the "
                          "baseline after PR #12407's clear_all_workspaces (the max-shape warm-up regrows it)"),
))  # fmt: skip


def _widths(model: ModelSpec, moe: MoeSpec, tp: int, ep: int) -> tuple[int, int]:
    """(hidden, intermediate per MoE-TP shard) as the runner sees them: MXFP4 experts at their padded sizes (§24,
    moe_weights.shard_width and rounding.round_up, the one count)."""
    moe_tp = max(tp // max(ep, 1), 1)
    if model.quant.method == "mxfp4":
        return round_up(model.hidden_size, WEIGHT_ALIGNMENT), shard_width(moe.expert_intermediate_size, moe_tp)
    return model.hidden_size, moe.expert_intermediate_size // moe_tp


def cutlass_workspace_bytes(model: ModelSpec, rows: int, tp: int, ep: int) -> int:
    """The workspace `FusedMoeRunner` caches for `rows` tokens on one rank (the code's arithmetic, main buffers)."""
    moe = model.moe
    if moe is None or rows <= 0:
        return 0
    hidden, inter = _widths(model, moe, tp, ep)
    experts_per_rank = ceil_div(moe.num_routed_experts, max(ep, 1))
    routed = rows * moe.experts_per_token  # num_moe_inputs
    quant = model.quant
    if quant.method == "fp8" and quant.block is not None:  # the DeepSeek FP8 block-scale runner, bf16 activations
        inputs = max(routed * hidden * BACKBONE_BYTES, routed * inter * BACKBONE_BYTES)
        outputs = 2 * routed * inter * BACKBONE_BYTES
    else:
        act = ACTIVATION_BYTES.get(quant.method, float(model.dtype_bytes))
        inputs = round(max(routed * hidden * act, routed * hidden * BACKBONE_BYTES, routed * inter * act))
        outputs = round(max(2 * routed * inter * BACKBONE_BYTES, routed * hidden * BACKBONE_BYTES, routed * inter * act))
    maps = 4 * routed * INT_BYTES + experts_per_rank * rows * INT_BYTES
    return int(inputs + outputs + maps)


def _cached(model: ModelSpec | None, inputs: CalibrationInputs) -> tuple[ModelSpec, int, bool] | None:
    """(model, warm-up rows, backend stated) where the CUTLASS runner caches its workspace: a MoE model, a caching
    release, the CUTLASS backend (stated or the default); else None."""
    if model is None or model.moe is None or not CACHED_WORKSPACE_ERAS.at(inputs.version):
        return None
    found = moe_backend(inputs.settings)
    if found is None or found[0] != CUTLASS:
        return None
    return model, executor_max_num_tokens(inputs.settings, inputs.context_length), found[1]


def held_in_torch(model: ModelSpec | None, inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) the CUTLASS MoE backend's cached workspace adds to what torch holds at the profiling baseline, for
    `weights_estimate(extra=…)`; None where the model has no MoE, the backend is not CUTLASS, the release sized it
    per call, or attention DP gathers the rows (not modelled: `with_attention_dp_unmodelled`)."""
    cached = _cached(model, inputs)
    if cached is None or inputs.layout.dp_attention:
        return None
    spec, rows, stated = cached
    nbytes = cutlass_workspace_bytes(spec, rows, inputs.layout.tp, inputs.layout.ep)
    if nbytes <= 0:
        return None
    said = "as the launch states" if stated else "the MoeConfig default, assumed"
    top_k = spec.moe.experts_per_token if spec.moe is not None else 0
    return nbytes, (f"{gib(nbytes)} CUTLASS MoE workspace ({said}) cached in torch after the warm-up of "
                    f"{rows:,} tokens × top-{top_k} (moeOp.cpp getWorkspaceInfo, "
                    "moe_kernels.cu getWorkspaceDeviceBufferSizes, §26)")  # fmt: skip


def attention_dp_bound_bytes(model: ModelSpec | None, inputs: CalibrationInputs) -> int:
    """Under attention DP the workspace kvtop does not model, at most: the one for the DP ranks' gathered rows
    (CutlassFusedMoE's default `moe_max_num_tokens` = max_num_tokens × dp_size, fused_moe_cutlass.py, ids 865441512,
    3966890195; an all-to-all routes this rank no more); 0 where no cached CUTLASS workspace applies."""
    cached = _cached(model, inputs)
    if cached is None or not inputs.layout.dp_attention:
        return 0
    spec, rows, _ = cached
    dp_size = max(inputs.layout.tp, 1)  # TensorRT-LLM's attention DP: one DP rank per TP rank (flags.py)
    return cutlass_workspace_bytes(spec, rows * dp_size, inputs.layout.tp, inputs.layout.ep)


def with_attention_dp_unmodelled(estimate: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The weights term with the CUTLASS MoE workspace under attention DP named as not modelled and its bound in the
    error (unchanged where it does not apply). The bound is an error the engine's rules add beside the book's fitted
    one (`beside`): a plan judged by fits that left its source out re-reads the fitted error and keeps this one."""
    bound = attention_dp_bound_bytes(inputs.model, inputs)
    if not bound:
        return estimate
    return estimate.plus(error_bytes=bound, beside=True, why=(
        f"± {gib(bound)} more: the CUTLASS MoE workspace cached in torch under attention DP is not modelled "
        f"(the MoE sees the {inputs.layout.tp} DP ranks' gathered tokens or what the all-to-all routes here; at most "
        "the workspace for DP × max_num_tokens rows, §26)"))  # fmt: skip
