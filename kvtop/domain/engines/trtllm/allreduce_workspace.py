"""The all-reduce fusion workspace TensorRT-LLM's PyTorch backend allocates outside torch at TP > 1 (§24).

Where. `AllReduce.__init__` takes `get_allreduce_workspace(mapping)` for a TP group of more than one rank unless its
strategy (the LLM API's `allreduce_strategy`, default AUTO) is UB, NCCL or NCCL_SYMMETRIC (_torch/distributed/ops.py,
stored copy id 36732052596; an older copy, id 21128331692, skipped it for UB alone: kvtop skips all three at every
release, assumed; DeepSeek's `MoEAllReduce.__init__` asks for it whatever the strategy where the model builds one: not
modelled, such a launch under NCCL is planned without). One per mapping:
`CustomAllReduceHelper.allocate_allreduce_fusion_workspace(mapping, size)` makes three `IpcMemory` buffers on each
rank, IPC buffers of size × TP, barriers of 256 B × TP and Lamport buffers of 3 × size × TP, each `cudaMalloc`'d
rounded up to 2 MiB (`open_ipc_memory`: `align_size(size, 1 << 21)`; outside torch; the peers' buffers are mapped,
not allocated). `IpcMemory` allocates nothing unless every GPU of the TP group
can reach its peers' memory (`can_access_peer(mapping)`: `cudaDeviceCanAccessPeer` for each pair, False as soon as a
peer is on another node) and the group fits on one node (`tp_size <= gpus_per_node`): tensorrt_llm/_ipc_utils.py,
ids 60452086179 and 68444360583. kvtop takes peer access where NVLink joins the GPUs (`gpus.NVLINK_GPUS`, the notion
the vLLM rules use); a PCIe card is taken without it (GeForce cards have none; a PCIe board whose driver reports P2P
does allocate it: assumed not), and a node as `--gpus_per_node` says, else 4 GPUs on a GB200/GB300 tray and 8 on
any other board (assumed).

How much. `max_workspace_size_auto(tp)`: 16,000,000 B at TP ≤ 2 and 8,000,000 B above (tensorrt_llm/plugin/plugin.py,
2025 copy, id 196834873), then a flat 64 MiB (NVIDIA/TensorRT-LLM PR #9145, 2025-11-13, "Enlarged the AllReduce
workspace size to 64MB" after the 8 MB hung; _torch/distributed/allreduce_helper.py id 56991117771: "Default
(67,108,864 = 64 MiB)", "lamport_size = 3 * size * tp_size (per GPU)"). The first release with 64 MiB is not read in
a release tree: 1.2.0rc3, the first cut after the PR, is assumed. A rank holds 4 × size × TP + 2 MiB (the barriers
rounded up), 0.50 GiB at TP 2, 1.00 at TP 4, 2.00 at TP 8 in the 64 MiB era; 0.12–0.24 GiB before it.

How many (§31). `get_allreduce_workspace` caches one workspace per `Mapping`, and `MappingBase.__eq__` compares
moe_tp_size and moe_ep_size (mapping.py, id 61759801786). The attention builds its output projection's AllReduce on
a Mapping of its own with no MoE sizes (`mapping_o` in MLA and Attention, modules/attention.py ids 57454759589,
55090639134; an older copy, id 38582874, builds the whole attention on such a Mapping), so moe_tp = TP and moe_ep = 1
there; the model's Mapping matches it unless the MoE runs expert parallel. At EP > 1 each rank holds two workspaces
(with attention DP the attention's Mapping has TP 1 and allocates none: one). Measured: the zufayu B200 harness's
nvidia-smi log (`gpu_*.csv` at f655ecbe) holds each worker at 2,926–2,930 MiB at TP 4 / EP 4 and 4,976 MiB at
TP 8 / EP 8 before the weights are allocated: 2,050 MiB apart, two workspaces' growth of 2,048 (one: 1,024).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.deployment_flags import flag_int, flag_text
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.gpus import GRACE_TRAY_GPUS, NVLINK_GPUS, gpu_model_key
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import gib

IPC_ALIGNMENT = 1 << 21  # IpcMemory.open_ipc_memory: align_size(size, 1 << 21) before cudaMalloc
BARRIER_BYTES_PER_RANK = 256
LAMPORT_COPIES = 3  # the Lamport triple buffer, each size × TP
STRATEGY_FLAG = "allreduce_strategy"  # the LLM API's option (the YAML's key), default AUTO
NO_WORKSPACE_STRATEGIES = frozenset({"UB", "NCCL", "NCCL_SYMMETRIC"})  # ops.py AllReduce.__init__ (id 36732052596)
NODE_GPUS_FLAG = "gpus_per_node"  # trtllm-serve's --gpus_per_node (Mapping.gpus_per_node)
BOARD_GPUS = 8  # an HGX/DGX board's GPUs (assumed where the launch does not say)

# (size at TP ≤ 2, size at TP > 2), as `max_workspace_size_auto(tp)` returns it
WORKSPACE_SIZE_ERAS: Eras[tuple[int, int]] = Eras((
    Era("", (16_000_000, 8_000_000), "plugin.py CustomAllReduceHelper.max_workspace_size_auto: 16 MB at TP ≤ 2, "
                                     "8 MB above (2025 copy, id 196834873)"),
    Era("1.2.0rc3", (64 << 20, 64 << 20), "PR #9145 (2025-11-13): 64 MiB, allreduce_helper.py max_workspace_size_auto "
                                          "(id 56991117771); 1.2.0rc3, the first release after the PR, assumed"),
))  # fmt: skip


@dataclass(frozen=True)
class FusionWorkspace:
    """One rank's all-reduce fusion workspace: its bytes (0 where TensorRT-LLM allocates none) and why."""

    bytes: int
    why: str


