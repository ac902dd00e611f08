"""What the probe must know about a real GPU before and after it runs: who else is on it, and
how much is free (NVML's view), so that it can refuse without `--yes` and check the release."""

from __future__ import annotations

from collections.abc import Callable

from kvtop.units import fmt_gib


def gpu_index_of(device: str) -> int | None:
    """`cuda:3` → 3; None for the CPU."""
    return int(device.split(":", 1)[1]) if device.startswith("cuda:") and device[5:].isdigit() else None


def other_processes(index: int) -> list[str]:
    """One line per process NVML sees on GPU `index` (pid, name, memory), attributed by psutil."""
    from kvtop.sources.nvml import NvmlSource
    from kvtop.sources.processes import PsutilProcessTable, attribute_node

    source = NvmlSource()
    try:
        node = attribute_node(source.read(), PsutilProcessTable())
    finally:
        source.close()
    gpu = node.gpu(index)
    if gpu is None:
        return []
    return [
        f"pid {p.pid} ({p.title or p.name or '?'}, {fmt_gib(p.used_bytes) if p.used_bytes is not None else 'memory unknown'})"
        for p in gpu.processes
    ]


def free_memory_reader(index: int) -> Callable[[], int] | None:
    """A callable reading GPU `index`'s free bytes from NVML; None when NVML cannot say."""
    from kvtop.sources.nvml import NvmlSource

    def read() -> int:
        source = NvmlSource()
        try:
            gpu = source.read().gpu(index)
        finally:
            source.close()
        if gpu is None or gpu.free_bytes is None:
            raise RuntimeError(f"NVML reports no free memory for GPU {index}")
        return gpu.free_bytes

    try:
        read()
    except RuntimeError:
        return None
    return read
