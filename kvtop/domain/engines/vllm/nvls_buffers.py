"""NCCL's NVLink SHARP (NVLS) buffers: the part of V0-era vLLM's non-torch memory at TP 8 on NVSwitch Hopper that
NCCL's code sizes (docs/engines/vllm.md §2, "non-torch memory").

What it is. On more than two GPUs whose NVSwitch supports multicast (H100 and H200 SXM boards), NCCL 2.17 and later
set up NVLS for every communicator (`ncclNvlsInit`: `gpuCount <= 2` turns it off; `NCCL_NVLS_ENABLE` defaults on).
Through NCCL 2.21 `ncclNvlsSetup` runs inside `ncclCommInitRank` (init.cc `initTransportsRank`, read at v2.20.5 and
v2.21.5): each rank maps one unicast allocation bound to the multicast group (`nvlsGroupBindMem`: `cuMemCreate` of
`nvlsTotalSize` rounded to `CU_MULTICAST_GRANULARITY_RECOMMENDED`, `nvlsGetProperties`), where
`nvlsTotalSize = nChannels × 2 × (buffSize + memSize) × nHeads`, `memSize` 2 MiB (`NVLS_MEM_ALIGN_SIZE`) and
`buffSize` the SIMPLE protocol's buffer (4 MiB, `comm->buffSizes[NCCL_PROTO_SIMPLE]`) up to 2.20, `NVLS_CHUNKSIZE`
(128 KiB) × `NCCL_STEPS` (8) = 1 MiB from 2.21. From 2.22 the buffers are connected at first use
(`NCCL_RUNTIME_CONNECT`, `ncclNvlsBufferSetup` in group.cc): not taken here.

How many vLLM counts. V0's figure counts every communicator made after the worker's baseline, which it takes before
`init_worker_distributed_environment` (worker.py `init_device`, vLLM 0.7.3; v0.6.4 charges the device's whole used
memory; earlier V0 releases `init_gpu_memory` taken before the distributed init): the TP group's pynccl communicator
(`PyNcclCommunicator.__init__`: `ncclCommInitRank`) and the TP device group's torch communicator, which torch makes at
the first collective on it: the profile's first all-reduce the custom all-reduce does not take (above its 8 MiB
`max_size`; pynccl is disabled outside CUDA-graph capture). Two allocations per rank.

The sizes measured. vllm#9699 (8 × H200, Llama-3.1-405B at TP 8, vLLM of October 2024 on torch 2.4's NCCL 2.20.5)
prints `NVLS comm … headRank 3 nHeads 8 buffSize 4194304 memSize 2097152 nvlsPerRankSize 301989888 nvlsTotalSize
2415919104`: 24 channels, 8 heads, 2.25 GiB held as 2.5 GiB at the 512 MiB multicast granularity (the granularity
FlashInfer's workspace shows on H100, `fusion_workspace.py`); its GPU blocks with NVLS on (17,595) and off
(`NCCL_NVLS_ENABLE=0`, 227xx) differ by about 5,100–5,200 blocks of 16 tokens × 64,512 B, 4.9–5.0 GiB: the two
communicators' 2 × 2.5 GiB. With NCCL 2.21.5 (torch 2.5.1: vLLM 0.6.4–0.7.3) the same 24 channels and 8 heads need
1,152 MiB, held as 1.5 GiB each, 3 GiB for two.

Where kvtop takes it. vLLM 0.5.0–0.7.3 (the releases whose torch pins NCCL 2.20.5 or 2.21.5, before V1: torch 2.3–2.4
pin 2.20.5, 2.5.1 pins 2.21.5), TP 8 on one node of H100 or H200 (the channel and head counts the log printed; at
TP 3–7 NCCL's channels are not read and the buffers stay in the fitted remainder), no pipeline or data parallelism
(more communicators). Not modelled: H20 and H800 (whether their switches take multicast not read; nccl#892 shows an
H800 board with 0 NVLS channels), Blackwell (its granularity not read), `NCCL_NVLS_ENABLE=0` (an environment variable
a launch line does not carry).
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.fusion_workspace import MULTICAST_GRANULARITY, MULTICAST_HOPPER
from kvtop.domain.gpus import gpu_model_key
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import MIB, counted, figure, mib

MEM_SIZE = 2 * MIB  # NVLS_MEM_ALIGN_SIZE (transport/nvls.cc)
# vllm#9699's 8 x H200 line: nvlsPerRankSize 301,989,888 = 24 channels × 2 × (4 MiB + 2 MiB); nHeads 8
CHANNELS_TP8 = 24
HEADS_TP8 = 8
COMMUNICATORS = 2  # the TP group's pynccl communicator and its device group's torch communicator
CUSTOM_ALL_REDUCE_MAX = 8 * MIB  # CustomAllreduce max_size: larger all-reduces take torch's communicator


class NcclNvls(NamedTuple):
    """The NCCL a release's torch pin ships (its version) and its NVLS buffer (`buffSize`, bytes)."""

    nccl: str
    buffer: int


