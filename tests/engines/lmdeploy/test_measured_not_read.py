"""LMDeploy's cache is cache_max_entry_count × the free memory once the weights are resident (docs/engines/lmdeploy.md
§2–§4): no profiled runtime figure, so --non-kv-memory is not read. Before, the plan took it with no word."""

from __future__ import annotations

import pytest

from tests.engines.measured_flags import named, plan_json

RULE = "LMDeploy"
ARGS = ("--model", "llama-3.1-8b", "--engine", "lmdeploy", "--engine-version", "0.10.0", "--gpu", "H100")


def test_non_kv_memory_is_named_and_moves_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys, ARGS)
    given = plan_json(capsys, ARGS, "--non-kv-memory", "20GiB")
    assert given["token_capacity"] == bare["token_capacity"]
    assert named(given, RULE) == ["--non-kv-memory"] and named(bare, RULE) == []


def test_the_free_memory_it_reads_is_not_named(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys, ARGS)
    given = plan_json(capsys, ARGS, "--free-after-load", "50GiB")
    assert given["token_capacity"] < bare["token_capacity"] and named(given, RULE) == []
