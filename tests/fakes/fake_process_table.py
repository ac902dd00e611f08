"""A process table built from recorded process listings, behind `kvtop.sources.processes.ProcessTable`.

The GPU processes (pid, title, bytes) are the captured rows of tests/data/samples/process_tables.
Those listings do not show parents or launch commands, so each scenario adds the launching
server with a command line copied from a real case (`cases/*/engine.log` or `case.json`, named
beside it), adjusted only in the parallel layout the listing shows. Server pids are not in the
listings and are made up; they are the only invented numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kvtop.domain.observe import NodeObservation
from kvtop.domain.process_identity import PidNamespace
from kvtop.sources.nvml import NvmlSource
from kvtop.sources.processes import ProcessRecord
from tests.fakes.fake_pynvml import (
    FakeGpu,
    FakePynvml,
    gpu_from_mib,
    read_compute_apps_csv,
    read_smi_processes,
)

# cases/sglang/C01/engine.log (its --tp 4 set to the listing's two schedulers)
SGLANG_TP2_LAUNCH = [
    "python3",
    "-m",
    "sglang.launch_server",
    "--model",
    "/path/to/Qwen3-235B-A22B-FP8",
    "--tp",
    "2",
    "--trust-remote-code",
    "--host",
    "0.0.0.0",
    "--port",
    "8000",
    "--mem-fraction-static",
    "0.93",
]
# cases/vllm/vllm-27508-gpt-oss-120b-h100/case.json
VLLM_LAUNCH = [
    "vllm",
    "serve",
    "openai/gpt-oss-120b",
    "--gpu-memory-utilization",
    "0.95",
    "--max-num-batched-tokens",
    "1024",
]
# the same, with the layout of samples/process_tables/h100-sxm-8gpu-vllm-worker-tp8.txt
VLLM_TP8_LAUNCH = [*VLLM_LAUNCH, "--tensor-parallel-size", "8"]


@dataclass
class FakeProcessTable:
    """Answers `lookup` from a fixed set of records; any other pid is invisible (None). `namespace`:
    whose pids it holds (a container's own, `FOREIGN`, where kvtop runs without --pid=host)."""

    records: dict[int, ProcessRecord]
    namespace: PidNamespace = PidNamespace.HOST

    @classmethod
    def of(cls, records: Iterable[ProcessRecord], namespace: PidNamespace = PidNamespace.HOST) -> FakeProcessTable:
        return cls({record.pid: record for record in records}, namespace)

    def lookup(self, pid: int) -> ProcessRecord | None:
        return self.records.get(pid)

    def pid_namespace(self) -> PidNamespace:
        return self.namespace


def _uid(user: str) -> int:
    return 0 if user == "root" else 1000


def titled(pid: int, title: str, parent_pid: int, user: str = "root") -> ProcessRecord:
    """A process that renamed itself (setproctitle): its argv is its title."""
    return ProcessRecord(pid=pid, parent_pid=parent_pid, name=title[:15], cmdline=(title,), user=user,
                         start_time=1_700_000_000.0, uid=_uid(user), exe="/usr/bin/python3.11")  # fmt: skip


def launched(pid: int, argv: list[str], parent_pid: int = 1, user: str = "root") -> ProcessRecord:
    return ProcessRecord(pid=pid, parent_pid=parent_pid, name=argv[0].rsplit("/", 1)[-1], cmdline=tuple(argv),
                         user=user, start_time=1_699_999_000.0, uid=_uid(user), exe="/usr/bin/python3.11")  # fmt: skip


# samples/process_tables/compute-apps-csv-a100-80gb-sglang-tp2-and-vllm.txt, spread over 4 GPUs:
# GPU 0 sglang TP0, GPU 1 sglang TP1 (+ an unseen container pid), GPU 2 vLLM + co-tenant, GPU 3 orphan.
A100_GPU_OF_PID = {2160317: 0, 2159821: 1, 2332308: 2, 1105912: 2, 2095211: 3}
CONTAINER_PID = 3632600  # samples/process_tables/mixed-enginecore-worker-python-processes-fragment.txt
CONTAINER_PID_MIB = 1706
SGLANG_SERVER_PID = 2159700
VLLM_SERVER_PID = 2332200


def two_engine_node() -> tuple[NodeObservation, FakeProcessTable]:
    """An A100-80GB node running an SGLang TP2 and a vLLM, a co-tenant, an orphan and a container pid."""
    rows = read_compute_apps_csv("compute-apps-csv-a100-80gb-sglang-tp2-and-vllm.txt")
    per_gpu: dict[int, list[tuple[int, int | None]]] = {index: [] for index in range(4)}
    for pid, _name, mib in rows:
        per_gpu[A100_GPU_OF_PID[pid]].append((pid, mib << 20))
    per_gpu[1].append((CONTAINER_PID, CONTAINER_PID_MIB << 20))
    gpus = [
        gpu_from_mib(
            "NVIDIA A100-SXM4-80GB", index, total_mib=81920, reserved_mib=557,  # fb-memory-observations.csv
            used_mib=sum(size for _, size in per_gpu[index] if size) >> 20,
            bus_id=f"00000000:{0x07 + index:02X}:00.0", compute=per_gpu[index],
        )
        for index in range(4)
    ]  # fmt: skip
    node = NvmlSource(nvml_module=FakePynvml(gpus), clock=lambda: 1_700_000_100.0).read()
    names = {pid: name for pid, name, _ in rows}
    table = FakeProcessTable.of([
        launched(SGLANG_SERVER_PID, SGLANG_TP2_LAUNCH),
        titled(2160317, names[2160317], SGLANG_SERVER_PID),
        titled(2159821, names[2159821], SGLANG_SERVER_PID),
        launched(VLLM_SERVER_PID, VLLM_LAUNCH),
        titled(2332308, names[2332308], VLLM_SERVER_PID),
        launched(1105912, [names[1105912]], parent_pid=1105900, user="ada"),
        titled(2095211, names[2095211], parent_pid=1),  # its server is gone: re-parented to init
    ])  # fmt: skip
    return node, table


VLLM_TP8_SERVER_PID = 2753300
VLLM_TP8_ENGINE_CORE_PID = 2753400


def vllm_tp8_node() -> tuple[NodeObservation, FakeProcessTable]:
    """8×H100 SXM running one vLLM with TP8 (samples/process_tables/h100-sxm-8gpu-vllm-worker-tp8.txt)."""
    rows = read_smi_processes("h100-sxm-8gpu-vllm-worker-tp8.txt")
    gpus = [
        gpu_from_mib(
            "NVIDIA H100 80GB HBM3", gpu, total_mib=81559, reserved_mib=336, used_mib=79101,
            bus_id=bus, compute=[(pid, mib << 20)],  # type: ignore[operator]
        )
        for (gpu, pid, _kind, _name, mib), bus in zip(
            rows, ["00000000:18:00.0", "00000000:38:00.0", "00000000:48:00.0", "00000000:59:00.0",
                   "00000000:98:00.0", "00000000:B8:00.0", "00000000:C8:00.0", "00000000:D9:00.0"],
            strict=True,
        )
    ]  # fmt: skip
    node = NvmlSource(nvml_module=FakePynvml(gpus, driver_version="570.195.03")).read()
    table = FakeProcessTable.of([
        launched(VLLM_TP8_SERVER_PID, VLLM_TP8_LAUNCH),
        titled(VLLM_TP8_ENGINE_CORE_PID, "VLLM::EngineCore", VLLM_TP8_SERVER_PID),
        *(titled(pid, name, VLLM_TP8_ENGINE_CORE_PID) for _gpu, pid, _kind, name, _mib in rows),
    ])  # fmt: skip
    return node, table


#: The vLLM API server's own CUDA context on GPU 0 (issue 21's example; made up, like the server pids).
API_SERVER_CONTEXT_MIB = 500


def vllm_tp8_node_with_api_server(*, workers: bool = True) -> tuple[NodeObservation, FakeProcessTable]:
    """`vllm_tp8_node` with its API server (the `vllm serve` process) holding 500 MiB on GPU 0, as
    vLLM's API server does when it initialises CUDA. Without `workers`, the server is alone: its
    engine core and workers are not (or not yet) on the GPUs."""
    node, table = vllm_tp8_node()
    context = API_SERVER_CONTEXT_MIB << 20
    gpus = []
    for gpu in node.gpus:
        compute = [(p.pid, p.used_bytes) for p in gpu.processes] if workers else []
        used = (gpu.used_bytes or 0) if workers else 0
        if gpu.index == 0:
            compute.append((VLLM_TP8_SERVER_PID, context))
            used += context
        total, reserved = gpu.total_bytes or 0, gpu.reserved_bytes or 0
        gpus.append(FakeGpu(name=gpu.name or "", uuid=gpu.uuid or "", pci_bus_id=gpu.pci_bus_id or "", total=total,
                            used=used, free=total - reserved - used, reserved=reserved, compute=compute))  # fmt: skip
    return NvmlSource(nvml_module=FakePynvml(gpus, driver_version="570.195.03")).read(), table
