"""The NVML adapter, driven through a fake `pynvml` module that raises the real error classes."""

from __future__ import annotations

import pynvml

from kvtop.domain.observe import GpuState, MemoryApi, NvmlState, ProcessKind
from kvtop.sources.nvml import NvmlSource
from tests.fakes.fake_pynvml import (
    MIB,
    FakeGpu,
    FakePynvml,
    gpu_from_mib,
    h100_from_nvml_sample,
    read_smi_processes,
)

# samples/nvml/h100-sxm-nvml-memory-info-v2-bytes.txt
H100_TOTAL, H100_USED, H100_FREE, H100_RESERVED = 85520809984, 17854300160, 67314843648, 351666176


def read_one(gpu: FakeGpu, **fake_options: object):
    node = NvmlSource(nvml_module=FakePynvml([gpu], **fake_options)).read()  # type: ignore[arg-type]
    assert node.nvml_state is NvmlState.OK
    return node.gpus[0]


def test_v2_memory_keeps_reserved_apart_from_used() -> None:
    gpu = read_one(h100_from_nvml_sample())
    assert (gpu.total_bytes, gpu.used_bytes, gpu.free_bytes, gpu.reserved_bytes) == (
        H100_TOTAL, H100_USED, H100_FREE, H100_RESERVED,
    )  # fmt: skip
    assert gpu.memory_api is MemoryApi.V2
    assert gpu.name == "NVIDIA H100 80GB HBM3"
    assert gpu.pci_bus_id == "00000000:0F:00.0"
    assert gpu.state is GpuState.OK and gpu.state_message is None


def test_driver_without_v2_memory_falls_back_to_v1_and_says_so() -> None:
    gpu = read_one(h100_from_nvml_sample(v2_error=pynvml.NVMLError_FunctionNotFound))
    assert gpu.memory_api is MemoryApi.V1
    assert gpu.reserved_bytes is None
    assert gpu.used_bytes == H100_USED + H100_RESERVED == 18205966336  # v1 `used` includes reserved
    assert gpu.state is GpuState.OK
    assert "v1" in (gpu.state_message or "")


def test_driver_version_is_reported() -> None:
    node = NvmlSource(nvml_module=FakePynvml([h100_from_nvml_sample()], driver_version="550.90.07")).read()
    assert node.driver_version == "550.90.07"


def test_missing_library_is_a_named_state() -> None:
    node = NvmlSource(nvml_module=FakePynvml([], init_error=pynvml.NVMLError_LibraryNotFound)).read()
    assert node.nvml_state is NvmlState.LIBRARY_NOT_FOUND
    assert node.gpus == ()
    assert "libnvidia-ml.so" in (node.nvml_message or "")


def test_driver_not_loaded_is_a_named_state() -> None:
    node = NvmlSource(nvml_module=FakePynvml([], init_error=pynvml.NVMLError_DriverNotLoaded)).read()
    assert node.nvml_state is NvmlState.NO_DRIVER
    assert "modprobe nvidia" in (node.nvml_message or "")


def test_library_and_driver_version_mismatch_says_reboot() -> None:
    node = NvmlSource(nvml_module=FakePynvml([], init_error=pynvml.NVMLError_LibRmVersionMismatch)).read()
    assert node.nvml_state is NvmlState.VERSION_MISMATCH
    assert "reboot" in (node.nvml_message or "")


def test_failed_init_is_retried_on_the_next_read() -> None:
    fake = FakePynvml([h100_from_nvml_sample()], init_error=pynvml.NVMLError_DriverNotLoaded)
    source = NvmlSource(nvml_module=fake)
    assert source.read().nvml_state is NvmlState.NO_DRIVER
    fake.init_error = None  # the driver got loaded
    node = source.read()
    assert node.nvml_state is NvmlState.OK and node.gpus[0].total_bytes == H100_TOTAL
    source.read()
    assert fake.init_calls == 2  # once it works, NVML is not initialised again
    source.close()
    assert fake.shutdown_calls == 1


