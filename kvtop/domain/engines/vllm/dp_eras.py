"""vLLM's DP MoE layer by release: which all-to-all backends' gathered batch kvtop read and prices (dp_gather.py), and
where each era's code was read. The rest are named not modelled.

From v0.20.0 the unquantized experts' modular kernel gathers the DP ranks' rows itself (dp_kernel_gather.py): each
minor release's wheel v0.20.0-v0.34.0 (and v0.20.2, v0.22.1) was read for it against the one before.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras

# The all-to-all backends whose gathered batch was read, by release (the rest are named not modelled)
PRICED_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "not read before v0.10.1"),
    Era("0.10.1", frozenset({"naive"}), "read at v0.10.1.1 and v0.10.2: the naive all-to-all, fused_experts_impl, the "
                                        "snapshot before the distributed init"),
    Era("0.11.0", frozenset({"allgather_reducescatter"}),
        "read at v0.11.0: AgRsAll2AllManager (all2all.py:97-140), the same fused_experts_impl (fused_moe.py:1484-1706), "
        "the snapshot after the distributed init (gpu_worker.py:165-182)"),
    Era("0.11.1", frozenset({"allgather_reducescatter"}),
        "read at v0.11.1 (its fused_moe/, all2all.py, cuda_communicator.py, envs.py the same as v0.11.2's), v0.11.2 "
        "and v0.12.0: the same AgRsAll2AllManager (all2all.py:102-147 at v0.12.0), no modular kernel "
        "for it (fused_moe/all2all_utils.py:67-73), the unquantized method's fused_experts (unquantized_fused_moe_method"
        ".py:382-388 at v0.12.0); and v0.13.0: all2all.py and all2all_utils.py unchanged, reduce_scatterv's output the "
        "rank's own rows (cuda_communicator.py:222-231), fused_experts_impl's caches unchanged (fused_moe.py), the "
        "unquantized apply reads its routing from the layer and still calls fused_experts (unquantized_fused_moe_method"
        ".py:324-325), shared experts before the routed ones (fused_moe/layer.py:1940-1944)"),
    Era("0.14.0", frozenset({"allgather_reducescatter"}),
        "read at v0.14.0 (v0.14.1 byte-identical): the unquantized experts' modular kernel over the worker's "
        "workspace manager (dp_workspace.py), the same AgRs dispatch and combine (fused_moe/layer.py:1922-2025)"),
    Era("0.15.0", frozenset({"allgather_reducescatter"}),
        "read at v0.15.0 and v0.15.1 (their fused_moe/modular_kernel.py, prepare_finalize.py, oracle/unquantized.py, "
        "workspace.py, all2all.py's AgRs manager and profile_run byte-identical): v0.14.x's layer but for its bytes' "
        "code places (dp_workspace.py): select_experts moved into `FusedMoE.forward_impl` on the same gathered rows "
        "(fused_moe/layer.py:1792-1821 dispatch, :1847 shared experts first, :1876 select_experts, :1913 combine), "
        "oracle/unquantized.py:160-167 TritonExperts unless "
        "VLLM_USE_FLASHINFER_MOE_FP16 (:64-70, never with DP), one chunk's workspace13 and output one buffer "
        "(modular_kernel.py:963-970), the zeroed output under torch 2.9.1 (:1321-1324, utils.py:379-380)"),
    Era("0.16.0", frozenset({"allgather_reducescatter"}),
        "read at v0.16.0 against v0.15.1 (session 60): modular_kernel.py's _allocate_buffers byte-identical (:883), "
        "its forward's output zeros_like where the kernel is not in place (:1333; oracle/unquantized.py:187-197 "
        "builds TritonExperts with inplace=not disable_inplace, torch==2.9.1), TritonExperts.workspace_shapes the "
        "same (fused_moe.py:1953), workspace.py the same but for a type hint, AgRsAll2AllManager's dispatch renamed "
        "dispatch_router_logits (all2all.py), fused_moe/layer.py forward_impl: the gather (:1875), shared experts "
        "first (:1902), select_experts on the gathered rows (:1931), the combine (:1965); the V1 profile_run's "
        "_dummy_run(max_num_tokens) the same"),
    Era("0.17.0", frozenset({"allgather_reducescatter"}),
        "read at v0.17.0 and v0.17.1 (session 61, dp_workspace.py): v0.16.0's layer moved into runner/"
        "default_moe_runner.py (forward_impl :586-725: shared experts first :650, the AgRs gather :657, select_experts "
        "on the gathered rows :684, the combine :719), the unquantized method's kernel no internal MK "
        "(unquantized_fused_moe_method.py:73, fused_moe_method_base.py:33-36), TritonExperts over the workspace "
        "manager (oracle/unquantized.py:243-252), _allocate_buffers (modular_kernel.py:1055) and workspace_shapes "
        "(fused_moe.py:2001) as at v0.16.0, the output zeroed under torch 2.10.0 (:1519-1522)"),
    Era("0.18.0", frozenset({"allgather_reducescatter"}),
        "read at v0.18.0 and v0.18.1 (byte-identical path, session 61): v0.17.x's layer (runner/default_moe_runner.py :654-723, oracle/unquantized.py "
        "and the unquantized method unchanged but for device calls) with the experts unchunked (modular_kernel.py:1009, "
        "moe_workspace.CHUNK_ERAS) and an empty_like output (:1350)"),
    Era("0.19.0", frozenset({"allgather_reducescatter"}),
        "read at v0.19.0 and v0.19.1 (byte-identical path, session 61): forward_impl split into helpers "
        "(runner/default_moe_runner.py:772-840) holding v0.18.x's bytes: the AgRs gather (_maybe_dispatch :590-595), "
        "the shared experts on the rank's own rows (the layer's original input, :489) before select_experts on the "
        "gathered rows (:498), the combine (:617-620); modular_kernel.py, oracle/unquantized.py, the unquantized "
        "method, workspace.py and the AgRs manager as at v0.18.0; 'naive' (and 'pplx') fall back to "
        "'allgather_reducescatter' (dp_gather.REMOVED_BACKENDS)"),
    Era("0.20.0", frozenset({"allgather_reducescatter"}),
        "read at v0.20.0 and v0.20.2 (session 63, dp_kernel_gather.py): the unquantized method's kernel gathers "
        "through the naive DP prepare (prepare_finalize/naive_dp_ep.py:103-167) after select_experts on the rank's "
        "own rows (runner/moe_runner.py:462-476), TritonExperts over the workspace manager unchunked "
        "(modular_kernel.py:1203-1243); 'naive' (and 'pplx') fall back to 'allgather_reducescatter' "
        "(dp_gather.REMOVED_BACKENDS)"),
    Era("0.21.0", frozenset({"allgather_reducescatter"}),
        "read at v0.21.0, v0.22.0, v0.22.1, v0.23.0 and v0.24.0 against v0.20.2 (session 63, dp_kernel_gather.py): "
        "the same bytes, the code moved: TritonExperts into experts/triton_moe.py (workspace_shapes :129 at v0.21.0, "
        ":144 v0.22.x, :141 v0.23.0, :181 v0.24.0), the runner's do_naive_dispatch_combine (runner/moe_runner.py:688 "
        "/ :683 / :683 / :719) false for the unquantized kernel, naive_dp_ep.py's prepare (:112) and finalize "
        "(:186-209) as at v0.20.x but for LoRA's mapping, the output empty_like (modular_kernel.py:1395 / :1400 / "
        ":1385 / :1396, in place gone at v0.23.0; torch==2.11.0 at v0.22.1 and v0.24.0), AgRsAll2AllManager's "
        "dispatch and combine byte-identical to v0.20.0's"),
    Era("0.25.0", frozenset({"allgather_reducescatter"}),
        "read at v0.25.0, v0.26.0, v0.27.0, v0.28.0 and v0.29.0 against v0.24.0 (session 63, dp_kernel_gather.py): the "
        "same bytes: the oracle still moves FlashInfer CUTLASS back under DP and FlashInfer TRT-LLM is Blackwell's "
        "(oracle/unquantized.py:84 at each), TritonExperts.workspace_shapes the same (experts/triton_moe.py:181 / :181 / "
        ":197 / :202 / :218), _allocate_buffers over get_simultaneous (modular_kernel.py:1096 / :1105 / :1167 / :1167 / "
        ":1174; v0.28.0's output alias needs the gathered shape, never the own rows'), the output empty_like (:1413 / "
        ":1422 / :1472 / :1472 / :1479), the runner's do_naive_dispatch_combine false for it (runner/moe_runner.py:732 "
        "/ :732 / :783 / :776 / :791), naive_dp_ep.py byte-identical to v0.24.0's (prepare :112, finalize :187), "
        "AgRsAll2AllManager's sizes the same (all2all.py), workspace.py the same but for v0.28.0's lanes (one without "
        "DSpark); VLLM_MOE_SKIP_PADDING off (v0.26.0 only)"),
    Era("0.30.0", frozenset({"allgather_reducescatter"}),
        "read at v0.30.0 and v0.31.0 against v0.29.0 (session 63): the same bytes (oracle/unquantized.py:84 / :85, "
        "experts/triton_moe.py:230 / :238, modular_kernel.py get_simultaneous :1189 / :1158 and the empty_like output "
        ":1494 / :1476, runner/moe_runner.py:797 / :800, naive_dp_ep.py :112 / :111 prepare, :187 / :185 finalize; "
        "v0.31.0's unquantized maybe_roundup_sizes rounds for FlashInfer TRT-LLM only)"),
    Era("0.32.0", frozenset({"allgather_reducescatter"}),
        "read at v0.32.0, v0.33.0 and v0.34.0 (session 63): the finalize reduce-scatters into the layer's output "
        "(prepare_finalize/naive_dp_ep.py:241 / :280 / :280 `combine_into_output`; the combine input from NCCL "
        "symmetric memory only under VLLM_USE_NCCL_SYMM_MEM: dp_marlin.SCATTER_INTO_OUTPUT), the rest as at "
        "v0.31.0: oracle/unquantized.py:85, experts/triton_moe.py:238 / :252 / :290 (v0.34.0's sorted-A TMA path "
        "FP8 only), modular_kernel.py get_simultaneous :1141 / :1207 / :1267 with the fused output in the workspace, "
        "the output new_empty (:1469 / :1536 / :1596), runner/moe_runner.py:803 / :804 / :818, AgRsAll2AllManager "
        "byte-identical v0.32.0-v0.34.0, workspace.py's scratch the same (v0.34.0's get_retained used by no MoE); "
        "v0.33.0's DBO comm region (naive_dp_ep.py:153-172) a no-op without DBO"),
))  # fmt: skip
