"""FlashInfer's all-reduce + RMSNorm workspace on Blackwell (capability family 100) from v0.19.0 to v0.24.x: the
trtllm backend on one node (docs/engines/vllm.md §2, "non-torch memory").

When. `enable_allreduce_rms_fusion` (config/vllm.py:119-139 at v0.21.0; :126 at v0.19.0, :140 at v0.22.0, :148 at
v0.24.0) turns `fuse_allreduce_rms` on at -O2/-O3 for TP > 1 on CUDA with FlashInfer and capability family 100 or 9.0.
`AllReduceFusionPass.__init__` (compilation/passes/fusion/allreduce_rms_fusion.py:757-832 at v0.21.0) takes
`max_token_num = min(max_size // (hidden × dtype bytes), max_num_batched_tokens)` with the max size from
`FI_ALLREDUCE_FUSION_MAX_SIZE_MB` (:66-82 at v0.21.0; the same table at v0.19.0, v0.20.0, v0.22.0, v0.24.0):
10.0 → 64 / 32 / 1 MiB at TP 2 / 4 / 8, 10.3 → 64 / 64 / 2. v0.18.0 has no 10.3 row and turns the pass on for
capability 10.0 exactly, with the backend VLLM_FLASHINFER_ALLREDUCE_BACKEND names: not read here (fitted remainder).

Which backend. `_resolve_fi_ar_backend` (distributed/device_communicators/flashinfer_all_reduce.py:92-110 at v0.19.0,
:95-113 at v0.24.0) picks "trtllm" on one node ("mnnvl has issues with cudagraph", vllm#35772) and "mnnvl" where
`get_node_count() > 1`; the quant patterns' workspace (`get_fi_ar_quant_workspace`, always trtllm) aliases the same
one on one node, so one workspace is held, and returns None across nodes (:184-189 at v0.24.0). Across nodes (kvtop's
span, or a GB200 / GB300 group wider than its 4-GPU tray: `fusion_workspace.spans_nodes`) the mnnvl workspace's
sizing is not read: not modelled. The GB300 v0.21.0 starts print 'Initialized FlashInfer Allreduce norm fusion workspace with
backend=trtllm' at TP 4. From v0.25.0 mnnvl is the default (`fusion_blackwell.py`).

What it holds. The trtllm workspace's three buffers (`fusion_workspace.buffer_sizes`). flashinfer 0.6.6 (v0.19.0) and
0.6.8.post1 (v0.20.0 … v0.21.x, each wheel's METADATA) allocate each through SymmDeviceMemory, rounded to the
multicast granularity (`fusion_workspace.held_bytes`): 512 MiB as measured on the H100 starts, assumed on Blackwell
(its value not read). MiniMax-M2.5 (hidden 3,072) at TP 4 on the GB300, 8,192 batched tokens: min(64 MiB ÷ 6,144 B,
8,192) = 8,192 tokens; one-shot 4 × 8,192 × 3,072 × 2 = 192 MiB, flags 4 KiB, Lamport 576 MiB, held as 512 + 512 +
1,024 = 2,048 MiB; the logs leave 4.4 GiB beyond the plan's reserve at TP 4 against 1.9 at TP 1 on the same node.
flashinfer 0.6.11.post2 (v0.22.0) and 0.6.12 (v0.23.0, v0.24.0) hold each buffer with its signal pad at the 2 MiB
allocation granularity (`fusion_workspace.allocation_held_bytes`, torch symmetric memory: flashinfer#2955).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

MULTICAST, ALLOCATION = "multicast", "allocation"
TRTLLM_ERAS: Eras[str | None] = Eras((
    Era("", None, "v0.18.0: capability 10.0 only, no 10.3 row, the backend from VLLM_FLASHINFER_ALLREDUCE_BACKEND "
                  "(not read)"),
    Era("0.19.0", MULTICAST, "flashinfer_all_reduce.py:92-107 _resolve_fi_ar_backend: trtllm on one node; flashinfer "
                             "0.6.6 / 0.6.8.post1 round each buffer to the multicast granularity"),
    Era("0.22.0", ALLOCATION, "flashinfer 0.6.11.post2 / 0.6.12: each buffer and its signal pad at the allocation "
                              "granularity (torch symmetric memory)"),
    Era("0.25.0", None, "mnnvl by default: fusion_blackwell.py"),
))  # fmt: skip


def trtllm_era(version: ResolvedVersion) -> str | None:
    """How the release holds Blackwell's trtllm workspace (`TRTLLM_ERAS`); None where this module does not apply."""
    return TRTLLM_ERAS.at(version)
