"""vLLM 0.14.x's and 0.15.x's MoE layer on the batch gathered over the DP ranks (dp_gather.py prices it): the
unquantized experts run a modular kernel whose buffers come from the worker's workspace manager, not
`fused_experts_impl`'s caches.

Read in the v0.14.0 wheel (v0.14.1's workspace.py, fused_moe/ and gpu_model_runner.py byte-identical):
- `FusedMoE.forward_impl` still gathers dp × tokens rows of hidden states and router logits on the DP group (the
  unquantized method is no FusedMoEModularMethod, so `do_naive_dispatch_combine`: fused_moe/layer.py:1922-1962) and
  reduce-scatters the result into the rank's own rows (`combine`, :2024-2025); the shared experts run before the
  routed ones at the profile's batch (their stream only at ≤ VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD = 256 tokens,
  :891-914; envs.py:1588).
- The unquantized method runs FusedMoEModularKernel(MoEPrepareAndFinalizeNoEP, TritonExperts) in place
  (unquantized_fused_moe_method.py:281-287), but `forward` takes `torch.zeros_like(hidden_states)` as its output when
  `disable_inplace()` (torch ≥ 2.9: fused_moe/utils.py:381-382; the wheel requires torch==2.9.1) — one more gathered
  tensor (modular_kernel.py:1210-1213). The unquantized prepare does not copy (prepare_finalize.py:58-68), the
  TritonExperts finalize copies into that output (TopKWeightAndReduceNoOP, fused_moe.py:2321-2322).
- `_allocate_buffers` (modular_kernel.py:766-869) takes `TritonExperts.workspace_shapes` (fused_moe.py:2324-2339:
  workspace13 M × top-k × max(N/2, K), workspace2 M × top-k × max(N, K), output M × K, N the gate-up width a rank
  holds, in the model dtype, modular_kernel.py:530-534) from one buffer (`WorkspaceManager.get_simultaneous`, each
  part rounded up to 256 B, v1/worker/workspace.py): M the chunk, min(rows, VLLM_FUSED_MOE_CHUNK_SIZE), with the
  output of all the rows beside them unless one chunk's workspace13 holds it. In the profile run (no attention
  metadata: gpu_model_runner.py:4364-4368, 4743) with DP and EP it first asks for the worst chunk
  (VLLM_FUSED_MOE_CHUNK_SIZE rows, modular_kernel.py:797-821; `is_dp_ep`, :710-714). The buffer only grows (the old
  one freed first, workspace.py) and stays: one buffer for every layer.

Read again in the v0.15.0 wheel (v0.15.1's modular_kernel.py, prepare_finalize.py, oracle/unquantized.py,
workspace.py, all2all.py and `profile_run` byte-identical): the same layer, its code moved. `forward_impl` gathers as
before (fused_moe/layer.py:1792-1821), runs the shared experts first (:1847) and now calls select_experts itself on
the gathered rows (:1876) before the method's apply; the combine reduce-scatters (:1913). The method builds
FusedMoEModularKernel(MoEPrepareAndFinalizeNoEP, TritonExperts) through oracle/unquantized.py:160-167 (FlashInfer's
CUTLASS experts only with VLLM_USE_FLASHINFER_MOE_FP16 and never with DP, :64-70); the kernel zeroes its output under
torch 2.9.1 (modular_kernel.py:1321-1324, utils.py:379-380); `_allocate_buffers` (:875-980) asks the worst chunk
under DP + EP as before and puts one chunk's workspace13 and output in one buffer of the larger
(max(prod(workspace13), prod(output)), :963-970), the bytes above whenever top-k × max(N/2, K) ≥ K, as for every
routed model.

Read again in the v0.17.0 wheel (v0.17.1's runner/, modular_kernel.py, oracle/unquantized.py, the unquantized method,
workspace.py and all2all.py byte-identical; its fused_moe.py differs only in TritonExperts' activation list): the same
layer, moved into runner/default_moe_runner.py. The unquantized method keeps its kernel as `self.kernel`
(unquantized_fused_moe_method.py:73, :227), not `moe_kernel`, so `supports_internal_mk` is false
(fused_moe_method_base.py:33-36) and `forward_impl` gathers on the DP group itself (runner :586-725: shared experts first
:650, `dispatch_router_logits` :657, `select_experts` on the gathered rows :684, the AgRs combine :719); the kernel is
FusedMoEKernel(MoEPrepareAndFinalizeNoDPEPModular, TritonExperts, inplace=not disable_inplace) (oracle/unquantized.py:
243-252, Triton unless VLLM_USE_FLASHINFER_MOE_FP16: :171-189), its output zeroed under the wheel's torch 2.10.0
(modular_kernel.py:1519-1522, utils.py:344-345); `_allocate_buffers` (:1055) and `TritonExperts.workspace_shapes`
(fused_moe.py:2001) as at v0.16.0 but for type names; the chunk 16 × 1024 (envs.py:56, :824).
v0.18.0 (its wheel read; v0.18.1's runner/, modular_kernel.py, oracle/unquantized.py, fused_moe.py, the unquantized
method, workspace.py and all2all.py byte-identical, its wheel from PyPI): the same but unchunked: `_allocate_buffers` (modular_kernel.py:1009) takes all the rows as one
chunk, one buffer of max(workspace13, output) beside workspace2, and no longer asks the worst chunk in the profile under
DP + EP (moe_workspace.CHUNK_ERAS); the kernel's output `torch.empty_like` (:1350), the same bytes. v0.19.0 and v0.19.1
(both wheels read, their path byte-identical) hold v0.18.x's bytes: only the runner's forward_impl is split into helpers
(dp_gather.PRICED_ERAS); from v0.20.0 the kernel gathers itself (dp_kernel_gather.py).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.moe_workspace import ALIGNMENT, gate_up_width, triton_workspace_bytes
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div, round_up

# Whether the unquantized experts run the modular kernel over the workspace manager (this module) in a DP profile
MODULAR_ERAS: Eras[bool] = Eras((
    Era("", False, "fused_experts_impl's caches to v0.13.0 (dp_gather.py)"),
    Era("0.14.0", True, "unquantized_fused_moe_method.py:281-287 and modular_kernel.py:766-869 at v0.14.0 (v0.14.1 "
                        "byte-identical); oracle/unquantized.py:160-167 and modular_kernel.py:875-980 at v0.15.0 "
                        "(v0.15.1 byte-identical), :883 at v0.16.0, :1055 at v0.17.0, :1009 at v0.18.0 (unchunked); "
                        "read to v0.19.x; at v0.20.0-v0.24.x the kernel gathers itself (dp_kernel_gather.py), from "
                        "v0.25.0 not read (dp_gather.PRICED_ERAS)"),
))  # fmt: skip
TOPK_BYTES = 8  # select_experts: a float32 weight and an int32 id per row and chosen expert (dp_gather's too)
HELD_ROWS = 2  # the decoder layer's residual and normed input of the rank's own batch, held across its MoE


def workspace_bytes(model: ModelSpec, layout: ParallelLayout, rows: int, chunk_rows: int | None) -> int:
    """The workspace manager's buffer after one MoE layer on `rows` gathered rows: the larger of the worst chunk
    (with EP) and the layer's own ask (module docstring); `chunk_rows` None from v0.18.0, where the kernel takes all
    the rows as one chunk and asks no worst chunk (moe_workspace.CHUNK_ERAS)."""
    moe = model.moe
    assert moe is not None
    dtype, hidden, topk = model.dtype_bytes, model.hidden_size, moe.experts_per_token
    gate_up = gate_up_width(model, layout)

    def parts(chunk: int, out_rows: int | None) -> int:
        output = round_up(out_rows * hidden * dtype, ALIGNMENT) if out_rows is not None else 0
        return triton_workspace_bytes(chunk, topk, gate_up, hidden, dtype) + output

    chunk = rows if chunk_rows is None else min(rows, chunk_rows)
    one_chunk_holds_output = ceil_div(rows, chunk) == 1 and chunk * topk * max(gate_up // 2, hidden) >= rows * hidden
    asked = parts(chunk, None if one_chunk_holds_output else rows)
    worst = parts(chunk_rows, chunk_rows) if layout.ep > 1 and chunk_rows is not None else 0
    return max(asked, worst)


def modular_layer_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int, chunk_rows: int | None) -> int:
    """One rank's MoE layer at its largest in a v0.14.0-v0.19.x DP profile ('allgather_reducescatter', unquantized:
    `MODULAR_ERAS`, dp_gather.PRICED_ERAS): the gathered hidden states and router logits, the kernel's output and the
    workspace buffer (`workspace_bytes`; `chunk_rows` None from v0.18.0, unchunked), with the top-k during the experts
    or the reduce-scatter's own rows at the combine, beside the held residual, normed input and the shared experts'
    output."""
    moe = model.moe
    assert moe is not None
    dtype, hidden = model.dtype_bytes, model.hidden_size
    rows = layout.replicas * tokens
    gathered = rows * hidden * dtype + rows * moe.num_routed_experts * dtype
    output = rows * hidden * dtype
    workspace = workspace_bytes(model, layout, rows, chunk_rows)
    shared = tokens * hidden * dtype if moe.shared_intermediate_size else 0
    held = HELD_ROWS * tokens * hidden * dtype
    during = max(rows * moe.experts_per_token * TOPK_BYTES, tokens * hidden * dtype)
    return held + shared + gathered + output + workspace + during
