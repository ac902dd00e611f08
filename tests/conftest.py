"""Shared fixtures; the real inputs' paths come from tests/data_paths.py (re-exported here)."""

from __future__ import annotations

from tests.data_paths import CASES, CONFIGS, DATA, SAMPLES

__all__ = ["CASES", "CONFIGS", "DATA", "SAMPLES"]
