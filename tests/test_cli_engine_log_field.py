"""A bad `--engine-log` is named as that flag, not as explain's `log` (session 44, task E2).

`kvtop snapshot --demo --engine-log /tmp/nope.log` said "kvtop: error: log: no such engine log file":
there is no `log` argument in that command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.cli import main


@pytest.mark.parametrize("command", [["snapshot", "--demo"], ["diagnose", "--demo"]])
def test_a_missing_engine_log_is_named_as_the_flag(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "absent.log"
    assert main([*command, "--engine-log", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert err.strip().splitlines() == [f"kvtop: error: --engine-log: no such file: {missing}"]
    assert "Traceback" not in out + err


def test_explain_still_names_its_positional_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(tmp_path)]) == 2
    # the path leads, as 'no such file: …' (session 69: '… not an engine log file in /tmp' read as a file inside it)
    assert capsys.readouterr().err.strip() == f"kvtop: error: log: {tmp_path} is a directory, not an engine log file"
