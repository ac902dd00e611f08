"""What SGLang reads as the free memory of a unified-memory device (GB10, Jetson), by release
(`get_available_gpu_memory`, the free memory before and after the load that its budget is sized from):

- to 0.5.3: `torch.cuda.mem_get_info()` with no integrated case (`srt/utils.py:406` at 0.5.3rc0,
  `srt/utils/common.py:412` at 0.5.3): the page cache counts as held.
- 0.5.4 – 0.5.8: psutil's `virtual_memory().available` on SM 87, 110, 121 (`srt/utils/common.py:461-467` at 0.5.4,
  `:474-480` at 0.5.5, `:510-516` at 0.5.6, `SHARED_SYSMEM_DEVICE_MEM_SMS`; 0.5.7 and 0.5.8 not read).
- 0.5.9 on: the same where `props.is_integrated` (`srt/utils/common.py:528-533` at 0.5.9, `:454-459` at 0.5.22).

The kernel's available memory counts the page cache it can reclaim as free."""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

AVAILABLE_MEMORY_ERAS: Eras[bool] = Eras((
    Era("", False, "srt/utils/common.py:412 at 0.5.3: torch.cuda.mem_get_info(), no integrated case"),
    Era("0.5.4", True, "srt/utils/common.py:461-467 at 0.5.4: psutil available on SM 87, 110, 121"),
    Era("0.5.9", True, "srt/utils/common.py:528-533 at 0.5.9: psutil available where props.is_integrated"),
))  # fmt: skip


def reads_available_memory(version: ResolvedVersion) -> bool:
    """Whether this release reads the kernel's available memory (the page cache free) on a unified device."""
    return AVAILABLE_MEMORY_ERAS.at(version)
