"""NVML, the driver's own account of every GPU: the only module that imports `pynvml`.

`NvmlSource.read()` returns a `NodeObservation` holding the GPUs (memory from the v2 call, so
used and reserved are apart; v1 or host memory when that is all there is, and saying so), and
the processes NVML lists on each. Every NVML failure becomes a named state with a message a
person can act on, and one bad GPU never hides the others. Tests pass a fake `pynvml` module.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kvtop.domain.observe import (
    GpuObservation,
    GpuProcess,
    GpuState,
    MemoryApi,
    MigInstance,
    NodeObservation,
    NvmlState,
    ProcessKind,
)
from kvtop.domain.wording import counted

HostMemoryReader = Callable[[], tuple[int, int]]  # () -> (total_bytes, available_bytes)

_NO_INSTANCE = 0xFFFFFFFF  # NVML's "no MIG instance" for gpuInstanceId
NVML_TEMPERATURE_GPU = 0  # nvmlTemperatureSensors_t: the GPU die
NVML_CLOCK_SM = 1  # nvmlClockType_t: the streaming multiprocessors' clock

_INIT_STATES: tuple[tuple[str, NvmlState, str], ...] = (
    ("NVMLError_LibraryNotFound", NvmlState.LIBRARY_NOT_FOUND,
     "NVML library (libnvidia-ml.so) not found: install the NVIDIA driver, or run the container "
     "with the NVIDIA Container Toolkit (--gpus all)"),
    ("NVMLError_DriverNotLoaded", NvmlState.NO_DRIVER,
     "NVIDIA kernel driver not loaded: check `nvidia-smi` and `lsmod | grep nvidia`, then load "
     "the driver (modprobe nvidia) or reboot after installing it"),
    ("NVMLError_LibRmVersionMismatch", NvmlState.VERSION_MISMATCH,
     "NVML library and kernel driver versions differ (usually a driver upgrade without a reboot): "
     "reboot, or unload and reload the nvidia kernel modules"),
    ("NVMLError_NoPermission", NvmlState.NO_PERMISSION,
     "no permission to open the NVIDIA devices: run as a user that can read /dev/nvidia*"),
)  # fmt: skip

# Answers to the v2 memory call that mean "use v1": an older driver or device.
_NO_V2_MEMORY = ("NVMLError_FunctionNotFound", "NVMLError_NotSupported", "NVMLError_ArgumentVersionMismatch")

_PROCESS_CALLS = {
    ProcessKind.COMPUTE: (
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetComputeRunningProcesses_v2",
        "nvmlDeviceGetComputeRunningProcesses",
    ),
    ProcessKind.GRAPHICS: (
        "nvmlDeviceGetGraphicsRunningProcesses_v3",
        "nvmlDeviceGetGraphicsRunningProcesses_v2",
        "nvmlDeviceGetGraphicsRunningProcesses",
    ),
}


# Most severe first: the GPU's `state` is the most severe condition found.
_SEVERITY = (
    GpuState.LOST, GpuState.ERROR, GpuState.UNIFIED_MEMORY, GpuState.MIG,
    GpuState.PROCESS_MEMORY_UNAVAILABLE, GpuState.OK,
)  # fmt: skip


class NvmlSource:
    """Reads every GPU through NVML. `nvml_module=None` imports `pynvml` on first use."""

    def __init__(
        self,
        nvml_module: Any | None = None,
        *,
        host_memory: HostMemoryReader | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._nvml = nvml_module
        self._host_memory = host_memory
        self._clock = clock
        self._initialised = False

    def read(self) -> NodeObservation:
        """One observation of all GPUs; NVML is initialised on the first call (retried until it works)."""
        taken_at = self._clock()
        failure = self._ensure_initialised()
        if failure is not None:
            state, message = failure
            return NodeObservation(taken_at=taken_at, nvml_state=state, nvml_message=message)
        nvml: Any = self._nvml
        try:
            driver_version = _text(nvml.nvmlSystemGetDriverVersion())
            count = int(nvml.nvmlDeviceGetCount())
        except nvml.NVMLError as error:
            state, message = _init_failure(nvml, error)
            return NodeObservation(taken_at=taken_at, nvml_state=state, nvml_message=message)
        gpus = tuple(_GpuReader(nvml, index, self._host_memory).read() for index in range(count))
        return NodeObservation(taken_at=taken_at, driver_version=driver_version, gpus=gpus)

    def close(self) -> None:
        """Release NVML (safe to call when it never started)."""
        if self._initialised and self._nvml is not None:
            self._initialised = False
            try:
                self._nvml.nvmlShutdown()
            except self._nvml.NVMLError:
                return  # the driver went away first; nothing left to release

    def _ensure_initialised(self) -> tuple[NvmlState, str] | None:
        if self._initialised:
            return None
        if self._nvml is None:
            try:
                import pynvml
            except ImportError:
                return (NvmlState.LIBRARY_NOT_FOUND,
                        "the nvidia-ml-py package is not installed: pip install nvidia-ml-py")  # fmt: skip
            self._nvml = pynvml
        try:
            self._nvml.nvmlInit()
        except self._nvml.NVMLError as error:
            return _init_failure(self._nvml, error)
        self._initialised = True
        return None


def _init_failure(nvml: Any, error: BaseException) -> tuple[NvmlState, str]:
    for class_name, state, message in _INIT_STATES:
        error_class = getattr(nvml, class_name, None)
        if error_class is not None and isinstance(error, error_class):
            return state, message
    return NvmlState.ERROR, f"NVML failed: {error} (check `nvidia-smi`)"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class _GpuReader:
    """Reads one GPU; every condition found is collected as (state, message)."""

    def __init__(self, nvml: Any, index: int, host_memory: HostMemoryReader | None) -> None:
        self.nvml = nvml
        self.index = index
        self.host_memory = host_memory
        self.conditions: list[tuple[GpuState, str]] = []

    def read(self) -> GpuObservation:
        nvml = self.nvml
        try:
            return self._read()
        except nvml.NVMLError_GpuIsLost:
            return GpuObservation(
                index=self.index,
                state=GpuState.LOST,
                state_message=f"GPU {self.index} is lost (fell off the bus): check `dmesg` for Xid "
                "errors; it needs a GPU reset or a reboot",
            )
        except nvml.NVMLError as error:
            return GpuObservation(
                index=self.index,
                state=GpuState.ERROR,
                state_message=f"GPU {self.index} could not be read: {error} (check `nvidia-smi -i {self.index}`)",
            )

    def _read(self) -> GpuObservation:
        nvml = self.nvml
        handle = nvml.nvmlDeviceGetHandleByIndex(self.index)
        memory = self._memory(handle)
        mig_instances = self._mig_instances(handle)
        processes = self._processes(handle)
        state, message = self._summary()
        return GpuObservation(
            index=self.index,
            uuid=_text(nvml.nvmlDeviceGetUUID(handle)),
            pci_bus_id=_text(nvml.nvmlDeviceGetPciInfo(handle).busId),
            name=_text(nvml.nvmlDeviceGetName(handle)),
            **memory,
            utilization_percent=self._utilization(handle),
            **self._vitals(handle),
            state=state,
            state_message=message,
            processes=processes,
            mig_instances=mig_instances,
        )

    def _summary(self) -> tuple[GpuState, str | None]:
        if not self.conditions:
            return GpuState.OK, None
        state = min((state for state, _ in self.conditions), key=_SEVERITY.index)
        return state, " ".join(message for _, message in self.conditions)

    def _memory(self, handle: Any) -> dict[str, Any]:
        figures = _memory_figures(self.nvml, handle)
        if figures is not None:
            if figures["memory_api"] is MemoryApi.V1:
                self.conditions.append(
                    (GpuState.OK, "memory from the v1 call: `used` includes the driver's reserved memory.")
                )
            return figures
        # Both calls answered NotSupported: a unified-memory device (GB10, Grace) shares host memory.
        if self.host_memory is None:
            from kvtop.sources.processes import read_host_memory

            self.host_memory = read_host_memory
        total_bytes, available_bytes = self.host_memory()
        self.conditions.append((
            GpuState.UNIFIED_MEMORY,
            "unified memory (GB10/Grace): NVML reports no device memory, so totals are the host's "
            "RAM (free = available to new allocations, shared with the CPU).",
        ))  # fmt: skip
        return {
            "total_bytes": total_bytes,
            "used_bytes": total_bytes - available_bytes,
            "free_bytes": available_bytes,
            "reserved_bytes": None,
            "memory_api": MemoryApi.HOST,
        }

    def _vitals(self, handle: Any) -> dict[str, int | None]:
        """Temperature, power drawn and its limit, SM clock: each None where NVML has no answer."""
        nvml = self.nvml
        calls: dict[str, tuple[str, tuple[Any, ...]]] = {
            "temperature_c": ("nvmlDeviceGetTemperature", (handle, NVML_TEMPERATURE_GPU)),
            "power_mw": ("nvmlDeviceGetPowerUsage", (handle,)),
            "power_limit_mw": ("nvmlDeviceGetEnforcedPowerLimit", (handle,)),
            "sm_clock_mhz": ("nvmlDeviceGetClockInfo", (handle, NVML_CLOCK_SM)),
        }
        vitals: dict[str, int | None] = {}
        for name, (function, arguments) in calls.items():
            try:
                vitals[name] = int(getattr(nvml, function)(*arguments))
            except nvml.NVMLError_GpuIsLost:
                raise
            except (nvml.NVMLError, AttributeError):  # not supported here, or a pynvml without the call
                vitals[name] = None
        return vitals

    def _utilization(self, handle: Any) -> int | None:
        try:
            return int(self.nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        except self.nvml.NVMLError_GpuIsLost:
            raise
        except self.nvml.NVMLError:
            return None  # MIG and some vGPUs report no utilisation; it is a nice-to-have

    def _mig_instances(self, handle: Any) -> tuple[MigInstance, ...]:
        nvml = self.nvml
        if not hasattr(nvml, "nvmlDeviceGetMigMode"):
            return ()
        try:
            current_mode, _pending = nvml.nvmlDeviceGetMigMode(handle)
        except nvml.NVMLError_NotSupported:
            return ()
        if current_mode != nvml.NVML_DEVICE_MIG_ENABLE:
            return ()
        instances = []
        for slot in range(int(nvml.nvmlDeviceGetMaxMigDeviceCount(handle))):
            try:
                mig_handle = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
            except nvml.NVMLError_NotFound:
                continue  # an empty slot
            figures = _memory_figures(nvml, mig_handle) or {}
            instances.append(
                MigInstance(
                    index=slot,
                    uuid=_text(nvml.nvmlDeviceGetUUID(mig_handle)),
                    name=_text(nvml.nvmlDeviceGetName(mig_handle)),
                    total_bytes=figures.get("total_bytes"),
                    used_bytes=figures.get("used_bytes"),
                    free_bytes=figures.get("free_bytes"),
                    reserved_bytes=figures.get("reserved_bytes"),
                    memory_api=figures.get("memory_api"),
                )
            )
        self.conditions.append((
            GpuState.MIG,
            f"MIG enabled: {counted(len(instances), 'instance')}, each with its own memory; per-process "
            "memory is often not reported under MIG.",
        ))  # fmt: skip
        return tuple(instances)

    def _processes(self, handle: Any) -> tuple[GpuProcess, ...]:
        nvml = self.nvml
        found: dict[int, GpuProcess] = {}
        for kind, names in _PROCESS_CALLS.items():
            try:
                entries = _call_first_available(nvml, names, handle)
            except (nvml.NVMLError_NotSupported, nvml.NVMLError_NoPermission) as error:
                self.conditions.append((
                    GpuState.PROCESS_MEMORY_UNAVAILABLE,
                    f"NVML cannot list {kind.value} processes here ({error}): common in containers "
                    "without --pid=host, under vGPU and on Windows WDDM; totals are still right.",
                ))  # fmt: skip
                continue
            except nvml.NVMLError_GpuIsLost:
                raise
            except nvml.NVMLError as error:
                self.conditions.append(
                    (
                        GpuState.ERROR,
                        f"listing {kind.value} processes failed: {error}; totals are still right.",
                    )
                )
                continue
            for entry in entries:
                _merge_process(found, _process_from_entry(entry, kind))
        processes = tuple(sorted(found.values(), key=lambda process: process.pid))
        if processes and all(process.used_bytes is None for process in processes):
            self.conditions.append((
                GpuState.PROCESS_MEMORY_UNAVAILABLE,
                "NVML lists the processes but not their memory (MIG, Windows WDDM or vGPU): "
                "per-process bytes are unknown, the GPU totals are still right.",
            ))  # fmt: skip
        return processes


def _memory_figures(nvml: Any, handle: Any) -> dict[str, Any] | None:
    """Memory from the v2 call (reserved apart), else v1; None when neither is supported."""
    return _memory_v2(nvml, handle) or _memory_v1(nvml, handle)


def _memory_v2(nvml: Any, handle: Any) -> dict[str, Any] | None:
    """None when this library or driver has no v2 memory call (the v1 call answers instead)."""
    version = getattr(nvml, "nvmlMemory_v2", None)
    if version is None:
        return None
    # TypeError: a pynvml without the `version` argument
    unavailable: tuple[type[BaseException], ...] = (*_errors(nvml, _NO_V2_MEMORY), TypeError)
    try:
        info = nvml.nvmlDeviceGetMemoryInfo(handle, version=version)
    except unavailable:
        return None
    return {
        "total_bytes": int(info.total),
        "used_bytes": int(info.used),
        "free_bytes": int(info.free),
        "reserved_bytes": int(info.reserved),
        "memory_api": MemoryApi.V2,
    }


def _memory_v1(nvml: Any, handle: Any) -> dict[str, Any] | None:
    """None when the device has no memory of its own to report (unified memory)."""
    try:
        info = nvml.nvmlDeviceGetMemoryInfo(handle)
    except nvml.NVMLError_NotSupported:
        return None
    return {
        "total_bytes": int(info.total),
        "used_bytes": int(info.used),
        "free_bytes": int(info.free),
        "reserved_bytes": None,
        "memory_api": MemoryApi.V1,
    }


def _errors(nvml: Any, names: tuple[str, ...]) -> tuple[type[BaseException], ...]:
    """The error classes this pynvml defines, out of `names` (older releases lack some)."""
    return tuple(getattr(nvml, name) for name in names if hasattr(nvml, name))


def _call_first_available(nvml: Any, names: tuple[str, ...], handle: Any) -> list[Any]:
    """Call the newest process-list function this library and driver offer."""
    for name in names:
        function = getattr(nvml, name, None)
        if function is None:
            continue
        try:
            return list(function(handle))
        except nvml.NVMLError_FunctionNotFound:
            continue  # the driver is older than the library: try the previous version
    return []


def _process_from_entry(entry: Any, kind: ProcessKind) -> GpuProcess:
    used = getattr(entry, "usedGpuMemory", None)
    instance = getattr(entry, "gpuInstanceId", None)
    return GpuProcess(
        pid=int(entry.pid),
        used_bytes=None if used is None else int(used),
        kind=kind,
        gpu_instance_id=None if instance in (None, _NO_INSTANCE) else int(instance),
    )


def _merge_process(found: dict[int, GpuProcess], process: GpuProcess) -> None:
    """A process both computing and drawing is listed twice with the same bytes: keep one row."""
    earlier = found.get(process.pid)
    if earlier is None:
        found[process.pid] = process
        return
    sizes = [size for size in (earlier.used_bytes, process.used_bytes) if size is not None]
    found[process.pid] = earlier.model_copy(
        update={"kind": ProcessKind.COMPUTE_AND_GRAPHICS, "used_bytes": max(sizes) if sizes else None}
    )
