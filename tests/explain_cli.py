"""`kvtop explain LOG … --json` run in-process, for the tests that read its JSON (one helper, not one per file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.cli import main


def explain_json(capsys: pytest.CaptureFixture[str], log: Path, *argv: str) -> dict[str, Any]:
    """The JSON `kvtop explain LOG ARGV --json` prints; the command must succeed (exit 0)."""
    assert main(["explain", str(log), *argv, "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out
