"""`kvtop explain LOG --tp N` with a TP the model cannot run on: an operator trial got exit 0 and 'verdict:
INSUFFICIENT — kvtop cannot rebuild this log: --tp: …', a verdict on the log for a flag the operator mistyped; it is
refused in one line naming --tp, as `plan` refuses it. Qwen3-235B-A22B has 64 attention heads (its config.json's
num_attention_heads); the log (tests/data/cases/sglang/C01) ran at TP 4."""

from __future__ import annotations

import pytest

from tests.cli_in_process import run_kvtop
from tests.conftest import CASES, CONFIGS

LOG = str(CASES / "sglang" / "C01" / "engine.log")
QWEN3_235B = str(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.json")


@pytest.mark.parametrize(("typed", "said"), [("3", "64 attention heads do not divide over attention TP 3"),
                                             ("128", "64 attention heads do not divide over attention TP 128")])
def test_a_typed_tp_the_model_cannot_run_on_is_refused(typed: str, said: str) -> None:
    result = run_kvtop("explain", LOG, "--model", QWEN3_235B, "--tp", typed, "--no-calibration-store")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"kvtop: error: --tp: {said}")


def test_the_logs_own_tp_typed_again_is_explained() -> None:
    result = run_kvtop("explain", LOG, "--model", QWEN3_235B, "--tp", "4", "--no-calibration-store")
    assert result.returncode == 0 and "verdict:" in result.stdout
