"""TensorRT-LLM's rule reads each measured figure (docs/engines/trtllm.md: the free memory before and after the load,
the weights, the reserve as --non-kv-memory): none is named as unread, and each moves the plan."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main

ARGS = ("--model", "llama-3.1-8b", "--engine", "trtllm", "--engine-version", "1.0.0", "--gpu", "H100")


def plan_json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    assert main(["plan", "--json", "--no-calibration-store", *ARGS, *flags]) == 0
    return json.loads(capsys.readouterr().out)


def named(out: dict) -> list[str]:
    """The flags the plan says its engine's rule does not read, in the JSON and in the notes alike."""
    in_json = [f["flag"] for f in out["flags_not_read"] if f["why"] == "not_read_by_rule"]
    in_notes = [n.split(" not read by ")[0] for n in out["notes"] if " not read by TensorRT-LLM's rule: " in n]
    assert in_json == in_notes
    return in_json


@pytest.mark.parametrize("flag,size", [("--free-memory", "70GiB"), ("--free-after-load", "50GiB"),
                                       ("--weights-memory", "30GiB"), ("--non-kv-memory", "20GiB")])
def test_every_measured_figure_is_read(capsys: pytest.CaptureFixture[str], flag: str, size: str) -> None:
    bare = plan_json(capsys)
    given = plan_json(capsys, flag, size)
    assert given["token_capacity"] < bare["token_capacity"] and named(given) == []
