"""`plan --compare` reads the same solve as `plan --engine X`: each engine's row, and each same-budget row's flags
planned again, give `plan`'s figure and its interval for the same launch.

The independent source is `plan`'s own path (`planned_capacity`, which the calibration corpus tests judge against
the engines' logs); `--compare` once solved with the plain `predict` (README llama-3-70b TP4 H100: vLLM 559,104
tokens against `plan`'s 509,952).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA70 = str(CONFIGS / "meta-llama--Llama-3.1-70B.json")
QWEN8 = str(CONFIGS / "Qwen--Qwen3-8B.json")
QWEN30 = str(CONFIGS / "Qwen--Qwen3-30B-A3B.json")
OFF = ["--no-calibration-store"]
# (model, the launch's kvtop flags, the engines compared): several engines, a part of a card, vLLM the reference
LAUNCHES = [
    (LLAMA70, ["--tp", "4", "--gpu", "H100"], "sglang,vllm,lmdeploy,trtllm"),
    (QWEN8, ["--gpu", "H100", "--gpu-memory", "40GiB"], "trtllm,sglang,vllm"),
    (QWEN30, ["--tp", "2", "--gpu", "H200"], "vllm,sglang,lmdeploy"),
]
PLANNED = ("token_capacity", "token_capacity_min", "token_capacity_max", "kv_budget_min_bytes", "kv_budget_max_bytes",
           "interval_kind")  # fmt: skip


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main(argv) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


@pytest.mark.parametrize(("model", "flags", "engines"), LAUNCHES, ids=["llama70-tp4", "qwen8-40gib", "qwen30-vllm-ref"])
def test_each_row_is_plans_figure_and_interval(
    capsys: pytest.CaptureFixture[str], model: str, flags: list[str], engines: str
) -> None:
    compared = _json(capsys, ["plan", "--model", model, *flags, *OFF, "--compare", engines, "--json"])
    for row in compared["engines"]:
        plan = _json(capsys, ["plan", "--model", model, *flags, *OFF, "--engine", row["engine"], "--json"])
        assert {key: row[key] for key in PLANNED} == {key: plan[key] for key in PLANNED}, row["engine"]
        assert row["kv_budget_bytes"] == plan["kv_budget_bytes"]
        assert row["token_capacity"] > 0 and row["token_capacity_min"] < row["token_capacity_max"]
    target = compared["target_kv_budget_bytes"]
    reference = next(row for row in compared["engines"] if row["engine"] == compared["reference"])
    assert target == reference["kv_budget_bytes"]  # the budget matched is the reference's planned one
    for same in compared["same_budget"]:  # its flags planned again: the same figure and interval
        gpu = [flag for flag in flags if flag not in ("--tp", "2", "4")]
        plan = _json(capsys, ["plan", "--model", model, *gpu, *OFF, "--engine", same["engine"], *same["flags"], "--json"])
        assert (same["token_capacity"], same["token_capacity_min"], same["token_capacity_max"]) == (
            plan["token_capacity"], plan["token_capacity_min"], plan["token_capacity_max"]), same["engine"]  # fmt: skip


@pytest.mark.parametrize("flags", [["--nodes", "2"], ["--gpus-per-node", "8"]])
def test_nodes_are_refused_not_ignored(capsys: pytest.CaptureFixture[str], flags: list[str]) -> None:
    """`plan` places the launch on the nodes named; `--compare` places none, and said nothing of them before."""
    assert main(["plan", "--model", LLAMA70, "--tp", "4", "--compare", "vllm,sglang", *OFF, *flags]) == 2
    assert f"error: {flags[0]}: --compare compares the engines per rank" in capsys.readouterr().err
