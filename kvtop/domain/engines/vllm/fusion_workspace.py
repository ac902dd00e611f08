"""FlashInfer's all-reduce + RMSNorm fusion workspace: the part of vLLM's non-torch memory at TP > 1 the code sizes
(docs/engines/vllm.md §2, "non-torch memory").

What it is. From v0.18.0 vLLM turns on the all-reduce + RMSNorm fusion pass for TP > 1 on Hopper and Blackwell
(`enable_allreduce_rms_fusion`, config/vllm.py: "Enable if TP > 1 and Hopper/Blackwell and flashinfer installed";
v0.13.0 sets `fuse_allreduce_rms` False at every -O level). `AllReduceFusionPass.__init__`
(compilation/passes/fusion/allreduce_rms_fusion.py) builds FlashInfer's workspace when torch.compile first runs the
model, inside `profile_run`: after the init snapshot, outside torch's allocator, so `non_torch_increase` counts it
(utils/mem_utils.py `memory_profiling`). Its tokens: `max_token_num = min(max_size // (hidden × dtype bytes),
max_num_batched_tokens)` with `max_size` by compute capability and TP (`FI_ALLREDUCE_FUSION_MAX_SIZE_MB`): the
v0.19.0 starts of llm-d-planner's sweep print "Maximal number of tokens used by Flashinfer Allreduce Fusion: 6553"
(hidden 5,120, TP 2) and 128 / 204 / 256 / 292 at TP 4 (hidden 8,192 / 5,120 / 4,096 / 3,584), then "Auto-selected
flashinfer allreduce backend: trtllm" on H100.

What it holds. FlashInfer's TRT-LLM workspace (`trtllm_create_ipc_workspace_for_all_reduce_fusion`, comm/trtllm_ar.py,
read at flashinfer v0.6.6 and v0.6.8) allocates three buffers on each rank, each rounded to 2 MiB: the one-shot buffer
(TP × tokens × hidden × 2 B), the barrier flags (TP × 256 × 4 B) and three Lamport buffers (3 × TP × tokens × hidden ×
2 B, 4 B in float32). The unified API (`create_allreduce_fusion_workspace`, vllm#33985) passes `use_symm_dev_mem=True`,
and `SymmDeviceMemory._get_allocation_prop` (comm/mnnvl.py) then rounds each allocation, signal pad (2,048 B)
included, to the allocation granularity and then to the multicast granularity whether or not multicast is used.
That granularity is 512 MiB on the H100 starts: llm-d's v0.19.0 H100 starts print 0.24–0.26 GiB of non-torch memory at
TP 1 and 2.06–2.11 at TP 2 and 2.13–2.21 at TP 4 though the TP 2 buffers are 16 to 64 times the TP 4 ones: 3 ×
512 MiB held at both, and a TP 2 FlashInfer start's buffers sit 512 MiB apart per rank (sglang#18341's log: 24 MiB,
2 MiB and 68 MiB buffers at 0x5360000000 / 0x5380000000 …). The rest of the growth at TP > 1 (0.3–0.45 GiB: NCCL's
channels connected by the profile's first large all-reduces, as at v0.11.0 where no workspace exists) is fitted.

Where kvtop takes it. Hopper GPUs on NVLink (H100, H200, H20, H800, GH200); TP 2, 4 or 8 (`FI_SUPPORTED_WORLD_SIZES`);
compiled (not --enforce-eager, -O0 or -O1; a --compilation-config field other than its graph fields and
pass_config.fuse_allreduce_rms, e.g. its mode or the pass's max size, is not read: said not modelled). Pipeline and data
parallelism by release (`SPLIT_OFF_ERAS`): `enable_allreduce_rms_fusion` requires `data_parallel_size == 1 and
pipeline_parallel_size == 1` at v0.18.0 … v0.20.x (config/vllm.py:128-131 at v0.18.0, :131-134 at v0.19.0, :134-137 at
v0.20.0; vllm#35426, #34458), drops both at v0.21.0 (:119-139) and v0.22.0, gates PP > 1 off again at v0.23.0 (:129-156,
"Gated off for PP > 1": a deadlock) and drops it at v0.24.0 (:131-151) and v0.25.0 (:128-148). Which GPUs
(`BUILT_ON_ERAS`): the default turns the pass on for capability 9.0 and 10.0 exactly at v0.18.0, 9.0 and family 100
from v0.19.0, and `AllReduceFusionPass` sizes it from `FI_ALLREDUCE_FUSION_MAX_SIZE_MB`, whose rows are 90 and 100 at
v0.18.0 and 90, 100, 103 from v0.19.0 (allreduce_rms_fusion.py:54-65 / :54-70; no row: "not supported", no workspace,
whatever `fuse_allreduce_rms` says): SM 12.x, and GB300 / B300 (10.3) at v0.18.0, build none (0, said). Across nodes
(`get_node_count() > 1`: kvtop's span, or a GB200 / GB300 group wider than its 4-GPU tray) `_resolve_fi_ar_backend`
(flashinfer_all_reduce.py:92-110 at v0.19.0, :95-113 at v0.24.0) picks mnnvl, whose sizing there is not read: not
modelled. From v0.18.0 up to v0.22.0 each buffer is held at
the multicast granularity (above). From v0.22.0, whose flashinfer is 0.6.11.post2 (vllm#45917's list; v0.21.0 pins
0.6.8.post1; an install script of v0.23.0 pins 0.6.12, its own pin not read), the buffers are held at the allocation
granularity alone: flashinfer 0.6.10 to 0.6.14 allocate them through torch's symmetric memory (flashinfer#2955; trtllm_ar.py `_alloc_symm_buffer_bytes`,
torch_symmetric_memory.py `symm_mem.empty`), whose `CUDASymmetricMemoryAllocator::alloc` holds each buffer (rounded to
16 B) plus its 2,048 B signal pad (`signal_pad_size`) rounded to `CU_MEM_ALLOC_GRANULARITY_RECOMMENDED` (2 MiB on
Hopper); from 0.6.15 (read at 0.6.15 and 0.6.18rc7) `SymmDeviceMemory(enable_multicast=False,
allocate_signal_pads=False)` rounds the buffer plus `SIGNAL_PAD_SIZE` (2,048 B) to the same granularity, with no
multicast step. The buffers' sizes are unchanged (trtllm_ar.py's arithmetic, read at 0.6.11.post2 and 0.6.18rc7): for
Llama-3.1-8B at TP 2, 130 + 2 + 386 = 518 MiB per rank where v0.19.0 held 1,536. It is a floor: a multicast object
torch binds beside them (NVSwitch systems) and the 20 B control flags (`cudaMalloc(5 * 4)`) are not counted.
Blackwell's workspace at v0.19.0-v0.24.x: `fusion_blackwell_trtllm.py` (trtllm on one node); at v0.25.0-v0.26.x:
`fusion_blackwell.py` (mnnvl or its trtllm fallback); in other releases not read: left to the fitted remainder.

Hopper from v0.25.0 (`HOPPER_MNNVL_ERAS`). `_resolve_fi_ar_backend` picks mnnvl on one node too, with trtllm as the
fallback where the mnnvl workspace cannot be made ("likely no NVSwitch multicast support"): read at v0.25.0 and
v0.26.0 (`fusion_blackwell.py`), v0.27.1 (flashinfer_all_reduce.py:113-138, fallback :177), v0.30.0 (:135-160, :207),
v0.31.0 (:143-169, :215) and v0.33.0 (:142-177: "MNNVL decodes faster than TRTLLM on single-node NVSwitch systems
... on H200 and B200"); the pass asks `get_fi_ar_workspace` for it (allreduce_rms_fusion.py:1050 at v0.27.1
and v0.30.0). mnnvl's request is `fusion_blackwell.mnnvl_request_bytes` (three Lamport copies of the larger of
one-shot and two-shot). At v0.25.0-v0.26.x (flashinfer 0.6.13 / 0.6.14) it is held through torch symmetric memory at
the allocation granularity. From v0.27.0 (flashinfer 0.6.16.post3; 0.6.18.post1 at v0.30.0 and 0.7.0.post1 at
v0.31.0, read at both) it is one `McastGPUBuffer` (comm/trtllm_mnnvl_ar.py:104-154): a `SymmDeviceMemory` with
multicast on, whose `_get_allocation_prop` (comm/mnnvl.py:1015-1035) rounds request + signal pad to the allocation
and then to the multicast granularity (512 MiB on the H100, above): one 512 MiB allocation wherever the request is
smaller, at TP 4 and 8 as at TP 2, where trtllm's buffers at TP 4 or 8 take some tens of MiB. Taken on the H100 and H200
(NVSwitch boards, multicast as NCCL's NVLS finds it: `MULTICAST_HOPPER`), trtllm's bytes kept in the interval (a board
without multicast falls back); on the H20, H800 and GH200 (multicast not read) trtllm's bytes stay charged.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.compilation import level, stated_pass_config, unread_fields
from kvtop.domain.engines.vllm.compilation_aliases import fuse_allreduce_rms
from kvtop.domain.engines.vllm.fusion_blackwell import blackwell_era, blackwell_max_size, mnnvl_request_bytes
from kvtop.domain.engines.vllm.fusion_blackwell_trtllm import MULTICAST, trtllm_era
from kvtop.domain.engines.vllm.span import span
from kvtop.domain.gpus import GRACE_TRAY_GPUS, NVLINK_GPUS, compute_capability, gpu_model_key
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import MIB, mib

# trtllm_ar.py (<= 0.6.8) rounds each buffer to 2 MiB; CU_MEM_ALLOC_GRANULARITY_RECOMMENDED on Hopper too
ALLOCATION_GRANULARITY = 2 * MIB
# CU_MULTICAST_GRANULARITY_RECOMMENDED on the H100 starts: llm-d's v0.19.0 sweep and sglang#18341's buffer strides
# (NCCL's NVLS buffers are rounded to it too: nvls_buffers.py)
MULTICAST_GRANULARITY = 512 * MIB
SIGNAL_PAD_BYTES = 2048  # SymmDeviceMemory.SIGNAL_PAD_SIZE (kSIGNAL_PAD_SIZE)
BARRIER_FLAGS = 256  # trtllm_ar.py BarrierFlagCount: int32 flags per rank
LAMPORT_BUFFERS = 3
SUPPORTED_TP = (2, 4, 8)  # PassConfig.flashinfer_max_size: FI_SUPPORTED_WORLD_SIZES
# the Hopper boards whose NVSwitch takes multicast (NCCL's NVLS buffers there: nvls_buffers.py)
MULTICAST_HOPPER = frozenset({"H100", "H100-SXM", "H200"})
# FI_ALLREDUCE_FUSION_MAX_SIZE_MB's row 90 (Hopper), by TP, by release: what `PassConfig.flashinfer_max_size` returns
# (`default_fi_allreduce_fusion_max_size_mb` imports the pass's table); the v0.19.0 starts' token counts match it at
# TP 2 and 4. The field's docstring (config/compilation.py:161-176 at v0.20.0) says 1 MB at TP 8: not what runs.
HOPPER_MAX_SIZE_ERAS: Eras[tuple[tuple[int, float], ...]] = Eras((
    Era("", ((2, 64.0), (4, 2.0), (8, 0.5)), "FI_ALLREDUCE_FUSION_MAX_SIZE_MB[90]: compilation/collective_fusion.py:"
        "455-459 at v0.13.0; compilation/passes/fusion/allreduce_rms_fusion.py:51-55 at v0.16.0, :54-58 at v0.17.1-"
        "v0.19.0, :59-63 at v0.20.0, :66-70 at v0.21.0, :91-95 at v0.24.0, :104-108 at v0.27.1-v0.34.0"),
))  # fmt: skip

# How the release's FlashInfer allocates the workspace: None (no fusion by default), "multicast" (each buffer rounded
# to the multicast granularity) or "allocation" (each buffer and its signal pad to the allocation granularity alone)
WORKSPACE_ERAS: Eras[str | None] = Eras((
    Era("", None, "config/vllm.py: fuse_allreduce_rms off at every -O level (read at v0.13.0)"),
    Era("0.18.0", "multicast", "enable_allreduce_rms_fusion on for TP > 1 on Hopper/Blackwell; flashinfer <= 0.6.8's "
                               "SymmDeviceMemory rounds each buffer to the multicast granularity"),
    Era("0.22.0", "allocation", "flashinfer 0.6.11.post2 (vllm#45917): torch symmetric memory (flashinfer#2955, "
                                "CUDASymmetricMemoryAllocator::alloc); from 0.6.15 SymmDeviceMemory without multicast"),
))  # fmt: skip

# Hopper's backend on one node: None (trtllm, `WORKSPACE_ERAS`), "mnnvl_symm" (mnnvl through torch symmetric memory at
# the allocation granularity) or "mnnvl_multicast" (mnnvl's McastGPUBuffer at the multicast granularity)
HOPPER_MNNVL_ERAS: Eras[str | None] = Eras((
    Era("", None, "v0.19.0-v0.24.x: trtllm on one node (MNNVL_ACROSS_NODES_ERAS)"),
    Era("0.25.0", "mnnvl_symm", "_resolve_fi_ar_backend: mnnvl on one node, trtllm as fallback (read at v0.25.0 and "
                                "v0.26.0, fusion_blackwell.py); flashinfer 0.6.13 / 0.6.14: torch symmetric memory"),
    Era("0.27.0", "mnnvl_multicast", "flashinfer 0.6.16.post3 on: McastGPUBuffer (comm/trtllm_mnnvl_ar.py:154, "
                                     "comm/mnnvl.py:1015-1035 at 0.6.18.post1 and 0.7.0.post1); the resolver read at "
                                     "v0.27.1 flashinfer_all_reduce.py:113-138, v0.30.0 :135-160, v0.31.0 :143-169, "
                                     "v0.33.0 :142-177 (flashinfer 0.7.2.post1)"),
))  # fmt: skip

# enable_allreduce_rms_fusion's parallel gates by release: (PP > 1 turns it off, DP > 1 turns it off)
SPLIT_OFF_ERAS: Eras[tuple[bool, bool]] = Eras((
    Era("", (True, True), "config/vllm.py:128-131 at v0.18.0, :131-134 at v0.19.0, :134-137 at v0.20.0: "
                          "data_parallel_size == 1 and pipeline_parallel_size == 1"),
    Era("0.21.0", (False, False), "config/vllm.py:119-139 at v0.21.0 (and v0.22.0): no PP or DP gate"),
    Era("0.23.0", (True, False), "config/vllm.py:129-156 at v0.23.0: pipeline_parallel_size == 1 ('Gated off for PP > 1')"),
    Era("0.24.0", (False, False), "config/vllm.py:131-151 at v0.24.0, :128-148 at v0.25.0: no PP or DP gate"),
))  # fmt: skip
# the capabilities the pass builds a workspace on: the default's (config/vllm.py) and FI_ALLREDUCE_FUSION_MAX_SIZE_MB's
# rows (allreduce_rms_fusion.py), which an explicit fuse_allreduce_rms true cannot pass either
BUILT_ON_ERAS: Eras[frozenset[tuple[int, int]]] = Eras((
    Era("", frozenset({(9, 0), (10, 0)}), "v0.18.0: is_device_capability(100) or (90) (config/vllm.py:113-133); "
                                          "max-size rows 90, 100 (allreduce_rms_fusion.py:54-65)"),
    Era("0.19.0", frozenset({(9, 0), (10, 0), (10, 3)}), "from v0.19.0: is_device_capability_family(100) or (90) "
        "(config/vllm.py:116-136 at v0.19.0); max-size rows 90, 100, 103 (allreduce_rms_fusion.py:54-70)"),
))  # fmt: skip
# _resolve_fi_ar_backend picks mnnvl where get_node_count() > 1 (flashinfer_all_reduce.py:92-110 at v0.19.0); v0.18.0
# takes VLLM_FLASHINFER_ALLREDUCE_BACKEND, trtllm by default (envs.py:171)
MNNVL_ACROSS_NODES_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.18.0: VLLM_FLASHINFER_ALLREDUCE_BACKEND, trtllm by default (envs.py:171)"),
    Era("0.19.0", True, "flashinfer_all_reduce.py:92-110 at v0.19.0, :95-113 at v0.24.0: get_node_count() > 1 → "
                        "mnnvl; the quant workspace is None across nodes"),
))  # fmt: skip


class FusionWorkspace(BaseModel):
    """The workspace one rank holds (bytes), or why it is not modelled apart (`modelled` False, bytes 0)."""

    model_config = ConfigDict(frozen=True)

    bytes: int
    modelled: bool
    why: str
    # where the start picks between two workspaces the launch does not say (mnnvl or its trtllm fallback: Blackwell's,
    # Hopper's from v0.25.0), the other's bytes: the interval keeps it (0: one workspace)
    other_bytes: int = 0


def hopper_max_size(version: ResolvedVersion, tp: int) -> int | None:
    """`PassConfig.flashinfer_max_size` on Hopper at this TP (bytes: `int(MB × MiB)`), or None where the row has no
    entry (FI_SUPPORTED_WORLD_SIZES)."""
    size_mib = dict(HOPPER_MAX_SIZE_ERAS.at(version)).get(tp)
    return None if size_mib is None else int(size_mib * MIB)


def max_token_num(
    version: ResolvedVersion, hidden_size: int, element_bytes: int, tp: int, max_num_batched_tokens: int
) -> int | None:
    """`AllReduceFusionPass`'s tokens: Hopper's max size at this TP over a token's bytes, capped by the batch."""
    max_size = hopper_max_size(version, tp)
    if max_size is None:
        return None
    return _tokens(max_size, hidden_size, element_bytes, max_num_batched_tokens)