# The NCCL of the release's torch pin and its NVLS buffer; None where not read or set up at first use
NCCL_BUFFER: Eras[NcclNvls | None] = Eras((
    Era("", None, "torch <= 2.2 (NCCL 2.18-2.19): not read"),
    Era("0.5.0", NcclNvls("2.20.5", 4 * MIB),
        "torch 2.3/2.4 pin NCCL 2.20.5: buffSize = buffSizes[NCCL_PROTO_SIMPLE], 4 MiB"),
    Era("0.6.4", NcclNvls("2.21.5", 1 * MIB),
        "torch 2.5.1 pins NCCL 2.21.5: buffSize = NVLS_CHUNKSIZE (128 KiB) x NCCL_STEPS (8)"),
    Era("0.8.0", None, "V1: its init snapshot and the NCCL 2.21-2.26 of torch 2.6-2.7 not read for NVLS"),
))  # fmt: skip


class NvlsBuffers(BaseModel):
    """The NVLS buffers one rank holds in vLLM's non-torch figure (bytes), with the reason."""

    model_config = ConfigDict(frozen=True)

    bytes: int
    why: str


def communicator_bytes(buffer: int, channels: int = CHANNELS_TP8, heads: int = HEADS_TP8) -> int:
    """One communicator's unicast allocation: nvlsTotalSize rounded to the multicast granularity."""
    return round_up(channels * 2 * (buffer + MEM_SIZE) * heads, MULTICAST_GRANULARITY)


def nvls_buffers(inputs: CalibrationInputs, max_num_batched_tokens: int) -> NvlsBuffers | None:
    """The NVLS buffers this launch's ranks hold in V0's non-torch memory; None where kvtop does not take them."""
    layout, nccl = inputs.layout, NCCL_BUFFER.at(inputs.version)
    if nccl is None or layout.tp != 8 or layout.pp > 1 or layout.dp > 1:
        return None
    if inputs.gpu_name is None or gpu_model_key(inputs.gpu_name) not in MULTICAST_HOPPER:
        return None
    model = inputs.model
    payload = max_num_batched_tokens * model.hidden_size * model.dtype_bytes if model is not None else None
    torch_comm = payload is None or payload > CUSTOM_ALL_REDUCE_MAX or custom_all_reduce_off(inputs)
    communicators = COMMUNICATORS if torch_comm else 1
    each = communicator_bytes(nccl.buffer)
    return NvlsBuffers(bytes=communicators * each, why=(
        f"NCCL's NVLS buffers: {counted(communicators, 'communicator')} x {mib(each)} ({CHANNELS_TP8} channels x 2 x "
        f"({figure(nccl.buffer / MIB, 0)} + {mib(MEM_SIZE)}) x {HEADS_TP8} heads, to the {mib(MULTICAST_GRANULARITY)} "
        f"multicast granularity; NCCL {nccl.nccl}, made after V0's baseline)"))  # fmt: skip


def custom_all_reduce_off(inputs: CalibrationInputs) -> bool:
    """`--disable-custom-all-reduce`: every all-reduce takes torch's communicator."""
    return inputs.settings.flags.get("disable-custom-all-reduce") not in (None, False)
