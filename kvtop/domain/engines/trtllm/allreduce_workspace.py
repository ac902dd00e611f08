"""The all-reduce fusion workspace TensorRT-LLM's PyTorch backend allocates outside torch at TP > 1 (§24, §25).

`AllReduce.__init__` (and DeepSeek's `MoEAllReduce`) takes `get_allreduce_workspace(mapping)` for a TP group of more
than one rank unless its strategy is UB (later copies also NCCL and NCCL_SYMMETRIC; the default AUTO allocates it:
_torch/distributed/ops.py, stored copies ids 21128331692, 36732052596). It is one per mapping:
`CustomAllReduceHelper.allocate_allreduce_fusion_workspace(mapping, max_workspace_size_auto(tp))` allocates, on each
rank, IPC buffers of size × TP, barriers of 256 B × TP and Lamport buffers of 3 × size × TP (`IpcMemory`, cudaMalloc:
outside torch; the peers' buffers are mapped, not allocated). `max_workspace_size_auto` was 8 MB at TP > 2 and 16 MB
at TP ≤ 2 (plugin.py, id 196834873: 0.12–0.24 GiB a rank, within the §19 NCCL term's error), then a flat 64 MiB
(NVIDIA/TensorRT-LLM PR #9145, 2025-11-13: "Enlarged the AllReduce workspace size to 64MB" after the 8 MB hung;
_torch/distributed/allreduce_helper.py id 56991117771: "Default (67,108,864 = 64 MiB)", "lamport_size = 3 * size *
tp_size (per GPU)"): 0.50 GiB a rank at TP 2, 1.00 at TP 4, 2.00 at TP 8. The first release with it is not read in a
release tree: 1.2.0rc3, the first cut after the PR, is assumed (no TP > 1 start of 1.2.0rc2–rc5 in the corpus tells).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.wording import GIB

BARRIER_BYTES_PER_RANK = 256
LAMPORT_COPIES = 3  # the Lamport triple buffer, each size × TP

WORKSPACE_SIZE_ERAS: Eras[int | None] = Eras((
    Era("", None, "8 MB (TP > 2) / 16 MB (TP ≤ 2): plugin.py max_workspace_size_auto (id 196834873), in §19's error"),
    Era("1.2.0rc3", 64 * 2**20, "PR #9145 (2025-11-13): 64 MiB, allreduce_helper.py max_workspace_size_auto (id "
                                "56991117771); the first release after the PR assumed"),
))  # fmt: skip


def fusion_workspace_bytes(inputs: CalibrationInputs) -> int:
    """What one rank allocates outside torch for its TP group's all-reduce fusion workspace (0 at TP 1, or in an era
    whose smaller workspace the NCCL term's error holds)."""
    tp = inputs.layout.tp
    size = WORKSPACE_SIZE_ERAS.at(inputs.version)
    if tp <= 1 or size is None:
        return 0
    return size * tp + BARRIER_BYTES_PER_RANK * tp + LAMPORT_COPIES * size * tp


def with_fusion_workspace(estimate: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The profiled non-torch term with the all-reduce fusion workspace added (the code's arithmetic: its error
    unchanged)."""
    extra = fusion_workspace_bytes(inputs)
    if not extra:
        return estimate
    return estimate.model_copy(update={
        "bytes": estimate.bytes + extra,
        "basis": f"{estimate.basis}; + {extra / GIB:.2f} GiB all-reduce fusion workspace (4 × 64 MiB × TP "
                 f"{inputs.layout.tp}: IPC and Lamport buffers outside torch, allreduce_helper.py, §24)",
    })  # fmt: skip
