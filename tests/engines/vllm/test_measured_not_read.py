"""vLLM's pool is ceil(total × gpu_memory_utilization) less the weights and what its profile run measures
(docs/engines/vllm.md §2, worker/gpu_worker.py determine_available_memory): the free memory, before or after the
load, sizes nothing. Before, --free-memory was taken with no word; now both free figures are named."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.engines.measured_flags import named, plan_json

RULE = "vLLM"
ARGS = ("--model", "llama-3.1-8b", "--engine", "vllm", "--engine-version", "0.13.0", "--gpu", "H100")


def test_free_memory_is_named_and_moves_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys, ARGS)
    given = plan_json(capsys, ARGS, "--free-memory", "75GiB", "--free-after-load", "50GiB")
    assert given["token_capacity"] == bare["token_capacity"]
    assert named(given, RULE) == ["--free-memory", "--free-after-load"] and named(bare, RULE) == []


def test_what_it_reads_is_not_named(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys, ARGS)
    given = plan_json(capsys, ARGS, "--non-kv-memory", "20GiB", "--weights-memory", "15GiB")
    assert given["token_capacity"] < bare["token_capacity"] and named(given, RULE) == []


def test_free_memory_below_its_start_request_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """§2.2 (request_memory): it starts only with ceil(total × 0.9) free. The plan's CUDA total for an H100 is
    79.18 GiB (its header), so it asks 71.27 GiB: 70 GiB free is refused naming the flag, 72 GiB plans (before: both
    planned the same tokens)."""
    assert main(["plan", "--no-calibration-store", *ARGS, "--free-memory", "70GiB"]) != 0
    err = capsys.readouterr().err
    assert "(70.00 GiB/79.18 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB)" in err
    assert "--free-memory is below what it asks" in err
    assert plan_json(capsys, ARGS, "--free-memory", "72GiB")["token_capacity"] == plan_json(capsys, ARGS)["token_capacity"]


def test_v0_start_has_no_such_check(capsys: pytest.CaptureFixture[str]) -> None:
    """V0's worker at v0.6.3.post1 (worker/worker.py) raises only when profiling finds memory freed meanwhile, never
    on free < total × utilization: the same 70 GiB plans there, the flag named as sizing nothing."""
    v0 = list(ARGS)
    v0[v0.index("--engine-version") + 1] = "0.6.3.post1"
    assert main(["plan", "--json", "--no-calibration-store", *v0, "--free-memory", "70GiB"]) == 0
    assert "--free-memory" in named(json.loads(capsys.readouterr().out), RULE)
