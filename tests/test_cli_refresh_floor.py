"""A refresh interval below a tenth of a second is refused before anything runs.

The TUI's reader (ui/polling.py) reads NVML and every engine's /metrics and server info, posts the
snapshot, then waits `--interval`: `kvtop --interval 0.0001` polled the engines' HTTP servers back to
back, and `kvtop export --interval 0.0001` collected as fast. nvtop's shortest delay (`-d`, tenths of a
second) and htop's (`-d 1`) are 0.1 s; kvtop's floor is the same.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kvtop.cli import main


@pytest.mark.parametrize(
    ("argv", "prog"),
    [
        (["--demo", "--interval", "0.0001"], "kvtop"),  # the TUI: were it accepted, it would start (the timeout fails it)
        (["--demo", "--interval", "0.05", "snapshot"], "kvtop"),
        (["export", "--demo", "--listen", "127.0.0.1:0", "--interval", "0.01"], "kvtop export"),
    ],
)
def test_an_interval_under_a_tenth_of_a_second_is_refused(argv: list[str], prog: str) -> None:
    result = subprocess.run([sys.executable, "-m", "kvtop", *argv], capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("kvtop: error: --interval: must be at least 0.1 s")  # one prefix for every error
    assert result.stderr.count("\n") == 1


def test_a_tenth_of_a_second_is_allowed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo", "--interval", "0.1", "snapshot"]) == 0
    assert capsys.readouterr().out.startswith("kvtop snapshot · demo:llama70b-tp8-sglang")


@pytest.mark.parametrize("interval_s", [0.05, 0.0, float("nan")])
def test_the_app_itself_applies_the_same_floor(interval_s: float) -> None:
    """The TUI's constructor, reached by code that skips the CLI, refuses what `--interval` refuses and says it
    the same way (it said 'must be positive' and let 0.05 s through)."""
    from kvtop.domain.errors import InputError
    from kvtop.ui.base_app import KvtopBaseApp

    with pytest.raises(InputError, match=r"^--interval: must be at least 0\.1 s") as refused:
        KvtopBaseApp(theme=None, interval_s=interval_s)
    assert refused.value.field == "--interval"
