"""TensorRT-LLM's rule reads each measured figure (docs/engines/trtllm.md: the free memory before and after the load,
the weights, the reserve as --non-kv-memory): none is named as unread, and each moves the plan."""

from __future__ import annotations

import pytest

from tests.engines.measured_flags import named, plan_json

RULE = "TensorRT-LLM"
ARGS = ("--model", "llama-3.1-8b", "--engine", "trtllm", "--engine-version", "1.0.0", "--gpu", "H100")


@pytest.mark.parametrize("flag,size", [("--free-memory", "70GiB"), ("--free-after-load", "50GiB"),
                                       ("--weights-memory", "30GiB"), ("--non-kv-memory", "20GiB")])
def test_every_measured_figure_is_read(capsys: pytest.CaptureFixture[str], flag: str, size: str) -> None:
    bare = plan_json(capsys, ARGS)
    given = plan_json(capsys, ARGS, flag, size)
    assert given["token_capacity"] < bare["token_capacity"] and named(given, RULE) == []
