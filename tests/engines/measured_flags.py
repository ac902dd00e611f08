"""Helpers the tests/engines/*/test_measured_not_read.py modules share: plan through the CLI as JSON, and the flags
the plan names as not read by its engine's rule. Kept here, not in one test module another imports: a test module
holds tests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.cli import main


def plan_json(capsys: pytest.CaptureFixture[str], args: tuple[str, ...], *flags: str) -> dict[str, Any]:
    """The plan's JSON for the base arguments `args` plus `flags`; the command must succeed."""
    assert main(["plan", "--json", "--no-calibration-store", *args, *flags]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def named(out: dict[str, Any], rule: str) -> list[str]:
    """The flags the plan says `rule` (the engine's display name, e.g. "vLLM") does not read, in the JSON and in
    the notes alike."""
    in_json = [f["flag"] for f in out["flags_not_read"] if f["why"] == "not_read_by_rule"]
    in_notes = [n.split(" not read by ")[0] for n in out["notes"] if f" not read by {rule}'s rule: " in n]
    assert in_json == in_notes
    return in_json
