"""FlashInfer's all-reduce + RMSNorm fusion workspace on Blackwell (compute capability family 100: B200, GB200, B300,
GB300), read at vLLM 0.25.0 and 0.26.0 with the FlashInfer each pins (0.6.13, 0.6.14).

When. `enable_allreduce_rms_fusion` (config/vllm.py:131-151 at v0.26.0) turns the pass on for TP > 1 on CUDA with
FlashInfer and capability family 100 or 9.0; world sizes 2, 4, 8, 16 (`PassConfig.flashinfer_max_size`,
config/compilation.py:195). Its tokens: `min(max_size // (hidden × dtype bytes), max_num_batched_tokens)` with the max
size by capability and TP (`FI_ALLREDUCE_FUSION_MAX_SIZE_MB`, allreduce_rms_fusion.py:104-122 at v0.26.0, the same at
v0.25.0): 10.0 → 64 / 32 / 1 / 64 MiB at TP 2 / 4 / 8 / 16, 10.3 → 64 / 64 / 2 / 64.

Which backend. `_resolve_fi_ar_backend` (distributed/device_communicators/flashinfer_all_reduce.py at v0.25.0 and
v0.26.0) picks "mnnvl" by default on one node and several (VLLM_FLASHINFER_ALLREDUCE_BACKEND=auto), and on one node
falls back to "trtllm" where the mnnvl workspace cannot be made ("likely no NVSwitch multicast support"); the quant
workspace reuses the same one. Whether the fallback happens (NVSwitch multicast, a GB200 container's IMEX channel for
fabric memory, the environment variable) is not on the launch line: an either-state, the mnnvl figure charged and the
trtllm one kept in the interval.

What each holds. mnnvl (`MNNVLAllReduceFusionWorkspace.__init__`, comm/trtllm_mnnvl_ar.py at flashinfer 0.6.14):
one buffer of max(one-shot, two-shot) bytes, one-shot = min(1 MiB // (TP × dtype × hidden), tokens) × hidden × TP ×
dtype (`MNNVL_ONE_SHOT_THRESHOLD` = 64 × 1024 × 8 × 2), two-shot = 2 × ceil(tokens ÷ TP) × TP × hidden × dtype
(`get_required_buffer_size_bytes`), three Lamport copies allocated at once through torch symmetric memory
(`_alloc_symm_buffer_bytes`, torch_symmetric_memory.py): the request plus its 2,048 B signal pad rounded to the
allocation granularity (2 MiB assumed on Blackwell as measured on Hopper). trtllm: the three buffers of
`fusion_workspace.buffer_sizes`, each with its signal pad at the same granularity (flashinfer 0.6.10-0.6.14).
From v0.27.0 (flashinfer 0.6.16.post3, read at 0.6.16.post3, 0.6.18 and 0.7.2.post1) the mnnvl workspace is a
`McastGPUBuffer`, a multicast object whose granularity on Blackwell is not read: not modelled there.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import MIB

# FI_ALLREDUCE_FUSION_MAX_SIZE_MB by compute capability and TP (allreduce_rms_fusion.py:104-122 at v0.26.0)
BLACKWELL_MAX_SIZE_MIB: dict[tuple[int, int], dict[int, float]] = {
    (10, 0): {2: 64.0, 4: 32.0, 8: 1.0, 16: 64.0},
    (10, 3): {2: 64.0, 4: 64.0, 8: 2.0, 16: 64.0},
}
MNNVL_ONE_SHOT_THRESHOLD = 64 * 1024 * 8 * 2  # trtllm_mnnvl_ar.py:52 (flashinfer 0.6.13, 0.6.14, 0.6.18)
MNNVL_LAMPORT_BUFFERS = 3  # MNNVLAllReduceFusionWorkspace.NUM_LAMPORT_BUFFERS

# How the release allocates Blackwell's workspace: "mnnvl_symm" (mnnvl by default, trtllm as fallback, both through
# torch symmetric memory) or None (not read: left to the fitted remainder)
BLACKWELL_ERAS: Eras[str | None] = Eras((
    Era("", None, "before v0.25.0 the backend's choice and FlashInfer's allocation on Blackwell are not read"),
    Era("0.25.0", "mnnvl_symm", "flashinfer_all_reduce.py _resolve_fi_ar_backend: mnnvl by default, trtllm on one node "
                                "where mnnvl fails; flashinfer 0.6.13 / 0.6.14 allocate through torch symmetric memory"),
    Era("0.27.0", None, "flashinfer 0.6.16.post3: the mnnvl workspace is a McastGPUBuffer (its multicast granularity "
                        "on Blackwell not read)"),
))  # fmt: skip


def blackwell_era(version: ResolvedVersion) -> str | None:
    """The release's Blackwell allocation (`BLACKWELL_ERAS`)."""
    return BLACKWELL_ERAS.at(version)


def blackwell_max_size(capability: tuple[int, int], tp: int) -> int | None:
    """The pass's max payload in bytes at this capability and TP; None where vLLM's table has none."""
    size_mib = BLACKWELL_MAX_SIZE_MIB.get(capability, {}).get(tp)
    return None if size_mib is None else int(size_mib * MIB)


def mnnvl_request_bytes(tp: int, tokens: int, hidden_size: int, element_bytes: int) -> int:
    """What `MNNVLAllReduceFusionWorkspace` asks of torch symmetric memory: three Lamport copies of the larger of the
    one-shot and two-shot buffers."""
    one_shot_tokens = min(MNNVL_ONE_SHOT_THRESHOLD // (tp * element_bytes * hidden_size), tokens)
    one_shot = one_shot_tokens * hidden_size * tp * element_bytes
    two_shot = 2 * round_up(tokens, tp) * hidden_size * element_bytes
    return MNNVL_LAMPORT_BUFFERS * max(one_shot, two_shot)
