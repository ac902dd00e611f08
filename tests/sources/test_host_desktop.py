"""The host-desktop source reads the paths it is given (a fake /proc/version, a fake /dev/dxg), never the test
machine's own (tests/data/host/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.host_desktop import DesktopEvidence
from kvtop.sources.host_desktop import read_host_desktop
from tests.data_paths import DATA

WSL2_PATH = DATA / "host" / "proc_version_wsl2"
UBUNTU_PATH = DATA / "host" / "proc_version_ubuntu"


def test_a_wsl2_proc_version_is_read_as_the_desktop_fact(tmp_path: Path) -> None:
    desktop = read_host_desktop(WSL2_PATH, tmp_path / "dxg")
    assert desktop is not None and desktop.evidence is DesktopEvidence.PROC_VERSION
    assert desktop.detail == "5.15.167.4-microsoft-standard-WSL2"


def test_a_dxg_device_beside_a_stock_kernel_string_is_a_desktop(tmp_path: Path) -> None:
    (tmp_path / "dxg").touch()
    desktop = read_host_desktop(UBUNTU_PATH, tmp_path / "dxg")
    assert desktop is not None and desktop.evidence is DesktopEvidence.DXG


def test_nothing_read_or_nothing_shown_is_no_fact(tmp_path: Path) -> None:
    assert read_host_desktop(UBUNTU_PATH, tmp_path / "dxg") is None
    assert read_host_desktop(tmp_path / "no-such-version", tmp_path / "dxg") is None
