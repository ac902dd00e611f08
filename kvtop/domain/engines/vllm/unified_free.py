"""What vLLM reads as the free memory of a unified-memory device (GB10, Jetson), by release: the free memory its
start check (`request_memory`: 'Free memory on device … is less than desired GPU memory utilization') compares with
total × `--gpu-memory-utilization`, and that its non-torch memory is measured from.

- to v0.11.0: `torch.cuda.mem_get_info()` with no integrated case (`vllm/utils/__init__.py:2734`
  `MemorySnapshot.measure`): cudaMemGetInfo's free, which leaves out the page cache, so the page cache of a
  checkpoint read before counts as held (the `vllm/vllm-openai` 0.11-line start refused at `(61.05/119.7 GiB)` may
  be one: its release, v0.11.0 or v0.11.1, is not known; the cudaMemGetInfo span holds it, the available-memory
  span leaves it out: calibration/host_memory.py).
- v0.11.1 – v0.19.x: psutil's `virtual_memory().available` on compute capabilities (8, 7), (11, 0), (12, 1)
  (Orin, Thor, Spark: `vllm/utils/mem_utils.py:86-102` at v0.11.1, v0.11.2, v0.12.0 and v0.13.0, `:105-122` at
  v0.15.0 – v0.19.0).
- v0.20.0 on: the same where `current_platform.is_integrated_gpu` (torch's `is_integrated`;
  `vllm/utils/mem_utils.py:109-116` at v0.20.0 – v0.22.0, `:146-154` at v0.24.0, `platforms/cuda.py:672-673`;
  `:148-155` at v0.27.0 and v0.28.0, `:143` at v0.30.0 – v0.33.0, `device_memory_info` `:105-123` at v0.34.0).
  **Not modelled**: from v0.34.0 CUDA under WSL is left out (`:119-122`, 'WSL guest RAM does not describe CUDA's
  memory allocation budget'), so a unified NVIDIA part under WSL2 reads cudaMemGetInfo's free memory there; kvtop
  reads the available memory on every unified device from v0.11.1 (no such start measured; session 71).
No release caps the budget on such a device (vllm#49760's `cap_unified_memory_budget` is in no wheel through v0.34.0).

The kernel's available memory counts the page cache it can reclaim as free: from v0.11.1 what the host holds at
the check is the OS, its services and other processes, not the page cache."""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

AVAILABLE_MEMORY_ERAS: Eras[bool] = Eras((
    Era("", False, "vllm/utils/__init__.py:2734 at v0.11.0: torch.cuda.mem_get_info(), no integrated case"),
    Era("0.11.1", True, "vllm/utils/mem_utils.py:86-102 at v0.11.1: psutil available on SM (8,7), (11,0), (12,1)"),
    Era("0.20.0", True, "vllm/utils/mem_utils.py:109-116 at v0.20.0: psutil available where is_integrated_gpu"),
))  # fmt: skip


def reads_available_memory(version: ResolvedVersion) -> bool:
    """Whether this release reads the kernel's available memory (the page cache free) on a unified device."""
    return AVAILABLE_MEMORY_ERAS.at(version)
