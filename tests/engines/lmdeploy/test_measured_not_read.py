"""LMDeploy's cache is cache_max_entry_count × the free memory once the weights are resident (docs/engines/lmdeploy.md
§2–§4): no profiled runtime figure, so --non-kv-memory is not read. Before, the plan took it with no word."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main

ARGS = ("--model", "llama-3.1-8b", "--engine", "lmdeploy", "--engine-version", "0.10.0", "--gpu", "H100")


def plan_json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    assert main(["plan", "--json", "--no-calibration-store", *ARGS, *flags]) == 0
    return json.loads(capsys.readouterr().out)


def named(out: dict) -> list[str]:
    """The flags the plan says its engine's rule does not read, in the JSON and in the notes alike."""
    in_json = [f["flag"] for f in out["flags_not_read"] if f["why"] == "not_read_by_rule"]
    in_notes = [n.split(" not read by ")[0] for n in out["notes"] if " not read by LMDeploy's rule: " in n]
    assert in_json == in_notes
    return in_json


def test_non_kv_memory_is_named_and_moves_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys)
    given = plan_json(capsys, "--non-kv-memory", "20GiB")
    assert given["token_capacity"] == bare["token_capacity"]
    assert named(given) == ["--non-kv-memory"] and named(bare) == []


def test_the_free_memory_it_reads_is_not_named(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys)
    given = plan_json(capsys, "--free-after-load", "50GiB")
    assert given["token_capacity"] < bare["token_capacity"] and named(given) == []
