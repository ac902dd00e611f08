"""No test reads the test machine's own /proc/version or /dev/dxg: on a WSL2 test machine they would put the desktop
into every live node a test builds. tests/conftest.py points `read_host_desktop`'s defaults at absent fakes; here a
guard makes reading the real paths fail, and live nodes built the ways the tests build them (the source's
constructor with no reader, and `open_node_source`) still collect, with no desktop."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.commands.node_source import LiveSource, open_node_source
from kvtop.domain.host_desktop import DXG_PATH, PROC_VERSION_PATH
from kvtop.sources import host_desktop
from kvtop.sources.host_desktop import read_host_desktop
from kvtop.sources.nvml import NvmlSource
from tests.conftest import NO_HOST_DXG, NO_HOST_PROC_VERSION
from tests.fakes.fake_process_table import two_engine_node
from tests.sources.test_live import CountingLoader, fake_nvml_of, refused

REAL_PATHS = {Path(PROC_VERSION_PATH), Path(DXG_PATH)}


class RealHostRead(AssertionError):
    """A test read the machine's own /proc/version or /dev/dxg."""


@pytest.fixture
def real_paths_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening or probing the real paths raises (Path.open and Path.exists are what the reader uses)."""
    real_open, real_exists = Path.open, Path.exists

    def guarded_open(self: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self in REAL_PATHS:
            raise RealHostRead(f"the test machine's {self} was read")
        return real_open(self, *args, **kwargs)

    def guarded_exists(self: Path, *args, **kwargs) -> bool:  # type: ignore[no-untyped-def]
        if self in REAL_PATHS:
            raise RealHostRead(f"the test machine's {self} was probed")
        return real_exists(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", guarded_open)
    monkeypatch.setattr(Path, "exists", guarded_exists)


def test_the_guard_catches_a_read_of_the_real_paths(real_paths_refused: None) -> None:
    """The guard is live: the reader given the real paths fails under it (so the tests below would too)."""
    with pytest.raises(RealHostRead, match="/proc/version"):
        read_host_desktop(Path(PROC_VERSION_PATH), Path(DXG_PATH))


def test_the_readers_defaults_are_the_absent_fakes_in_every_test() -> None:
    """The node's own paths are the module's defaults; in a test they are the conftest's fakes, which do not exist."""
    assert (host_desktop.PROC_VERSION_FILE, host_desktop.DXG_DEVICE) == (NO_HOST_PROC_VERSION, NO_HOST_DXG)
    assert not NO_HOST_PROC_VERSION.exists() and not NO_HOST_DXG.exists()


def test_a_live_node_built_without_a_reader_never_reads_the_machine(real_paths_refused: None) -> None:
    node, table = two_engine_node()
    source = LiveSource(nvml=NvmlSource(nvml_module=fake_nvml_of(node)), table=table, model_loader=CountingLoader(),
                        http_client=refused())  # fmt: skip
    snapshot = source.collect()
    assert snapshot.observation.desktop is None and len(snapshot.engines) == 2


def test_the_entrys_live_node_never_reads_the_machine(real_paths_refused: None) -> None:
    """`open_node_source` (the CLI's and the app's entry) builds the live node with the default reader."""
    node, _ = two_engine_node()
    source = open_node_source(None, nvml=NvmlSource(nvml_module=fake_nvml_of(node)))
    assert isinstance(source, LiveSource)
    assert source.collect().observation.desktop is None
