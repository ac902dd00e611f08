"""Shared fixtures: the real inputs in ../shared (configs, cases, samples)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = (Path(__file__).resolve().parents[1] / ".." / "shared").resolve()
CONFIGS = SHARED / "configs"
CASES = SHARED / "cases"
SAMPLES = SHARED / "samples"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"../shared is missing ({SHARED}); the tests read real configs and logs from it")
    return SHARED
