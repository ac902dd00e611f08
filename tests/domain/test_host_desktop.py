"""What a node's own files say about a desktop sharing its GPU (`kvtop.domain.host_desktop`): the kernel's version
string as people printed it (tests/data/host/SOURCES.md), read here as text, never the test machine's."""

from __future__ import annotations

from kvtop.domain.host_desktop import DesktopEvidence, host_desktop, is_wsl_kernel, kernel_release
from tests.data_paths import DATA

WSL2 = (DATA / "host" / "proc_version_wsl2").read_text()
UBUNTU = (DATA / "host" / "proc_version_ubuntu").read_text()


def test_a_wsl2_kernel_is_a_desktop_read_from_proc_version() -> None:
    """Docker Desktop's container shares WSL2's kernel, '5.15.167.4-microsoft-standard-WSL2': Windows' desktop drives
    the card. The sentence names the release and where it was read, never the builder's address on that line."""
    desktop = host_desktop(WSL2, dxg_present=False)
    assert desktop is not None and desktop.evidence is DesktopEvidence.PROC_VERSION
    assert desktop.detail == "5.15.167.4-microsoft-standard-WSL2"
    assert desktop.origin == "read from /proc/version"
    assert desktop.sentence == (
        "a desktop (Windows, WSL2) may hold memory on any GPU of this node, read from /proc/version: "
        "5.15.167.4-microsoft-standard-WSL2"
    )
    assert "root@" not in desktop.sentence


def test_a_stock_linux_kernel_shows_no_desktop_unless_wsl2s_gpu_device_is_there() -> None:
    """Ubuntu 22.04's '5.15.0-48-generic' names no WSL kernel: nothing is known (None, not 'no desktop'); /dev/dxg,
    the DirectX kernel's device only WSL2 has, is a desktop whatever the kernel string says."""
    assert kernel_release(UBUNTU) == "5.15.0-48-generic" and not is_wsl_kernel(UBUNTU)
    assert host_desktop(UBUNTU, dxg_present=False) is None
    assert host_desktop(None, dxg_present=False) is None
    seen = host_desktop(UBUNTU, dxg_present=True)
    assert seen is not None and seen.evidence is DesktopEvidence.DXG and seen.origin == "seen /dev/dxg"


def test_the_builders_words_on_the_line_do_not_make_a_wsl_kernel() -> None:
    """Only the release decides: a stock kernel whose build line happened to carry 'microsoft' elsewhere (here the
    Ubuntu line with a builder renamed) is not WSL's."""
    renamed = UBUNTU.replace("buildd@lcy02-amd64-080", "buildd@microsoft-wsl-mirror")
    assert not is_wsl_kernel(renamed) and host_desktop(renamed, dxg_present=False) is None


def test_a_line_not_worded_linux_version_shows_only_its_first_word() -> None:
    """A version string without the kernel's 'Linux version' words (the Ubuntu line with them cut off): its first word
    is the release, '5.15.0-48-generic'; the builder's address after it is neither shown nor read for 'microsoft'."""
    cut = UBUNTU.removeprefix("Linux version ").replace("buildd@lcy02-amd64-080", "buildd@microsoft-wsl-mirror")
    assert kernel_release(cut) == "5.15.0-48-generic"
    assert not is_wsl_kernel(cut) and host_desktop(cut, dxg_present=False) is None
    wsl_cut = WSL2.removeprefix("Linux version ")
    desktop = host_desktop(wsl_cut, dxg_present=False)
    assert desktop is not None and desktop.detail == "5.15.167.4-microsoft-standard-WSL2"
