"""Whether a desktop shares this node's GPUs, as the node shows it: the kernel's version string and WSL2's GPU
device (what they mean: `kvtop.domain.host_desktop`). The paths are parameters, and the defaults are read from this
module when called (`PROC_VERSION_FILE`, `DXG_DEVICE`), so the tests point every live node at fake ones
(tests/conftest.py) and never read the test machine's own."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.host_desktop import DXG_PATH, PROC_VERSION_PATH, HostDesktop, host_desktop

# the kernel's version string is one line; more is never read
VERSION_READ_LIMIT = 1024

#: The node's own paths, used when a caller names none (the live node); tests/conftest.py replaces them.
PROC_VERSION_FILE = Path(PROC_VERSION_PATH)
DXG_DEVICE = Path(DXG_PATH)


def read_host_desktop(proc_version: Path | None = None, dxg: Path | None = None) -> HostDesktop | None:
    """The desktop fact of this node (None: nothing shows WSL, or nothing could be read); a path not given is the
    node's own (`PROC_VERSION_FILE`, `DXG_DEVICE`), looked up at the call."""
    proc_version = proc_version if proc_version is not None else PROC_VERSION_FILE
    dxg = dxg if dxg is not None else DXG_DEVICE
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
