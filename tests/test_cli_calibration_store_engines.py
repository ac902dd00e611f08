"""`kvtop explain` teaches this node, and a later `kvtop plan` of the same launch moves to the log's figures:
one case log per engine, the expected values worked by hand from the log's own lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.wording import GIB
from tests.data_paths import CASES, CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def store_lines() -> list[dict]:
    store = Path(os.environ["XDG_STATE_HOME"]) / "kvtop" / "calibration.jsonl"
    return [json.loads(line) for line in store.read_text().splitlines()] if store.exists() else []


def plan(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    assert main(["plan", "--model", LLAMA_8B, "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def explain(capsys: pytest.CaptureFixture[str], log: Path, *flags: str) -> str:
    assert main(["explain", str(log), "--model", LLAMA_8B, *flags]) == 0
    return capsys.readouterr().err


SGLANG = ["--engine", "sglang", "--gpu", "H100", "--mem-fraction-static", "0.88", "--chunked-prefill-size", "8192",
          "--engine-version", "0.4.1.post7"]  # fmt: skip


def test_sglang_keeps_the_loads_weights_and_the_plan_lands_on_the_log(capsys: pytest.CaptureFixture[str]) -> None:
    """C13 (SGLang, H100, Llama-3.1-8B): `Load weight begin. avail mem=78.81 GB`, `Load weight end. … avail
    mem=63.72 GB`, `max_total_num_tokens=444500`. What the load took is 78.81 − 63.72 = 15.09 GiB (SGLang's own
    'mem usage' is this difference); the pool is (63.72 − 78.81 × (1 − 0.88)) GiB = 54.2628 GiB ÷ 131,072 B
    (32 layers × 8 KV heads × 128 × 2 × 2 B) = 54.2628 × 8,192 = 444,520 tokens."""
    before = plan(capsys, *SGLANG)
    explain(capsys, CASES / "sglang" / "C13" / "engine.log", *SGLANG)
    (line,) = store_lines()
    assert abs(line["terms"]["weights"] - 15.09 * GIB) < 0.005 * GIB
    assert line["date"] == "2025-01-23" and "/" not in json.dumps(line)
    after = plan(capsys, *SGLANG)
    assert after["calibrated_on_node"] == "calibrated on this node, 2025-01-23"
    assert abs(after["token_capacity"] - 444_520) <= 8  # the two 2-decimal GiB figures' rounding
    assert after["token_capacity_min"] <= 444_500 <= after["token_capacity_max"]
    assert after["token_capacity_max"] - after["token_capacity_min"] < before["token_capacity_max"] - before["token_capacity_min"]


VLLM = ["--engine", "vllm", "--gpu", "RTX3090", "--engine-version", "0.7.3", "--max-model-len", "20000",
        "--gpu-memory-utilization", "0.9"]  # fmt: skip


def test_vllm_node_weights_and_charge_replay_the_logged_kv_memory(capsys: pytest.CaptureFixture[str]) -> None:
    """vllm-10517 (V0, RTX 3090): `kv_cache_size=3.81GiB`, `GPU blocks: 1952`. The node's weights (14.99 GiB) and
    the charge solved beside them reach the budget together: 3.81 GiB ÷ 2,097,152 B per block of 16 (131,072 B per
    token) = 3.81 × 512 = 1,950.7 → 1,950 blocks = 31,200 tokens (the log's 1,952 from the unrounded figure)."""
    explain(capsys, CASES / "vllm" / "vllm-10517-llama31-8b-3090-v0" / "engine.log", "--gpu", "RTX3090")
    after = plan(capsys, *VLLM)
    assert after["token_capacity"] == 31_200
    assert after["token_capacity_min"] <= 1_952 * 16 <= after["token_capacity_max"]
    # a different profiled batch: the node's weights still, not its runtime charge (nor the total solved with it)
    other_batch = {term["term"]: term["source"] for term in plan(capsys, *VLLM, "--max-num-batched-tokens", "4096")["terms"]}
    assert other_batch == {"cuda_total": "calibrated", "weights": "measured", "activation": "calibrated",
                           "non_torch": "calibrated"}  # fmt: skip
    # another utilisation: the same terms, said so
    assert plan(capsys, *VLLM[:-1], "0.8")["calibrated_on_node"] == after["calibrated_on_node"]
    # another layout: nothing of it
    assert plan(capsys, *VLLM, "--tp", "2")["calibrated_on_node"] is None


def test_a_log_that_singles_out_no_term_keeps_nothing_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """trtllm-4275 (TensorRT C++ runtime, RTX 5090): `total: 31.84 GiB, available: 17.83 GiB` is the free memory once
    the engine, its buffers and the context are resident: their 14.01 GiB together, no one of them. A store line
    of 0 bytes for the engine's execution context put the logged 263,008 tokens outside the plan's interval."""
    flags = ["--engine", "trtllm", "--gpu", "RTX5090", "--engine-version", "0.19.0", "--kv_cache_config.dtype", "fp8",
             "--tokens_per_block", "32", "--max_num_tokens", "1024", "--max_batch_size", "2048"]  # fmt: skip
    err = explain(capsys, CASES / "trtllm" / "trtllm-4275-llama31-8b-fp8kv-rtx5090-v019" / "engine.log", *flags)
    assert err.count("\n") == 1 and "nothing kept from this start" in err
    assert store_lines() == []
    assert plan(capsys, *flags)["calibrated_on_node"] is None


def test_a_start_of_another_release_or_layout_is_named_not_used(capsys: pytest.CaptureFixture[str]) -> None:
    """C13's release is read off the log's dates (2025-01-23 → 0.4.1.post7): a plan of the newest rules, or of
    TP 2, does not take that start's figures, and says so in one line with what differs."""
    explain(capsys, CASES / "sglang" / "C13" / "engine.log", *SGLANG)
    newest = [flag for flag in SGLANG if flag not in ("--engine-version", "0.4.1.post7")]
    assert plan(capsys, *newest)["calibrated_on_node"] is None
    assert main(["plan", "--model", LLAMA_8B, *newest]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "(2025-01-23) not used here: it ran 0.4.1.post7" in err
    assert "--engine-version 0.4.1.post7 to use it" in err
    assert main(["plan", "--model", LLAMA_8B, *SGLANG, "--tp", "2"]) == 0
    assert "it ran TP1 PP1, this plan TP2 PP1" in capsys.readouterr().err
    assert main(["plan", "--model", LLAMA_8B, *SGLANG, "--tp", "2", "--no-calibration-store"]) == 0
    assert capsys.readouterr().err == ""