def test_a_lost_gpu_does_not_hide_the_others() -> None:
    fake = FakePynvml([h100_from_nvml_sample(), h100_from_nvml_sample(lost=True), h100_from_nvml_sample()])
    node = NvmlSource(nvml_module=fake).read()
    assert [gpu.state for gpu in node.gpus] == [GpuState.OK, GpuState.LOST, GpuState.OK]
    lost = node.gpus[1]
    assert lost.index == 1 and lost.total_bytes is None and lost.used_bytes is None
    assert "reset" in (lost.state_message or "")
    assert node.gpus[2].total_bytes == H100_TOTAL


def test_processes_carry_nvml_bytes_and_graphics_are_merged() -> None:
    """samples/process_tables/desktop-graphics-procs-plus-vllm-enginecore-fragment.txt."""
    rows = read_smi_processes("desktop-graphics-procs-plus-vllm-enginecore-fragment.txt")
    compute = [(pid, mib * MIB) for _, pid, kind, _, mib in rows if kind == "C"]  # type: ignore[operator]
    graphics = [(pid, mib * MIB) for _, pid, kind, _, mib in rows if kind == "G"]  # type: ignore[operator]
    graphics.append((4656, 22094 * MIB))  # the engine also draws: one row, kind compute+graphics
    gpu = read_one(h100_from_nvml_sample(compute=compute, graphics=graphics))
    by_pid = {process.pid: process for process in gpu.processes}
    assert len(by_pid) == 7
    assert by_pid[4656].used_bytes == 22094 * MIB
    assert by_pid[4656].kind is ProcessKind.COMPUTE_AND_GRAPHICS
    assert by_pid[1796].kind is ProcessKind.GRAPHICS and by_pid[1796].used_bytes == 308 * MIB
    assert gpu.process_bytes == (308 + 61 + 22094 + 330 + 67 + 4 + 298) * MIB


def test_library_without_v3_process_calls_uses_v2() -> None:
    compute = [(175134, 74134 * MIB)]  # samples/process_tables/a100-80gb-pcie-vllm-enginecore-idle.txt
    gpu = read_one(
        gpu_from_mib("NVIDIA A100 80GB PCIe", 2, total_mib=81920, reserved_mib=557, used_mib=74143,
                     bus_id="00000000:81:00.0", compute=compute),
        without=("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3"),
    )  # fmt: skip
    assert [(p.pid, p.used_bytes) for p in gpu.processes] == [(175134, 74134 * MIB)]


def test_process_memory_not_available_is_named() -> None:
    """WDDM/MIG: NVML lists the pids but usedGpuMemory is None."""
    gpu = read_one(h100_from_nvml_sample(compute=[(4656, None), (385952, None)]))
    assert gpu.state is GpuState.PROCESS_MEMORY_UNAVAILABLE
    assert [process.used_bytes for process in gpu.processes] == [None, None]
    assert gpu.total_bytes == H100_TOTAL  # the GPU figures stay


def test_process_listing_not_supported_is_named() -> None:
    gpu = read_one(h100_from_nvml_sample(processes_error=pynvml.NVMLError_NotSupported))
    assert gpu.state is GpuState.PROCESS_MEMORY_UNAVAILABLE
    assert gpu.processes == ()
    assert "--pid=host" in (gpu.state_message or "")


