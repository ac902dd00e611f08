"""llama.cpp allocates the cells -c asks for and the plan checks they fit in the free memory before load less the
weights (docs/engines/llamacpp.md §1, src/llama-context.cpp): --free-after-load and --non-kv-memory are not read.
Before, both were taken with no word; now both are named."""

from __future__ import annotations

import pytest

from tests.engines.measured_flags import named, plan_json

RULE = "llama.cpp"
ARGS = ("--model", "llama-3.1-8b", "--engine", "llamacpp", "--engine-version", "b6500", "--gpu", "H100")


def test_unread_figures_are_named_and_move_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys, ARGS)
    given = plan_json(capsys, ARGS, "--free-after-load", "1GiB", "--non-kv-memory", "70GiB")
    assert (given["token_capacity"], given["fits"]) == (bare["token_capacity"], True)
    assert named(given, RULE) == ["--free-after-load", "--non-kv-memory"] and named(bare, RULE) == []


def test_the_free_memory_it_reads_is_not_named(capsys: pytest.CaptureFixture[str]) -> None:
    """1 GiB free before load cannot hold the 8B model's weights: the fit it checks fails, and nothing is named."""
    given = plan_json(capsys, ARGS, "--free-memory", "1GiB")
    assert given["fits"] is False and named(given, RULE) == []
