"""A setting given both in `--cmd` and as kvtop's own flag, at different values: kvtop's flag wins, said on stderr
in one line naming both values (before, `--cmd '... --tensor-parallel-size 2' --tp 4` planned TP4 in silence)."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA = str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json")
NOTE = "kvtop: note: the flag given to kvtop wins where the --cmd says otherwise: "


def test_the_tp_given_to_kvtop_wins_and_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    cmd = f"vllm serve {LLAMA} --tensor-parallel-size 2 --gpu-memory-utilization 0.8"
    assert main(["plan", "--cmd", cmd, "--tp", "4", "--gpu-memory-utilization", "0.85", "--gpu", "H100"]) == 0
    out, err = capsys.readouterr()
    assert "TP4 on 4× H100" in out.splitlines()[0]
    assert err.splitlines() == [
        NOTE + "--gpu-memory-utilization 0.85 over the --cmd's 0.8; --tensor-parallel-size 4 over the --cmd's 2"
    ]


def test_the_same_value_both_ways_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    cmd = f"sglang serve --model-path {LLAMA} --tp-size 4"
    assert main(["plan", "--cmd", cmd, "--tp", "4", "--gpu", "H100"]) == 0
    assert capsys.readouterr().err == ""
