"""An engine flag given before the log is said to be misplaced, not 'no such file: 0.9' (session 61, operator pass).

`kvtop explain --engine-version 0.5.0 LOG`: argparse does not know an engine's flags, so it read `0.5.0` as the log
and left LOG among the engine's flags; the error was `log: no such file: 0.5.0`, which names no way out.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

LOG = str(DATA / "cases" / "sglang" / "C01" / "engine.log")


@pytest.mark.parametrize(("flag", "value"), [("--engine-version", "0.5.0"), ("--tp", "2")])
def test_an_engine_flag_before_the_log_says_where_it_goes(
    capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    assert main(["explain", flag, value, LOG]) == 2
    _, err = capsys.readouterr()
    assert err.strip() == (
        f"kvtop: error: log: '{value}' is no file: kvtop read {flag}'s value as the log (an engine's flags go after "
        f"the log): kvtop explain {LOG} {flag} {value}, or write {flag}={value}"
    )


def test_a_missing_log_with_no_file_after_it_is_still_no_such_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "no-such.log", "--tp", "2"]) == 2
    _, err = capsys.readouterr()
    assert err.strip() == "kvtop: error: log: no such file: no-such.log"
