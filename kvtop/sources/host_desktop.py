"""Whether a desktop shares this node's GPUs, as the node shows it: the kernel's version string and WSL2's GPU
device (what they mean: `kvtop.domain.host_desktop`). The paths are parameters, so tests read a fake one."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.host_desktop import DXG_PATH, PROC_VERSION_PATH, HostDesktop, host_desktop

# the kernel's version string is one line; more is never read
VERSION_READ_LIMIT = 1024


def read_host_desktop(
    proc_version: Path = Path(PROC_VERSION_PATH), dxg: Path = Path(DXG_PATH)
) -> HostDesktop | None:
    """The desktop fact of this node (None: nothing shows WSL, or nothing could be read)."""
    try:
        with proc_version.open(encoding="utf-8", errors="replace") as handle:
            text: str | None = handle.read(VERSION_READ_LIMIT)
    except OSError:
        text = None
    try:
        dxg_present = dxg.exists()
    except OSError:
        dxg_present = False
    return host_desktop(text, dxg_present)
