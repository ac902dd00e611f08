"""A bug's traceback shows no secret (session 61).

An error kvtop does not expect escaped `kvtop.cli.main` and Python printed it whole: a message that quotes an input
(pydantic's `input_value={'api_key': …}`, a command line) printed the key. `main` now prints the traceback as Python
would, each line redacted (`commands.output.crash_report`), and exits 1 as Python does.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import pytest

import kvtop.commands.snapshot as snapshot_command
from kvtop.cli import main

KEY = "Q7vXk2pLm9"


def _failing(args: argparse.Namespace, extra: Sequence[str]) -> int:
    raise ValueError(f"1 validation error for LaunchSettings: input_value={{'api_key': '{KEY}', 'tp': 0}}")


def test_a_bug_s_traceback_is_printed_without_the_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(snapshot_command, "run", _failing)
    assert main(["snapshot"]) == 1
    out, err = capsys.readouterr()
    leaked = KEY in out + err
    assert not leaked
    assert err.startswith("kvtop: internal error (a bug in kvtop; report it with what follows)\nTraceback")
    assert "in _failing" in err  # the frames stay
    assert err.rstrip().endswith("ValueError: 1 validation error for LaunchSettings: input_value={'api_key': '***', 'tp': 0}")
