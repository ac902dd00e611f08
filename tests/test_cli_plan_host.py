"""`kvtop plan` on hosts whose GPU memory is not the card's own: a unified-memory GB10, a desktop sharing the card.

Before this, `--gpu GB10` was an unknown GPU and a desktop was not said at all (#27). The figures are the
DGX Spark start's (case-trtllm-dgxspark-gpt-oss-120b: `device total memory 119.70 GiB`).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

QWEN = str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")


def plan_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--json", "--no-calibration-store", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_gb10_plan_states_what_the_host_is_assumed_to_leave(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, "--model", QWEN, "--engine", "sglang", "--gpu", "GB10")
    assert [note.split(" is assumed ")[0] for note in out["host_memory"]] == [
        "unified memory: what the host leaves to the GPU"
    ]
    assert "of 119.7 " in out["host_memory"][0]
    host = next(term for term in out["terms"] if term["term"] == "host")
    assert host["source"] == "assumed" and host["error_bytes"] > 0
    assert out["interval_term"] == "host"


def test_a_desktop_is_said_in_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, "--model", QWEN, "--engine", "sglang", "--gpu", "RTX3090", "--desktop")
    plain = plan_json(capsys, "--model", QWEN, "--engine", "sglang", "--gpu", "RTX3090")
    assert out["host_memory"][0].startswith("memory the desktop holds (not modelled)")
    assert plain["host_memory"] == []
    assert out["token_capacity"] == plain["token_capacity"]
    assert out["token_capacity_min"] < plain["token_capacity_min"]


def test_the_text_plan_prints_the_host_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--no-calibration-store", "--model", QWEN, "--engine", "vllm", "--gpu", "GB10"]) == 0
    text = capsys.readouterr().out
    assert "unified memory: what the host leaves to the GPU is assumed" in text
    assert "starts only where the host leaves what it asks free" in text


def test_a_jetson_orin_takes_its_total_from_the_operator(capsys: pytest.CaptureFixture[str]) -> None:
    """kvtop holds no log of an Orin's total: `--gpu` alone is refused and names --gpu-memory; given it, the plan
    is a unified-memory plan of that total."""
    assert (
        main(
            [
                "plan",
                "--no-calibration-store",
                "--model",
                QWEN,
                "--engine",
                "sglang",
                "--gpu",
                "Jetson-AGX-Orin-64GB",
            ]
        )
        != 0
    )
    assert "--gpu-memory" in capsys.readouterr().err
    out = plan_json(
        capsys,
        "--model",
        QWEN,
        "--engine",
        "sglang",
        "--gpu",
        "Jetson-AGX-Orin-64GB",
        "--gpu-memory",
        "61GiB",
    )
    assert "GiB of 61.0 " in out["host_memory"][0]
