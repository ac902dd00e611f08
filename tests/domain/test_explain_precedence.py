"""explain: the log's own figures win over what `--gpu` supplies, and every step says where its figure came from
(session 46, B3).

The v0.10.2 start of Qwen3-8B-FP8 on an RTX 4090 (tests/data/cases/vllm/vllm-v0102-qwen3-8b-fp8-4090-underscore-flags)
prints CUDA's total `Free memory on device (23.08/23.53 GiB) on startup`; `--gpu RTX4090` names the GPU table's
nvidia-smi total, 24,564 MiB (23.99 GiB), which the card reports but the engine never sized from. Expected values
are the log's own figures and the table's MiB done by hand.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.wording import GIB
from tests.conftest import CASES, CONFIGS, DATA
from tests.explain_cli import explain_json

MIB = 2**20
QWEN3_8B = CASES / "vllm" / "vllm-v0102-qwen3-8b-fp8-4090-underscore-flags"
QWEN3_8B_CONFIG = DATA / "calibration" / "configs" / "Qwen--Qwen3-8B-FP8.RECONSTRUCTED.json"
TRTLLM_5090 = CASES / "trtllm" / "trtllm-4275-llama31-8b-fp8kv-rtx5090-v019"
LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def test_the_logged_cuda_total_wins_over_the_gpu_tables(capsys) -> None:
    out = explain_json(capsys, QWEN3_8B / "engine.log", "--model", str(QWEN3_8B_CONFIG), "--gpu", "RTX4090")
    gpu = out["steps"][0]
    assert (gpu["label"], gpu["bytes"], gpu["source"]) == ("GPU memory (logged)", round(23.53 * GIB), "measured")
    assert gpu["measured"] and "Free memory on device (23.08/23.53 GiB)" in gpu["note"]
    # 24,564 MiB = 23.988 GiB (nvidia-smi's total in the GPU table) − the log's 23.53 GiB = +0.46 GiB
    assert round(24_564 * MIB / GIB - 23.53, 2) == 0.46
    said = [note for note in out["notes"] if note.startswith("--gpu RTX4090")]
    assert len(said) == 1 and "+0.46 GiB" in said[0] and "23.99 GiB" in said[0]
    # the capacity is the logged KV memory's either way: 3,913 blocks × 16 tokens
    assert (out["verdict"], out["predicted"]["token_capacity"]) == ("match", 62_608)


def test_a_measured_gpu_memory_overrides_the_log_and_the_contradiction_is_said(capsys) -> None:
    out = explain_json(capsys, QWEN3_8B / "engine.log", "--model", str(QWEN3_8B_CONFIG), "--gpu-memory", "24GiB")
    gpu = out["steps"][0]
    assert (gpu["label"], gpu["bytes"]) == ("GPU memory (--gpu-memory)", 24 * GIB)  # said as the operator's
    said = [note for note in out["notes"] if note.startswith("--gpu-memory 24.00 GiB")]
    assert len(said) == 1 and "+0.47 GiB" in said[0]  # 24.00 − 23.53


def test_a_table_total_inside_the_logs_rounding_is_not_said(capsys) -> None:
    """TensorRT-LLM v0.19 on an RTX 5090: `… total: 31.84 GiB`; the table's 32,607 MiB = 31.843 GiB lies inside
    [31.835, 31.845], so nothing contradicts; --gpu H100 (81,559 MiB = 79.65 GiB) is overridden and said."""
    out = explain_json(capsys, TRTLLM_5090 / "engine.log", "--model", str(LLAMA_8B), "--gpu", "RTX5090")
    assert (out["steps"][0]["label"], out["steps"][0]["bytes"]) == ("GPU memory (logged)", round(31.84 * GIB))
    assert not any(note.startswith("--gpu") for note in out["notes"])
    out = explain_json(capsys, TRTLLM_5090 / "engine.log", "--model", str(LLAMA_8B), "--gpu", "H100")
    assert out["steps"][0]["bytes"] == round(31.84 * GIB)
    assert round(81_559 * MIB / GIB - 31.84, 2) == 47.81
    assert any(note.startswith("--gpu H100") and "+47.81 GiB" in note for note in out["notes"])


def test_explain_text_says_each_steps_source_and_line(capsys) -> None:
    assert main(["explain", str(QWEN3_8B / "engine.log"), "--model", str(QWEN3_8B_CONFIG)]) == 0
    text = capsys.readouterr().out
    steps = text.split("(central values):\n", 1)[1].split("\n  predicted ", 1)[0].splitlines()
    assert all(len(line) <= 100 for line in steps)
    gpu = steps.index(next(line for line in steps if line.startswith("  GPU memory (logged)")))
    assert steps[gpu].endswith("(23.53 GiB)  measured")
    assert steps[gpu + 1].strip() == "↳ the log's `Free memory on device (23.08/23.53 GiB) on startup`"
    requested = next(i for i, line in enumerate(steps) if line.startswith("  requested: ceil(total × 0.8)"))
    assert steps[requested].endswith("(18.82 GiB)  measured")
    assert "Desired GPU memory utilization is (0.8, 18.82 GiB)" in steps[requested + 1]
