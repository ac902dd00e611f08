"""vLLM's pool is ceil(total × gpu_memory_utilization) less the weights and what its profile run measures
(docs/engines/vllm.md §2, worker/gpu_worker.py determine_available_memory): the free memory, before or after the
load, sizes nothing. Before, --free-memory was taken with no word; now both free figures are named."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main

ARGS = ("--model", "llama-3.1-8b", "--engine", "vllm", "--engine-version", "0.13.0", "--gpu", "H100")


def plan_json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    assert main(["plan", "--json", "--no-calibration-store", *ARGS, *flags]) == 0
    return json.loads(capsys.readouterr().out)


def named(out: dict) -> list[str]:
    """The flags the plan says its engine's rule does not read, in the JSON and in the notes alike."""
    in_json = [f["flag"] for f in out["flags_not_read"] if f["why"] == "not_read_by_rule"]
    in_notes = [n.split(" not read by ")[0] for n in out["notes"] if " not read by vLLM's rule: " in n]
    assert in_json == in_notes
    return in_json


def test_free_memory_is_named_and_moves_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys)
    given = plan_json(capsys, "--free-memory", "75GiB", "--free-after-load", "50GiB")
    assert given["token_capacity"] == bare["token_capacity"]
    assert named(given) == ["--free-memory", "--free-after-load"] and named(bare) == []


def test_what_it_reads_is_not_named(capsys: pytest.CaptureFixture[str]) -> None:
    bare = plan_json(capsys)
    given = plan_json(capsys, "--non-kv-memory", "20GiB", "--weights-memory", "15GiB")
    assert given["token_capacity"] < bare["token_capacity"] and named(given) == []


def test_free_memory_below_its_start_request_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """§2.2 (request_memory): it starts only with ceil(total × 0.9) free. The plan's CUDA total for an H100 is
    79.18 GiB (its header), so it asks 71.27 GiB: 70 GiB free is refused naming the flag, 72 GiB plans (before: both
    planned the same tokens)."""
    assert main(["plan", "--no-calibration-store", *ARGS, "--free-memory", "70GiB"]) != 0
    err = capsys.readouterr().err
    assert "(70.00 GiB/79.18 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB)" in err
    assert "--free-memory is below what it asks" in err
    assert plan_json(capsys, "--free-memory", "72GiB")["token_capacity"] == plan_json(capsys)["token_capacity"]


def test_v0_start_has_no_such_check(capsys: pytest.CaptureFixture[str]) -> None:
    """V0's worker at v0.6.3.post1 (worker/worker.py) raises only when profiling finds memory freed meanwhile, never
    on free < total × utilization: the same 70 GiB plans there, the flag named as sizing nothing."""
    v0 = list(ARGS)
    v0[v0.index("--engine-version") + 1] = "0.6.3.post1"
    assert main(["plan", "--json", "--no-calibration-store", *v0, "--free-memory", "70GiB"]) == 0
    assert "--free-memory" in named(json.loads(capsys.readouterr().out))
