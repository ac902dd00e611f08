"""TensorRT-LLM's overlap-scheduler key as kvtop reads it back (#27, session 71); the copied launch itself (serve's
options, the YAML beside them, planned again through `--cmd`) is tests/engines/trtllm/test_serve_launch.py.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS, DATA
from tests.engines.measured_flags import plan_json

RECORD_ID = "zufayu-e2eperf-gpt-oss-120b-b200-tp1-trtllm-130rc10"


def _record(record_id: str) -> dict[str, object]:
    for line in (DATA / "calibration" / "trtllm.jsonl").read_text().splitlines():
        record: dict[str, object] = json.loads(line)
        if record["id"] == record_id:
            return record
    raise AssertionError(f"no corpus record {record_id}")


def _base(record: dict[str, object]) -> tuple[str, ...]:
    return ("--model", str(CONFIGS / str(record["config"])), "--engine", "trtllm", "--engine-version",
            str(record["version"]), "--gpu", str(record["gpu"]))  # fmt: skip


def _temporary_pool(plan: dict[str, object]) -> object:
    steps = plan["steps"]
    assert isinstance(steps, list)
    return next(step for step in steps if "temporary pool" in step["label"])


def test_overlap_off_typed_false_is_not_set(capsys: pytest.CaptureFixture[str]) -> None:
    """At 0.20.0 the profiling run gives each dummy request of max_seq_len − 1 = 159 tokens two generated tokens with
    the overlap scheduler on, one without (§3 step 1): 148 requests (23,552 ÷ 159, the last 20 tokens) take
    ⌈(159 + 2) ÷ 32⌉ = 6 blocks each (⌈22 ÷ 32⌉ = 1 for the last), 889 × 32 = 28,448 tokens; with it off
    ⌈160 ÷ 32⌉ = 5 each, 741 × 32 = 23,712; each token 131,072 B (32 layers × 8 KV heads × 128 × 2 × 2 B). A typed
    'false' is the scheduler on, not a set switch."""
    base = ("--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--engine", "trtllm",
            "--engine-version", "0.20.0", "--gpu", "H100", "--backend", "pytorch", "--max_batch_size", "4096",
            "--max_num_tokens", "23552", "--max_seq_len", "160")  # fmt: skip
    on = _temporary_pool(plan_json(capsys, base))
    off = _temporary_pool(plan_json(capsys, base, "--disable_overlap_scheduler"))
    typed_false = _temporary_pool(plan_json(capsys, base, "--disable_overlap_scheduler", "false"))
    pools = [(step["note"], step["bytes"]) for step in (on, off, typed_false)]  # type: ignore[index]
    assert pools == [("28,448 tokens", 28_448 * 131_072), ("23,712 tokens", 23_712 * 131_072),
                     ("28,448 tokens", 28_448 * 131_072)]  # fmt: skip


def test_overlap_off_not_a_boolean_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("plan", "--no-calibration-store", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
            "--engine", "trtllm", "--gpu", "H100", "--backend", "pytorch", "--disable_overlap_scheduler", "maybe")  # fmt: skip
    assert main(list(args)) != 0
    assert "--disable_overlap_scheduler: expected true or false, got 'maybe'" in capsys.readouterr().err
