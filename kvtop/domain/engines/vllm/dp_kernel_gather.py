"""vLLM 0.20.0-0.34.x's unquantized MoE layer on the batch gathered over the DP ranks (dp_gather.py prices it through here):
the modular kernel gathers, not the runner; the experts route the rank's own rows first.

Read in the v0.20.0 wheel (vllm-0.20.0-cp38-abi3-manylinux_2_35_x86_64.whl, PyPI) against v0.19.0, and in v0.20.2's
(its oracle/unquantized.py, modular_kernel.py, fused_moe.py, the unquantized method and workspace.py byte-identical to
v0.20.0's; its naive_dp_ep.py, all2all.py, all2all_utils.py and runner differ only for MXFP4/NVFP4 paths):
- The unquantized method now builds its kernel through the oracle (unquantized_fused_moe_method.py:170-177,
  `moe_kernel`), so `supports_internal_mk` holds (fused_moe_method_base.py:34-37) and the runner no longer gathers
  (`do_naive_dispatch_combine`, runner/moe_runner.py:619-622). On CUDA the oracle tries FlashInfer TRT-LLM's BF16
  experts (Blackwell only: experts/trtllm_bf16_moe.py:46-52), then Triton, FlashInfer CUTLASS moved last under DP
  (oracle/unquantized.py:66-78, :280-287): TritonExperts on compute capability 8.x-9.0.
- Its prepare/finalize is the naive DP one with or without --enable-expert-parallel under 'allgather_reducescatter'
  (all2all_utils.py:110-127 without EP, :250 with it). The runner computes the router logits and `select_experts`
  on the rank's own rows (runner/moe_runner.py:462-476); the kernel's `apply` takes an output of the own rows
  (`torch.empty_like`: in place only where `disable_inplace()` is false, torch < 2.9, and the wheel requires
  torch==2.11.0: modular_kernel.py:1372-1377, utils.py:373-374, layer.py:511); the prepare all-gathers the hidden
  states and the top-k weights and ids over the DP group (prepare_finalize/naive_dp_ep.py:103-143,
  `AgRsAll2AllManager.dispatch`, all2all.py:84-122: dp × tokens rows, bf16 unquantized).
- `_fused_experts` asks `_allocate_buffers` for all the gathered rows at once (modular_kernel.py:1203-1243, no chunk):
  TritonExperts' workspace13 M × top-k × max(N/2, K) shares one buffer with the (M, K) output, beside workspace2
  M × top-k × max(N, K) (modular_kernel.py:1041-1102, fused_moe.py:1968-1983), N the gate-up width a rank holds, from
  `WorkspaceManager.get_simultaneous` (each part rounded up to 256 B; the buffer only grows, the old one freed first,
  and stays: v1/worker/workspace.py:92-190) — dp_workspace.workspace_bytes, unchunked.
- The finalize (TopKWeightAndReduceNoOP: Triton sums the top-k itself, fused_moe.py:1965-1966) reduce-scatters the
  gathered output into a new tensor of the rank's own rows and copies it into the output (naive_dp_ep.py:145-167,
  all2all.py:124-136), the gathered inputs still referenced: the layer's peak.
The V1 profile runs `_dummy_run(max_num_tokens)` on every rank (gpu_model_runner.py:5848) and the workspace stays
through the rest of it, so the peak is the larger of this layer and the profile's counted peak plus the workspace
(as dp_marlin.py's). The shared experts' output (the rank's own rows) is held through the layer. Not counted:
moe_align_block_size's sorted ids (under 1 MiB here).
Read again in the v0.21.0, v0.22.0, v0.22.1 (v0.22.0's path byte-identical), v0.23.0 and v0.24.0 wheels against v0.20.2:
the same bytes, the code moved (dp_eras.PRICED_ERAS: TritonExperts into experts/triton_moe.py, in place gone at
v0.23.0, the runner split out routed_experts.py at v0.24.0; the oracle still takes Triton under DP on 8.x-9.0,
oracle/unquantized.py:62-79 at v0.24.0).
Read again in the v0.25.0-v0.34.0 wheels, each against the one before (session 63; dp_eras.PRICED_ERAS has the lines):
the same bytes to v0.31.x; from v0.32.0 the finalize reduce-scatters straight into the layer's output
(naive_dp_ep.py:241 `combine_into_output` at v0.32.0, dp_marlin.SCATTER_INTO_OUTPUT), one tensor of own rows fewer.
The V2 model runner (v0.24.0-v0.28.x's listed MoE classes, every model from v0.29.0: runner_eras.runs_v2) profiles the
same dummy batch on every rank: `profile_run` runs `_dummy_run(max_num_tokens, skip_attn=True, is_profile=True)`
(v1/worker/gpu/model_runner.py:652 at v0.24.0, :851 v0.29.0, :1070 v0.34.0), eager, and `dispatch_cg_and_sync_dp`
hands the forward context each rank's own count (v1/worker/gpu/dp_utils.py: v0.24.0-v0.27.x byte-identical, v0.28.0
adds the query-length bound, v0.34.0 DBO's ubatches, off by default), so the kernel gathers dp × max_num_tokens rows as
on V1; its count holds the own rows' workspace (v2_profile.py), the same buffer V1's does (`V2_PROFILE_READ`).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.dp_workspace import HELD_ROWS, TOPK_BYTES, workspace_bytes
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec

# Who gathers the DP ranks' rows for the unquantized experts: the runner (hidden states and router logits, routed on
# the gathered rows: dp_workspace.py) or the modular kernel's prepare (hidden states and top-k, routed on own rows)
KERNEL_GATHERS: Eras[bool] = Eras((
    Era("", False, "the runner gathers to v0.19.x (runner/default_moe_runner.py:590-595 at v0.19.0)"),
    Era("0.20.0", True, "read at v0.20.0 and v0.20.2 (to v0.34.0: dp_eras.PRICED_ERAS): oracle/unquantized.py:324-366, all2all_utils.py:110-127 and "
                        ":250, prepare_finalize/naive_dp_ep.py:103-167, modular_kernel.py:1041-1102 and :1203-1243, "
                        ":1372-1377, fused_moe.py:1965-1983, v1/worker/workspace.py:92-190"),
))  # fmt: skip
# Whether the V2 model runner's profile with this layer was read (its DP dummy batch: module docstring)
V2_PROFILE_READ: Eras[bool] = Eras((
    Era("", False, "no MoE class runs V2 before v0.24.0 (runner_eras.runs_v2)"),
    Era("0.24.0", True, "read at v0.24.0, v0.25.0, v0.27.0, v0.28.0, v0.29.0, v0.33.0 and v0.34.0 (session 63): "
                        "v1/worker/gpu/model_runner.py profile_run :652 / :648 / :702 / :790 / :851 / :1022 / :1070, "
                        "`_dummy_run(self.max_num_tokens, ...)`, eager; v1/worker/gpu/dp_utils.py "
                        "sync_cudagraph_and_dp_padding :16 / :16 / :16 / :16 / :38 / :45 / :49 (v0.30.0-v0.32.0 read "
                        "with dp_marlin.MARLIN_DP_ERAS)"),
))  # fmt: skip
OWN_OUTPUTS = 2  # the kernel's empty_like output and the reduce-scatter's new tensor, each of the rank's own rows


def kernel_workspace_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int) -> int:
    """The workspace manager's buffer after one layer on the DP ranks' gathered rows (`tokens` each), unchunked."""
    return workspace_bytes(model, layout, layout.replicas * tokens, None)


def kernel_layer_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int, *, scatter_rows: bool = True) -> int:
    """One rank's MoE layer at its largest in a v0.20.0-v0.34.x DP profile (`tokens` its own rows; module docstring): the
    held residual and normed input, the router logits and top-k of its own rows, the kernel's output and the
    reduce-scatter's own rows (`scatter_rows`; none where it writes into the output from v0.32.0), the shared experts'
    output, the gathered hidden states and top-k, the workspace."""
    moe = model.moe
    assert moe is not None
    dtype, hidden, topk = model.dtype_bytes, model.hidden_size, moe.experts_per_token
    rows = layout.replicas * tokens
    shared = tokens * hidden * dtype if moe.shared_intermediate_size else 0
    outputs = OWN_OUTPUTS if scatter_rows else OWN_OUTPUTS - 1  # no reduce-scatter tensor of its own from v0.32.0
    own = ((HELD_ROWS + outputs) * tokens * hidden * dtype + tokens * moe.num_routed_experts * dtype
           + tokens * topk * TOPK_BYTES + shared)  # fmt: skip
    gathered = rows * hidden * dtype + rows * topk * TOPK_BYTES
    return own + gathered + kernel_workspace_bytes(model, layout, tokens)
