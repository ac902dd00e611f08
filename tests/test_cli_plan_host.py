"""`kvtop plan` on hosts whose GPU memory is not the card's own: a unified-memory GB10, a desktop sharing the card.

Before this, `--gpu GB10` was an unknown GPU and a desktop was not said at all (#27). The figures are the
DGX Spark start's (case-trtllm-dgxspark-gpt-oss-120b: `device total memory 119.70 GiB`).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS

QWEN = str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")


def plan_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--json", "--no-calibration-store", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_gb10_plan_states_what_the_host_is_assumed_to_leave(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, "--model", QWEN, "--engine", "sglang", "--gpu", "GB10")
    unified = out["host_memory"]["unified"]
    assert unified["note"].split(" is assumed ")[0] == "unified memory: what the host leaves to the GPU"
    assert "of 119.7 " in unified["note"] and out["host_memory"]["desktop"] is None
    # the assumed share, 29.34 % ± 23.51 % of the 119.70 GiB the DGX Spark start printed, in the budget
    assert abs(unified["held_bytes"] / GIB - 0.2934 * 119.70) < 0.01
    assert abs(unified["error_bytes"] / GIB - 0.2351 * 119.70) < 0.01
    assert unified["charged"] is True and unified["start_verdict"] is None
    host = next(term for term in out["terms"] if term["term"] == "host")
    assert host["source"] == "assumed" and host["error_bytes"] > 0
    assert out["interval_term"] == "host"


def test_a_desktop_is_said_in_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, "--model", QWEN, "--engine", "sglang", "--gpu", "RTX3090", "--desktop")
    plain = plan_json(capsys, "--model", QWEN, "--engine", "sglang", "--gpu", "RTX3090")
    desktop = out["host_memory"]["desktop"]
    assert desktop["note"].startswith("memory the desktop holds (not modelled)")
    assert desktop["low_end_bytes"] == 844 << 20  # 9 blocks × 75 MiB ÷ 0.8 of lmdeploy#1703 (test_host_memory)
    assert plain["host_memory"] == {"unified": None, "desktop": None}
    assert out["token_capacity"] == plain["token_capacity"]
    assert out["token_capacity_min"] < plain["token_capacity_min"]


def test_a_vllm_gb10_plan_gives_the_start_verdict_typed(capsys: pytest.CaptureFixture[str]) -> None:
    """`Free memory on device cuda:0 (56.65/119.7 GiB) on startup is less than desired GPU memory utilization (0.92,
    110.12 GiB)` (search-index id 59813453928): at 0.92 the host may hold at most 119.7 − 110.12 = 9.58 GiB, below
    the assumed centre 0.2934 × 119.7 = 35.1 GiB but above its low end (0.2934 − 0.2351) × 119.7 = 7.0 GiB."""
    out = plan_json(capsys, "--model", QWEN, "--engine", "vllm", "--gpu", "GB10", "--gpu-memory-utilization", "0.92")
    unified = out["host_memory"]["unified"]
    assert abs(unified["most_held_bytes"] / GIB - (119.7 - 110.12)) < 0.01
    assert abs(unified["start_needs_bytes"] / GIB - 110.12) < 0.01
    assert unified["start_verdict"] == "refused_at_centre" and unified["charged"] is False


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
    assert "GiB of 61.0 " in out["host_memory"]["unified"]["note"]
