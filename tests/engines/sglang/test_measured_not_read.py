"""SGLang's pool is the free memory after the weights less pre-load × (1 − mem_fraction_static) (docs/engines/sglang.md
§4, model_runner.py profile_max_num_token): no profiled runtime figure, so --non-kv-memory is not read. Before, the
plan took the flag and planned the same tokens with no word; now it names it (notes and `flags_not_read`)."""

from __future__ import annotations

import pytest

from tests.engines.measured_flags import named, plan_json

RULE = "SGLang"
ARGS = ("--model", "llama-3.1-8b", "--engine", "sglang", "--engine-version", "0.5.4", "--gpu", "H100")


def test_non_kv_memory_is_named_and_moves_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys, ARGS)
    given = plan_json(capsys, ARGS, "--non-kv-memory", "20GiB")
    assert given["token_capacity"] == bare["token_capacity"]  # the rule has no term for it
    assert named(given, RULE) == ["--non-kv-memory"] and named(bare, RULE) == []


def test_the_free_memory_it_reads_is_not_named(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys, ARGS)
    given = plan_json(capsys, ARGS, "--free-memory", "70GiB", "--free-after-load", "50GiB", "--weights-memory", "15GiB")
    assert given["token_capacity"] < bare["token_capacity"] and named(given, RULE) == []