def _tokens(max_size: int, hidden_size: int, element_bytes: int, max_num_batched_tokens: int) -> int:
    """`max_token_num = min(max_size // (hidden × dtype bytes), max_num_batched_tokens)`: the tokens the pass sizes
    the workspace for, on every GPU (allreduce_rms_fusion.py; config/compilation.py on Blackwell)."""
    return min(max_size // (hidden_size * element_bytes), max_num_batched_tokens)


class _Payload(NamedTuple):
    """The all-reduce payload a workspace is sized for (tokens × hidden × element bytes) and how a reason says it."""

    tokens: int
    hidden: int
    element: int  # bytes of one element: 4 for a float32 model (float32 Lamport buffers), else 2
    shape: str

    def buffer_sizes(self, tp: int) -> tuple[int, int, int]:
        """trtllm_ar.py's three buffers for this payload (`buffer_sizes`)."""
        return buffer_sizes(tp, self.tokens, self.hidden, fp32_lamport=self.element == 4)


def _payload(model: ModelSpec | None, max_size: int, max_num_batched_tokens: int) -> _Payload:
    """The payload at the pass's max size (bytes): the model's hidden size and the tokens it fits (`_tokens`), or,
    the model's config not at hand, the largest payload the max size allows (1 token × max size / 2 B: as many bytes
    held)."""
    if model is None:
        return _Payload(1, max_size // 2, 2, "the model's config not at hand: the largest payload its max size allows")
    hidden, element = model.hidden_size, 4 if model.dtype_bytes == 4 else 2
    tokens = _tokens(max_size, hidden, element, max_num_batched_tokens)
    return _Payload(tokens, hidden, element, f"{tokens:,} tokens × hidden {hidden:,}")


def buffer_sizes(tp: int, tokens: int, hidden_size: int, fp32_lamport: bool = False) -> tuple[int, int, int]:
    """trtllm_ar.py's three buffers on each rank (bytes, before rounding): one-shot, flags, Lamport."""
    lamport_element = 4 if fp32_lamport else 2
    return (tp * tokens * hidden_size * 2, tp * BARRIER_FLAGS * 4,
            LAMPORT_BUFFERS * tp * tokens * hidden_size * lamport_element)  # fmt: skip


def held_bytes(sizes: tuple[int, ...], multicast_granularity: int = MULTICAST_GRANULARITY) -> int:
    """What SymmDeviceMemory allocates for the buffers: each to 2 MiB, plus its signal pad, to the allocation and then
    the multicast granularity."""
    held = 0
    for size in sizes:
        allocation = round_up(
            round_up(size, ALLOCATION_GRANULARITY) + SIGNAL_PAD_BYTES, ALLOCATION_GRANULARITY
        )
        held += round_up(allocation, multicast_granularity)
    return held


def allocation_held_bytes(
    sizes: tuple[int, ...], allocation_granularity: int = ALLOCATION_GRANULARITY
) -> int:
    """What flashinfer 0.6.10 on allocates for the buffers: each to 16 B, plus its 2,048 B signal pad, to the
    allocation granularity (torch's `CUDASymmetricMemoryAllocator::alloc`; `SymmDeviceMemory` without multicast)."""
    return sum(round_up(round_up(size, 16) + SIGNAL_PAD_BYTES, allocation_granularity) for size in sizes)


def fusion_workspace(inputs: CalibrationInputs, max_num_batched_tokens: int) -> FusionWorkspace | None:
    """The workspace this launch's ranks hold in vLLM's non-torch memory; None where the fusion pass builds none.
    `--compilation-config.pass_config.fuse_allreduce_rms` (compilation_aliases.py): false holds none; true where the
    release's default builds none at TP > 1 is named not modelled (the workspace left to the fitted remainder), save
    where vLLM builds none whatever it says (`_built_none`: 0, with the reason)."""
    stated = fuse_allreduce_rms(stated_pass_config(inputs.settings.flags, inputs.version), inputs.version)
    if stated is False:
        return None
    if WORKSPACE_ERAS.at(inputs.version) is None and not stated:
        return None
    none = _built_none(inputs, bool(stated))
    if none is not None:
        return none
    workspace = _by_default(inputs, max_num_batched_tokens)
    if stated and workspace is None and inputs.layout.tp in SUPPORTED_TP:
        return FusionWorkspace(bytes=0, modelled=False, why=(
            "pass_config.fuse_allreduce_rms true where this release's default builds no FlashInfer all-reduce fusion "
            "workspace on this launch: its size not modelled, in the fitted remainder"))  # fmt: skip
    return workspace


def _built_none(inputs: CalibrationInputs, stated: bool) -> FusionWorkspace | None:
    """0 bytes and why, where vLLM builds no workspace whatever fuse_allreduce_rms says at TP > 1: --enforce-eager
    (compilation off: config/vllm.py:787-793 at v0.18.0, :941-947 at v0.21.0, mode NONE: no pass runs), or a GPU without a max-size row
    among those the release turns the pass on for (`BUILT_ON_ERAS`); None where it may build one."""
    if inputs.layout.tp <= 1:
        return None
    if inputs.settings.enforce_eager and stated:
        return FusionWorkspace(bytes=0, modelled=True, why=(
            "no FlashInfer all-reduce fusion workspace: --enforce-eager turns torch.compile off (config/vllm.py: "
            "mode NONE), so pass_config.fuse_allreduce_rms true runs no pass"))  # fmt: skip
    if WORKSPACE_ERAS.at(inputs.version) is None:
        return None  # before v0.18.0 the GPUs the pass takes are not read
    capability = compute_capability(inputs.gpu_name)
    built_on = BUILT_ON_ERAS.era(inputs.version)
    if capability is None or capability[0] < 10 or capability in built_on.value:
        return None  # Ampere / Ada: the pass is off (None, as before); an unnamed GPU: not taken
    return FusionWorkspace(bytes=0, modelled=True, why=(
        f"no FlashInfer all-reduce fusion workspace: vLLM {inputs.version.label} builds none on capability "
        f"{capability[0]}.{capability[1]} ({built_on.source})"))  # fmt: skip


def spans_nodes(inputs: CalibrationInputs) -> str | None:
    """Why the launch's ranks span nodes (vLLM's get_node_count() > 1), or None: the span's --nnodes or data parallel
    over nodes (span.py), or more ranks than a GB200 / GB300 tray holds."""
    nodes = span(inputs.settings).nnodes
    if nodes > 1:
        return f"{nodes} nodes"
    tray = GRACE_TRAY_GPUS.get(gpu_model_key(inputs.gpu_name) or "")
    if tray is not None and inputs.layout.gpus > tray:
        return f"{inputs.layout.gpus} GPUs over {gpu_model_key(inputs.gpu_name)}'s {tray}-GPU trays"
    return None


def _by_default(inputs: CalibrationInputs, max_num_batched_tokens: int) -> FusionWorkspace | None:
    """The workspace where the launch leaves fuse_allreduce_rms to the optimization level's default."""
    layout, model, era = inputs.layout, inputs.model, WORKSPACE_ERAS.at(inputs.version)
    if era is None or layout.tp not in SUPPORTED_TP or inputs.settings.enforce_eager:
        return None
    pp_off, dp_off = SPLIT_OFF_ERAS.at(inputs.version)
    if pp_off and layout.pp > 1 or dp_off and layout.dp > 1:
        return None  # enable_allreduce_rms_fusion off for pipeline stages / data parallelism at this release
    stated = level(inputs.settings.flags, inputs.version)
    if stated is not None and stated < 2:
        return None  # OPTIMIZATION_LEVEL_00 / _01 (config/vllm.py, read at v0.33.0): fuse_allreduce_rms False
    capability = compute_capability(inputs.gpu_name)
    if capability is None or capability[0] < 9:
        return None  # enable_allreduce_rms_fusion: Hopper and Blackwell only (an unnamed GPU: not taken)
    blackwell = capability[0] == 10 and gpu_model_key(inputs.gpu_name) in NVLINK_GPUS
    # a compilation config field kvtop does not read (its mode, pass_config's other fields: the pass's max size, …)
    unread = unread_fields(inputs.settings.flags, inputs.version)
    configured = bool(unread)
    if blackwell and blackwell_era(inputs.version) is not None and not configured:
        return _blackwell(inputs, capability, max_num_batched_tokens)
    across = spans_nodes(inputs) if MNNVL_ACROSS_NODES_ERAS.at(inputs.version) else None
    if across is not None:
        return FusionWorkspace(bytes=0, modelled=False, why=(
            f"FlashInfer's all-reduce fusion workspace across nodes ({across}): _resolve_fi_ar_backend picks mnnvl "
            "(flashinfer_all_reduce.py:92-110 at v0.19.0), whose sizing there is not read: in the fitted remainder"))  # fmt: skip
    if blackwell and trtllm_era(inputs.version) is not None and not configured:
        return _blackwell_trtllm(inputs, capability, max_num_batched_tokens)
    if capability != (9, 0) or gpu_model_key(inputs.gpu_name) not in NVLINK_GPUS:
        return FusionWorkspace(bytes=0, modelled=False, why=(
            "FlashInfer's all-reduce fusion workspace on this GPU (its backend and multicast granularity not read) "
            "is in the fitted remainder"))  # fmt: skip
    if configured:
        return FusionWorkspace(bytes=0, modelled=False, why=(
            f"--compilation-config sets {', '.join(unread)}: whether it keeps the all-reduce fusion pass (and "
            "FlashInfer's workspace) is not read; the workspace is in the fitted remainder"))  # fmt: skip
    max_size = hopper_max_size(inputs.version, layout.tp)
    if max_size is None:
        return None
    payload = _payload(model, max_size, max_num_batched_tokens)
    mnnvl = HOPPER_MNNVL_ERAS.at(inputs.version)
    if mnnvl is not None and gpu_model_key(inputs.gpu_name) in MULTICAST_HOPPER:
        return _hopper_mnnvl(payload, layout.tp, max_size, model, mnnvl)
    sizes = payload.buffer_sizes(layout.tp)
    if era == "allocation":
        held = allocation_held_bytes(sizes)
        return FusionWorkspace(bytes=held, modelled=True, why=(
            f"FlashInfer's all-reduce + RMSNorm workspace at TP {layout.tp} ({payload.shape}): three buffers held as "
            f"{mib(held)}, each with its signal pad rounded to the {mib(ALLOCATION_GRANULARITY)} "
            f"allocation granularity (torch symmetric memory from flashinfer 0.6.10; a floor)"))  # fmt: skip
    held = held_bytes(sizes)
    return FusionWorkspace(bytes=held, modelled=True, why=(
        f"FlashInfer's all-reduce + RMSNorm workspace at TP {layout.tp} ({payload.shape}): three buffers held as "
        f"{mib(held)}, each rounded to the {mib(MULTICAST_GRANULARITY)} multicast granularity"))  # fmt: skip


def _mnnvl_request(payload: _Payload, tp: int, max_size: int, model: ModelSpec | None) -> int:
    """mnnvl's request for this payload; the model's config not at hand, the largest payload over TP tokens (two-shot's
    rounding to TP exact): as many bytes."""
    tokens, hidden = payload.tokens, payload.hidden
    if model is None:
        tokens, hidden = tp, max_size // (tp * payload.element)
    return mnnvl_request_bytes(tp, tokens, hidden, payload.element)


def _hopper_mnnvl(payload: _Payload, tp: int, max_size: int, model: ModelSpec | None, era: str) -> FusionWorkspace:
    """Hopper's workspace from v0.25.0 (`HOPPER_MNNVL_ERAS`): mnnvl's, with its trtllm fallback's bytes kept in the
    interval."""
    held = round_up(_mnnvl_request(payload, tp, max_size, model) + SIGNAL_PAD_BYTES, ALLOCATION_GRANULARITY)
    how = f"to the {mib(ALLOCATION_GRANULARITY)} allocation granularity (torch symmetric memory)"
    if era == "mnnvl_multicast":
        held = round_up(held, MULTICAST_GRANULARITY)
        how = f"one McastGPUBuffer at the {mib(MULTICAST_GRANULARITY)} multicast granularity"
    trtllm = allocation_held_bytes(payload.buffer_sizes(tp))
    return FusionWorkspace(bytes=held, modelled=True, other_bytes=trtllm, why=(
        f"FlashInfer's all-reduce + RMSNorm workspace at TP {tp} ({payload.shape}): mnnvl's three Lamport copies held "
        f"as {mib(held)}, {how} (vLLM's default backend on one node), or {mib(trtllm)} where the start falls back "
        "to trtllm (no NVSwitch multicast: not known before the start, kept in the interval)"))  # fmt: skip


def _blackwell(inputs: CalibrationInputs, capability: tuple[int, int], max_num_batched_tokens: int) -> FusionWorkspace | None:
    """Blackwell's workspace (`fusion_blackwell.py`): mnnvl's, with its trtllm fallback's bytes kept in the interval."""
    tp, model = inputs.layout.tp, inputs.model
    max_size = blackwell_max_size(capability, tp)
    if max_size is None:
        return None  # FI_SUPPORTED_WORLD_SIZES: 2, 4, 8, 16
    payload = _payload(model, max_size, max_num_batched_tokens)
    mnnvl = round_up(_mnnvl_request(payload, tp, max_size, model) + SIGNAL_PAD_BYTES, ALLOCATION_GRANULARITY)
    trtllm = allocation_held_bytes(payload.buffer_sizes(tp))
    return FusionWorkspace(bytes=mnnvl, modelled=True, other_bytes=trtllm, why=(
        f"FlashInfer's all-reduce + RMSNorm workspace at TP {tp} on Blackwell ({payload.shape}): mnnvl's three Lamport "
        f"copies held as {mib(mnnvl)} (vLLM's default backend), or {mib(trtllm)} where the start "
        f"falls back to trtllm (no NVSwitch multicast or fabric memory: not known before the start, kept in the "
        f"interval)"))  # fmt: skip


def _blackwell_trtllm(inputs: CalibrationInputs, capability: tuple[int, int], max_num_batched_tokens: int) -> FusionWorkspace | None:
    """Blackwell's trtllm workspace at v0.19.0-v0.24.x (`fusion_blackwell_trtllm.py`): the three buffers at the
    multicast granularity (flashinfer <= 0.6.8) or each with its signal pad at the allocation granularity."""
    tp, model = inputs.layout.tp, inputs.model
    max_size = blackwell_max_size(capability, tp)
    if max_size is None:
        return None  # FI_ALLREDUCE_FUSION_MAX_SIZE_MB has no row: the pass builds no workspace
    payload = _payload(model, max_size, max_num_batched_tokens)
    sizes = payload.buffer_sizes(tp)
    if trtllm_era(inputs.version) == MULTICAST:
        held = held_bytes(sizes)
        how = (f"each rounded to the {mib(MULTICAST_GRANULARITY)} multicast granularity (flashinfer <= 0.6.8; "
               "the H100's granularity, assumed on Blackwell)")
    else:
        held = allocation_held_bytes(sizes)
        how = f"each with its signal pad at the {mib(ALLOCATION_GRANULARITY)} allocation granularity"
    return FusionWorkspace(bytes=held, modelled=True, why=(
        f"FlashInfer's all-reduce + RMSNorm workspace at TP {tp} on Blackwell, trtllm on one node ({payload.shape}): three "
        f"buffers held as {mib(held)}, {how}"))  # fmt: skip
