"""llama.cpp allocates the cells -c asks for and the plan checks they fit in the free memory before load less the
weights (docs/engines/llamacpp.md §1, src/llama-context.cpp): --free-after-load and --non-kv-memory are not read.
Before, both were taken with no word; now both are named."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main

ARGS = ("--model", "llama-3.1-8b", "--engine", "llamacpp", "--engine-version", "b6500", "--gpu", "H100")


def plan_json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    assert main(["plan", "--json", "--no-calibration-store", *ARGS, *flags]) == 0
    return json.loads(capsys.readouterr().out)


def named(out: dict) -> list[str]:
    """The flags the plan says its engine's rule does not read, in the JSON and in the notes alike."""
    in_json = [f["flag"] for f in out["flags_not_read"] if f["why"] == "not_read_by_rule"]
    in_notes = [n.split(" not read by ")[0] for n in out["notes"] if " not read by llama.cpp's rule: " in n]
    assert in_json == in_notes
    return in_json


def test_unread_figures_are_named_and_move_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys)
    given = plan_json(capsys, "--free-after-load", "1GiB", "--non-kv-memory", "70GiB")
    assert (given["token_capacity"], given["fits"]) == (bare["token_capacity"], True)
    assert named(given) == ["--free-after-load", "--non-kv-memory"] and named(bare) == []


def test_the_free_memory_it_reads_is_not_named(capsys: pytest.CaptureFixture[str]) -> None:
    """1 GiB free before load cannot hold the 8B model's weights: the fit it checks fails, and nothing is named."""
    given = plan_json(capsys, "--free-memory", "1GiB")
    assert given["fits"] is False and named(given) == []