def test_unified_memory_device_reads_host_memory() -> None:
    """GB10: NVML has no device memory. cases/vllm/ngc2608-v0271-qwen3-0.6b-gb10 logged 114.54/121.69 GiB
    free/total; samples/process_tables/compute-apps-csv-gb10-two-vllm-enginecore-noheader.txt the pids."""
    host_total, host_available = round(121.69 * (1 << 30)), round(114.54 * (1 << 30))
    gb10 = FakeGpu(
        name="NVIDIA GB10", uuid="GPU-gb10", pci_bus_id="0000000F:01:00.0", total=0, used=0, free=0, reserved=0,
        memory_error=pynvml.NVMLError_NotSupported,
        compute=[(1527324, 10468 * MIB), (1527352, 10468 * MIB)],
    )  # fmt: skip
    source = NvmlSource(nvml_module=FakePynvml([gb10]), host_memory=lambda: (host_total, host_available))
    gpu = source.read().gpus[0]
    assert gpu.state is GpuState.UNIFIED_MEMORY
    assert gpu.memory_api is MemoryApi.HOST
    assert (gpu.total_bytes, gpu.free_bytes) == (130663642563, 122986388521)
    assert gpu.used_bytes == host_total - host_available
    assert gpu.reserved_bytes is None
    assert gpu.process_bytes == 2 * 10468 * MIB


def test_mig_instances_report_their_own_memory() -> None:
    """samples/dcgm_metrics/mixed-rtx2000ada-a30mig-lowercase-hostname-fragment.txt: an A30 with a
    1g.6gb instance holding 2207 MiB free. The instance total is the profile's nominal 6 GiB."""
    instance = gpu_from_mib("NVIDIA A30 MIG 1g.6gb", 3, total_mib=6144, reserved_mib=0, used_mib=6144 - 2207,
                            bus_id="00000000:CA:00.0")  # fmt: skip
    a30 = gpu_from_mib("NVIDIA A30", 2, total_mib=24576, reserved_mib=0, used_mib=6144 - 2207,
                       bus_id="00000000:CA:00.0", mig_instances=[instance])  # fmt: skip
    gpu = read_one(a30)
    assert gpu.state is GpuState.MIG
    assert gpu.utilization_percent is None  # NVML has no utilisation under MIG
    assert len(gpu.mig_instances) == 1
    assert gpu.mig_instances[0].free_bytes == 2207 * MIB
    assert gpu.mig_instances[0].name == "NVIDIA A30 MIG 1g.6gb"


def test_real_pynvml_without_a_driver_gives_a_named_state() -> None:
    """The real library on this machine: either it finds a GPU, or it says why not."""
    node = NvmlSource().read()
    if node.nvml_state is NvmlState.OK:
        assert node.driver_version
    else:
        assert node.nvml_state in (
            NvmlState.LIBRARY_NOT_FOUND,
            NvmlState.NO_DRIVER,
            NvmlState.VERSION_MISMATCH,
        )
        assert node.nvml_message and node.gpus == ()


def test_vitals_are_read_in_nvmls_units_and_a_gpu_without_them_reads_none() -> None:
    """The first B200 of samples/nvidia_smi/b200-8gpu-default-table…: 29C, 187W / 1000W, 100 %; the SM
    clock of the H100 in query-gpu-csv-h100sxm-index-name-total-clock-driver.txt: 345 MHz. NVML answers
    in °C, milliwatts and MHz."""
    b200 = gpu_from_mib(
        "NVIDIA B200", 0, total_mib=183359, reserved_mib=0, used_mib=100536, bus_id="00000000:1B:00.0",
        utilization=100, temperature_c=29, power_mw=187_000, power_limit_mw=1_000_000, sm_clock_mhz=345,
    )  # fmt: skip
    gpu = read_one(b200)
    assert (gpu.utilization_percent, gpu.temperature_c, gpu.power_mw, gpu.power_limit_mw, gpu.sm_clock_mhz) == (
        100, 29, 187_000, 1_000_000, 345,
    )  # fmt: skip
    bare = read_one(h100_from_nvml_sample())  # NotSupported for each (a vGPU, a MIG slice)
    assert (bare.temperature_c, bare.power_mw, bare.power_limit_mw, bare.sm_clock_mhz) == (None,) * 4
    assert bare.state is GpuState.OK and bare.total_bytes == H100_TOTAL
