"""An empty `--cmd ""` is refused as a blank `--cmd "   "` is, by plan and explain alike: an empty string is a launch
command given and unreadable, never read as no --cmd (session 64's operator walk: plan planned it silently with the
defaults while the blank one was refused)."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
LOG = CONFIGS.parent / "cases" / "sglang" / "C04" / "engine.log"
REFUSED = "not a launch command of an engine kvtop models"


@pytest.mark.parametrize("cmd", ["", "   "])
@pytest.mark.parametrize("command", [
    ["plan", "--model", LLAMA, "--gpu", "H100"],
    ["explain", str(LOG), "--model", LLAMA, "--gpu", "H200"],
])  # fmt: skip
def test_an_empty_cmd_is_the_blank_one_s_error(
    capsys: pytest.CaptureFixture[str], command: list[str], cmd: str
) -> None:
    assert main([*command, "--cmd", cmd]) != 0
    out, err = capsys.readouterr()
    assert REFUSED in err and "--cmd" in err and not out
