"""`plan --layouts` reads this node's earlier starts as `plan` reads them: a start `kvtop explain` stored moves the
layout's row to the figure it moves `plan`'s (`--layouts` once solved without the store, so a node's own start moved
`plan` and left the layout's row where it was).

The independent source is the engine's log: C13 (SGLang 0.4.1.post7, H100, Llama-3.1-8B, --mem-fraction-static
0.88) logs `max_total_num_tokens=444500`; the store's figures give (63.72 − 78.81 × 0.12) GiB ÷ 131,072 B = 444,520
tokens (tests/test_cli_calibration_store_engines.py works it line by line).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.cli import main
from kvtop.sources.calibration_store import OFF_ENV
from tests.data_paths import CASES, CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
SGLANG = ["--engine", "sglang", "--gpu", "H100", "--mem-fraction-static", "0.88", "--chunked-prefill-size", "8192",
          "--engine-version", "0.4.1.post7"]  # fmt: skip


def _json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    assert main(["plan", "--model", LLAMA_8B, "--json", *SGLANG, *flags]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _layout_tokens(capsys: pytest.CaptureFixture[str], *flags: str) -> int:
    (row,) = _json(capsys, "--layouts", "1x8 tp1", *flags)["layouts"]
    tokens: int = row["token_capacity"]
    return tokens


def test_a_stored_start_moves_the_layout_row_as_it_moves_plan(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store on whatever the caller's environment says (KVTOP_NO_CALIBRATION_STORE=1 once failed it): its own
    store is the empty XDG state folder every test gets (tests/conftest.py)."""
    monkeypatch.delenv(OFF_ENV, raising=False)
    before_plan, before_layout = _json(capsys)["token_capacity"], _layout_tokens(capsys)
    assert before_layout == before_plan  # no start stored: one solve
    assert main(["explain", str(CASES / "sglang" / "C13" / "engine.log"), "--model", LLAMA_8B, *SGLANG]) == 0
    capsys.readouterr()
    after_plan, after_layout = _json(capsys)["token_capacity"], _layout_tokens(capsys)
    assert abs(after_plan - 444_520) <= 8 and after_plan != before_plan  # the store moved plan to the log
    assert after_layout == after_plan  # and the layout's row with it
    assert _layout_tokens(capsys, "--no-calibration-store") == before_plan  # the store off: the row as before


DRAFTED = ["--model", "qwen3-235b-a22b", "--gpu", "H200", "--engine", "sglang", "--speculative-algorithm", "EAGLE3",
           "--draft-model", "qwen3-235b-a22b-eagle3", "--no-calibration-store", "--json"]  # fmt: skip


def test_a_layout_charges_the_launchs_draft_as_plan_does(capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen3-235B-A22B + its EAGLE3 draft, H200, TP4: the layout's row is `plan --tp 4`'s 304,541 tokens (the
    draft once dropped: 321,971)."""
    assert main(["plan", *DRAFTED, "--tp", "4"]) == 0
    planned = json.loads(capsys.readouterr().out)["token_capacity"]
    assert main(["plan", *DRAFTED, "--layouts", "1x8 tp4"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["layouts"]
    assert row["token_capacity"] == planned and "--speculative-draft-model-path" in row["engine_flags"]


@pytest.mark.parametrize(("flags", "field"), [
    (["--layouts", "1x8 tp4", "--host-cache", "100GiB"], "--host-cache"),  # split over ranks each layout changes
    (["--compare", "sglang,vllm"], "--draft-model"),  # every engine at its defaults
])  # fmt: skip
def test_a_deployment_flag_a_side_by_side_cannot_carry_is_refused(
    capsys: pytest.CaptureFixture[str], flags: list[str], field: str
) -> None:
    argv = [flag for flag in DRAFTED if flag not in ("--engine", "sglang", "--speculative-algorithm", "EAGLE3")]
    assert main(["plan", *argv, "--tp", "4", *flags]) == 2
    assert f"error: {field}:" in capsys.readouterr().err
