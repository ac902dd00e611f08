"""The layout `plan` suggests where a launch does not fit ("fits on 4 GPUs: N tokens") is `plan`'s solve of that
layout: the launch's speculative draft charged as `plan --tp 4` charges it (the suggestion once dropped the draft's
architecture: 318,582 tokens against `plan --tp 4`'s 304,541 for Qwen3-235B-A22B + its EAGLE3 draft on H200).

The independent source is `plan`'s own path for the suggested flags (`planned_capacity`, judged against the engines'
logs by the calibration corpus tests).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.cli import main

LAUNCH = ["--model", "qwen3-235b-a22b", "--gpu", "H200", "--engine", "sglang", "--speculative-algorithm", "EAGLE3",
          "--draft-model", "qwen3-235b-a22b-eagle3", "--no-calibration-store", "--json"]  # fmt: skip


def _json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    assert main(["plan", *LAUNCH, *flags]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_the_suggested_layout_is_plans_figure_with_the_draft(capsys: pytest.CaptureFixture[str]) -> None:
    one = _json(capsys)
    assert one["token_capacity"] == 0  # 235B on one H200 does not fit
    fit = one["smallest_fit"]
    assert fit["gpus"] == 4 and fit["engine_flags"][:2] == ["--tp-size", "4"]
    assert "--speculative-draft-model-path" in fit["engine_flags"]
    assert fit["token_capacity"] == _json(capsys, "--tp", "4")["token_capacity"]  # 304,541 both
