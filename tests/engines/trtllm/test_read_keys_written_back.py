"""TensorRT-LLM's launch keys that kvtop's rules read are written back on the plan's "engine flags:" line (#27, session
71), as vLLM's scheduler switches and SGLang's read flags are.

The line wrote only the settings it models as fields, so a key a rule reads from the flags or the
--extra_llm_api_options YAML (`moe_config.backend`, `cuda_graph_config`, `disable_overlap_scheduler` …) was dropped
and the copied line planned another launch. zufayu/ClaudeSkillsE2EPerf's gpt-oss-120b start on a B200 (1.3.0rc10,
corpus record below) runs `moe_config.backend: TRTLLM`, which pads the MXFP4 experts' hidden 2,880 → 3,072 (the
default CUTLASS pads it to 2,944: quantization.py create_weights, docs/engines/trtllm.md §24): its line lost the key
and planned CUTLASS's larger pool. Expected: the record's own flags, planned, then their line planned again, give the
first plan's figure, and the key is on the line.
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


def test_a_record_s_copied_line_plans_its_launch(capsys: pytest.CaptureFixture[str]) -> None:
    record = _record(RECORD_ID)
    flags = [str(flag) for flag in record["flags"]]  # type: ignore[attr-defined]
    assert flags[flags.index("--moe_config.backend") + 1] == "TRTLLM"  # the record's own launch
    typed = plan_json(capsys, _base(record), *flags)
    line = typed["engine_flags"]
    assert line[line.index("--moe_config.backend") + 1] == "TRTLLM"  # dropped before session 71
    assert line[line.index("--cuda_graph_config.max_batch_size") + 1] == "64"  # a field, dropped before too
    again = plan_json(capsys, _base(record), *line)
    assert again["token_capacity"] == typed["token_capacity"]
    # the line before it (the modelled fields only) planned CUTLASS's padding: 2,944 is narrower than 3,072, so the
    # weights were lighter and the pool larger; the key moves the figure, so dropping it is seen
    without = [flag for flag in line if flag not in ("--moe_config.backend", "TRTLLM")]
    assert plan_json(capsys, _base(record), *without)["token_capacity"] > typed["token_capacity"]


def test_the_yaml_s_read_keys_come_back_as_flags(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    """ddps-lab's YAML form (its `cuda_graph_config: null`, `disable_overlap_scheduler: true`): the YAML's keys are
    folded into the settings, and the line writes each a rule reads, the null as the word kvtop reads back."""
    options = tmp_path / "extra.yaml"
    options.write_text("disable_overlap_scheduler: true\ncuda_graph_config: null\n"
                       "cache_transceiver_config:\n  backend: NIXL\n  max_tokens_in_buffer: 8192\n"
                       "kv_cache_config:\n  free_gpu_memory_fraction: 0.85\n  enable_block_reuse: false\n")  # fmt: skip
    record = _record("ddpslab-disagg-t1-qwen3-4b-l4-trtllm-121")
    cmd = f"trtllm-serve Qwen/Qwen3-4B --backend pytorch --extra_llm_api_options {options}"
    typed = plan_json(capsys, _base(record), "--cmd", cmd)
    line = typed["engine_flags"]
    assert line[line.index("--cuda_graph_config") + 1] == "null"
    assert "--disable_overlap_scheduler" in line
    assert line[line.index("--cache_transceiver_config.max_tokens_in_buffer") + 1] == "8192"
    again = plan_json(capsys, _base(record), *line)
    assert again["token_capacity"] == typed["token_capacity"]
    assert again["notes"] == typed["notes"]  # graphs off and the transceiver named alike


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
