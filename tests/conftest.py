"""Shared fixtures; the real inputs' paths come from tests/data_paths.py (re-exported here)."""

from __future__ import annotations

from importlib.util import find_spec

import pytest

from tests.data_paths import CASES, CONFIGS, DATA, SAMPLES

__all__ = ["CASES", "CONFIGS", "DATA", "SAMPLES"]


@pytest.fixture(scope="session")
def needs_torch() -> None:
    """Skip, with the reason, a test whose probe really allocates: that takes torch (the probe extra)."""
    if find_spec("torch") is None:
        pytest.skip("torch is not installed: the probe's real allocations need it (pip install '.[probe]')")


@pytest.fixture(autouse=True)
def _private_xdg_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test (and every kvtop it starts) gets its own XDG state and config directories: the
    calibration store, the actions log and the TUI's settings of the person running the tests are
    never read or written."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
