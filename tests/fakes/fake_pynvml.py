"""A stand-in for the `pynvml` module, for driving `kvtop.sources.nvml` without a GPU.

It answers the NVML calls kvtop makes from `FakeGpu` descriptions and raises the *real*
pynvml error classes (pynvml imports without a driver), so the adapter's error handling runs
exactly as on a real node. Anything not faked falls through to the real module only for error
classes and constants; a missing function stays missing (an older library).

The builders below use captured numbers from tests/data/samples (their file is named next
to each), so tests assert real bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml

from tests.data_paths import SAMPLES

MIB = 1 << 20


@dataclass
class FakeGpu:
    """One GPU as NVML would report it (bytes; v2 semantics: used excludes reserved)."""

    name: str
    uuid: str
    pci_bus_id: str
    total: int
    used: int
    free: int
    reserved: int
    utilization: int = 0
    temperature_c: int | None = None  # None: NVML answers NotSupported (each vital alike)
    power_mw: int | None = None
    power_limit_mw: int | None = None
    sm_clock_mhz: int | None = None
    compute: list[tuple[int, int | None]] = field(default_factory=list)  # (pid, usedGpuMemory)
    graphics: list[tuple[int, int | None]] = field(default_factory=list)
    lost: bool = False  # every call raises NVMLError_GpuIsLost
    memory_error: type[pynvml.NVMLError] | None = None  # raised by both memory calls (unified memory)
    v2_error: type[pynvml.NVMLError] | None = None  # raised by the v2 memory call only (old driver)
    processes_error: type[pynvml.NVMLError] | None = None
    mig_instances: list[FakeGpu] = field(default_factory=list)


class FakePynvml:
    """Module-like: `NvmlSource(nvml_module=FakePynvml([...]))`."""

    def __init__(
        self,
        gpus: list[FakeGpu],
        *,
        driver_version: str = "550.90.07",
        init_error: type[pynvml.NVMLError] | None = None,
        without: tuple[str, ...] = (),
    ) -> None:
        self.gpus = gpus
        self.driver_version = driver_version
        self.init_error = init_error
        self.without = set(without)  # function names this "library version" lacks
        self.init_calls = 0
        self.shutdown_calls = 0

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("nvml") and name in object.__getattribute__(self, "without"):
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith(("NVMLError", "NVML_")) or name == "nvmlMemory_v2":
            return getattr(pynvml, name)
        raise AttributeError(name)

    # --- library ---
    def nvmlInit(self) -> None:
        self.init_calls += 1
        if self.init_error is not None:
            raise self.init_error()

    def nvmlShutdown(self) -> None:
        self.shutdown_calls += 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.driver_version

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    # --- devices ---
    def _gpu(self, handle: FakeGpu) -> FakeGpu:
        if handle.lost:
            raise pynvml.NVMLError_GpuIsLost()
        return handle

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        return self._gpu(self.gpus[index])

    def nvmlDeviceGetName(self, handle: FakeGpu) -> str:
        return self._gpu(handle).name

    def nvmlDeviceGetUUID(self, handle: FakeGpu) -> str:
        return self._gpu(handle).uuid

    def nvmlDeviceGetPciInfo(self, handle: FakeGpu) -> SimpleNamespace:
        return SimpleNamespace(busId=self._gpu(handle).pci_bus_id.encode())  # bytes, as ctypes gives

    def nvmlDeviceGetMemoryInfo(self, handle: FakeGpu, version: int | None = None) -> SimpleNamespace:
        gpu = self._gpu(handle)
        if gpu.memory_error is not None:
            raise gpu.memory_error()
        if version:
            if gpu.v2_error is not None:
                raise gpu.v2_error()
            return SimpleNamespace(
                version=version, total=gpu.total, reserved=gpu.reserved, free=gpu.free, used=gpu.used
            )
        return SimpleNamespace(
            total=gpu.total, free=gpu.free, used=gpu.used + gpu.reserved
        )  # v1: used ⊇ reserved

    def nvmlDeviceGetUtilizationRates(self, handle: FakeGpu) -> SimpleNamespace:
        gpu = self._gpu(handle)
        if gpu.mig_instances:
            raise pynvml.NVMLError_NotSupported()
        return SimpleNamespace(gpu=gpu.utilization, memory=0)

    def _vital(self, handle: FakeGpu, value: int | None) -> int:
        self._gpu(handle)
        if value is None:
            raise pynvml.NVMLError_NotSupported()
        return value

    def nvmlDeviceGetTemperature(self, handle: FakeGpu, sensor: int) -> int:
        assert sensor == pynvml.NVML_TEMPERATURE_GPU
        return self._vital(handle, handle.temperature_c)

    def nvmlDeviceGetPowerUsage(self, handle: FakeGpu) -> int:
        return self._vital(handle, handle.power_mw)

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: FakeGpu) -> int:
        return self._vital(handle, handle.power_limit_mw)

    def nvmlDeviceGetClockInfo(self, handle: FakeGpu, clock: int) -> int:
        assert clock == pynvml.NVML_CLOCK_SM
        return self._vital(handle, handle.sm_clock_mhz)

    def _processes(self, handle: FakeGpu, entries: list[tuple[int, int | None]]) -> list[SimpleNamespace]:
        gpu = self._gpu(handle)
        if gpu.processes_error is not None:
            raise gpu.processes_error()
        return [
            SimpleNamespace(
                pid=pid, usedGpuMemory=used, gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF
            )
            for pid, used in entries
        ]

    def nvmlDeviceGetComputeRunningProcesses_v3(self, handle: FakeGpu) -> list[SimpleNamespace]:
        return self._processes(handle, handle.compute)

    def nvmlDeviceGetComputeRunningProcesses_v2(self, handle: FakeGpu) -> list[SimpleNamespace]:
        return self._processes(handle, handle.compute)

    def nvmlDeviceGetGraphicsRunningProcesses_v3(self, handle: FakeGpu) -> list[SimpleNamespace]:
        return self._processes(handle, handle.graphics)

    def nvmlDeviceGetGraphicsRunningProcesses_v2(self, handle: FakeGpu) -> list[SimpleNamespace]:
        return self._processes(handle, handle.graphics)

    # --- MIG ---
    def nvmlDeviceGetMigMode(self, handle: FakeGpu) -> list[int]:
        enabled = (
            pynvml.NVML_DEVICE_MIG_ENABLE
            if self._gpu(handle).mig_instances
            else pynvml.NVML_DEVICE_MIG_DISABLE
        )
        return [enabled, enabled]

    def nvmlDeviceGetMaxMigDeviceCount(self, handle: FakeGpu) -> int:
        return 7  # an A100/H100/A30 has up to 7 slots; unused ones answer NotFound

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle: FakeGpu, index: int) -> FakeGpu:
        instances = self._gpu(handle).mig_instances
        if index >= len(instances):
            raise pynvml.NVMLError_NotFound()
        return instances[index]


# --- builders from captured samples ---


def h100_from_nvml_sample(**overrides: Any) -> FakeGpu:
    """Device 0 of samples/nvml/h100-sxm-nvml-memory-info-v2-bytes.txt (bytes, v2 call)."""
    text = (SAMPLES / "nvml/h100-sxm-nvml-memory-info-v2-bytes.txt").read_text()

    def number(label: str) -> int:
        match = re.search(rf"^{label} memory:\s+(\d+) bytes", text, re.M)
        assert match, label
        return int(match.group(1))

    values: dict[str, Any] = {
        "name": re.search(r"Device 0: (.+)", text).group(1).strip(),  # type: ignore[union-attr]
        "uuid": "GPU-h100-sample-0",
        "pci_bus_id": "00000000:0F:00.0",  # the bus id nvidia-smi printed for the same post's GPU 0
        "total": number("Total"),
        "used": number("Used"),
        "free": number("Free"),
        "reserved": number("Reserved"),
    }
    values.update(overrides)
    return FakeGpu(**values)


def gpu_from_mib(
    name: str, index: int, *, total_mib: int, reserved_mib: int, used_mib: int, bus_id: str, **rest: Any
) -> FakeGpu:
    """A GPU from nvidia-smi MiB figures (free = total − reserved − used, as NVML v2 reports)."""
    return FakeGpu(
        name=name,
        uuid=f"GPU-fake-{index}",
        pci_bus_id=bus_id,
        total=total_mib * MIB,
        used=used_mib * MIB,
        free=(total_mib - reserved_mib - used_mib) * MIB,
        reserved=reserved_mib * MIB,
        **rest,
    )


def read_compute_apps_csv(name: str) -> list[tuple[int, str, int]]:
    """(pid, process name, used MiB) rows of a samples/process_tables compute-apps CSV."""
    rows = []
    for line in (SAMPLES / "process_tables" / name).read_text().splitlines():
        match = re.match(r"^\s*(\d+),\s*([^,]+),\s*(\d+) MiB", line)
        if match:
            rows.append((int(match.group(1)), match.group(2).strip(), int(match.group(3))))
    return rows


def read_smi_processes(name: str) -> list[tuple[int, int, str, str, int | None]]:
    """(gpu, pid, type, process name, MiB or None when truncated) rows of an nvidia-smi table."""
    rows = []
    pattern = re.compile(r"^\|\s+(\d+)\s+\S+\s+\S+\s+(\d+)\s+(C\+G|C|G)\s+(.+?)\s+(\d+)(MiB|\.\.\.)\s*\|")
    for line in (SAMPLES / "process_tables" / name).read_text().splitlines():
        match = pattern.match(line)
        if match:
            gpu, pid, kind, process_name, size, unit = match.groups()
            rows.append((int(gpu), int(pid), kind, process_name, int(size) if unit == "MiB" else None))
    return rows
