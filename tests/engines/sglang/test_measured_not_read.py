"""SGLang's pool is the free memory after the weights less pre-load × (1 − mem_fraction_static) (docs/engines/sglang.md
§4, model_runner.py profile_max_num_token): no profiled runtime figure, so --non-kv-memory is not read. Before, the
plan took the flag and planned the same tokens with no word; now it names it (notes and `flags_not_read`)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main

ARGS = ("--model", "llama-3.1-8b", "--engine", "sglang", "--engine-version", "0.5.4", "--gpu", "H100")


def plan_json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    assert main(["plan", "--json", "--no-calibration-store", *ARGS, *flags]) == 0
    return json.loads(capsys.readouterr().out)


def named(out: dict) -> list[str]:
    """The flags the plan says its engine's rule does not read, in the JSON and in the notes alike."""
    in_json = [f["flag"] for f in out["flags_not_read"] if f["why"] == "not_read_by_rule"]
    in_notes = [n.split(" not read by ")[0] for n in out["notes"] if " not read by SGLang's rule: " in n]
    assert in_json == in_notes
    return in_json


def test_non_kv_memory_is_named_and_moves_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys)
    given = plan_json(capsys, "--non-kv-memory", "20GiB")
    assert given["token_capacity"] == bare["token_capacity"]  # the rule has no term for it
    assert named(given) == ["--non-kv-memory"] and named(bare) == []


def test_the_free_memory_it_reads_is_not_named(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys)
    given = plan_json(capsys, "--free-memory", "70GiB", "--free-after-load", "50GiB", "--weights-memory", "15GiB")
    assert given["token_capacity"] < bare["token_capacity"] and named(given) == []