def gpus_per_node(inputs: CalibrationInputs) -> tuple[int, str]:
    """The node's GPUs as `Mapping.gpus_per_node` takes them: `--gpus_per_node`, else the board's (assumed)."""
    stated = flag_int(inputs.settings, NODE_GPUS_FLAG, least=1)
    if stated is not None:
        return stated, "--gpus_per_node"
    key = gpu_model_key(inputs.gpu_name) if inputs.gpu_name else ""
    return GRACE_TRAY_GPUS.get(key, BOARD_GPUS), "assumed"


def fusion_workspace(inputs: CalibrationInputs) -> FusionWorkspace | None:
    """What one rank allocates outside torch for its TP group's all-reduce fusion workspace; None at TP 1."""
    tp = inputs.layout.tp
    if tp <= 1:
        return None
    strategy = (flag_text(inputs.settings, STRATEGY_FLAG) or "AUTO").upper()[:20]
    if strategy in NO_WORKSPACE_STRATEGIES:
        return FusionWorkspace(0, f"no all-reduce fusion workspace: allreduce_strategy {strategy} (ops.py)")
    node_gpus, said = gpus_per_node(inputs)
    if tp > node_gpus:
        return FusionWorkspace(0, f"no all-reduce fusion workspace: TP {tp} spans nodes of {node_gpus} GPUs ({said}; "
                                  "IpcMemory allocates only for a TP group on one node, _ipc_utils.py)")  # fmt: skip
    if inputs.gpu_name is not None and gpu_model_key(inputs.gpu_name) not in NVLINK_GPUS:
        return FusionWorkspace(0, "no all-reduce fusion workspace: a PCIe card, taken without peer access "
                                  "(can_access_peer, _ipc_utils.py; assumed where the driver reports P2P)")  # fmt: skip
    small, large = WORKSPACE_SIZE_ERAS.at(inputs.version)
    size = small if tp <= 2 else large
    one = (round_up(size * tp, IPC_ALIGNMENT) + round_up(BARRIER_BYTES_PER_RANK * tp, IPC_ALIGNMENT)
           + round_up(LAMPORT_COPIES * size * tp, IPC_ALIGNMENT))
    count = workspace_count(inputs)
    said_size, era = (("64 MiB", "64 MiB from PR #9145, 1.2.0rc3 assumed") if size == 64 << 20
                      else (f"{size:,} B", "plugin.py's size before PR #9145"))  # fmt: skip
    peers = "; no GPU named: NVLink assumed" if inputs.gpu_name is None else ""
    two = (f"two workspaces of {gib(one)}, the model's Mapping and the attention output's (EP {inputs.layout.ep}: "
           "the Mappings differ in moe_ep_size, §31), each " if count == 2 else "")  # fmt: skip
    return FusionWorkspace(count * one, f"{gib(count * one)} all-reduce fusion workspace outside torch: {two}"
                                        f"4 × {said_size} × TP {tp} in IpcMemory buffers rounded up to 2 MiB, + 2 MiB "
                                        f"of barriers (allreduce_helper.py; {era}{peers}; §24)")  # fmt: skip


def workspace_count(inputs: CalibrationInputs) -> int:
    """How many fusion workspaces a rank holds at TP > 1: one per distinct Mapping its AllReduce modules are built on,
    two where the MoE runs expert parallel (the model's Mapping carries moe_ep_size > 1, the attention output's
    `mapping_o` moe_ep 1) without attention DP (whose attention Mapping has TP 1 and allocates none), else one (§31)."""
    return 2 if inputs.layout.ep > 1 and not inputs.layout.dp_attention else 1


def fusion_workspace_bytes(inputs: CalibrationInputs) -> int:
    """The workspace's bytes on one rank (0 at TP 1 or where TensorRT-LLM allocates none)."""
    found = fusion_workspace(inputs)
    return found.bytes if found is not None else 0


def with_fusion_workspace(estimate: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The profiled non-torch term with the all-reduce fusion workspace added (the code's arithmetic: its error
    unchanged), or, where TensorRT-LLM allocates none at TP > 1, the basis saying why."""
    found = fusion_workspace(inputs)
    if found is None:
        return estimate
    return estimate.plus(found.bytes, why=f"+ {found.why}" if found.bytes else found.why)
