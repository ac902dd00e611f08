"""explain reads the GPU's total and the requested memory fraction where the engine's log prints them (session 46, B2).

The v0.10.2 start of Qwen3-8B-FP8 on a 24 GiB card (tests/data/cases/vllm/vllm-v0102-qwen3-8b-fp8-4090-underscore-flags)
prints `Free memory on device (23.08/23.53 GiB) on startup. Desired GPU memory utilization is (0.8, 18.82 GiB)` and, at
DEBUG, `Initial free memory: 23.08 GiB; Requested memory: 0.80 (util), 18.82 GiB`; explain printed "GPU memory (a
stand-in: pass --gpu) 80.00 GiB" and "requested: ceil(total × 0.92) 73.60 GiB" beside them. Expected values are the
log's own figures.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kvtop.domain.engines.vllm.log_launch import logged_device
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import read_engine_log
from tests.conftest import CASES, CONFIGS, DATA
from tests.explain_cli import explain_json

QWEN3_8B = CASES / "vllm" / "vllm-v0102-qwen3-8b-fp8-4090-underscore-flags"
QWEN3_8B_CONFIG = DATA / "calibration" / "configs" / "Qwen--Qwen3-8B-FP8.RECONSTRUCTED.json"


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _step(out: dict, start: str) -> dict:  # type: ignore[type-arg]
    return next(step for step in out["steps"] if step["label"].startswith(start))


def test_the_logs_cuda_total_and_fraction_replace_the_stand_in_and_the_default(capsys) -> None:
    out = explain_json(capsys, QWEN3_8B / "engine.log", "--model", str(QWEN3_8B_CONFIG))
    gpu = out["steps"][0]
    # `Free memory on device (23.08/23.53 GiB) on startup`: CUDA's total, measured
    assert (gpu["label"], gpu["bytes"], gpu["measured"]) == ("GPU memory (logged)", round(23.53 * GIB), True)
    assert gpu["note"] == "the log's `Free memory on device (23.08/23.53 GiB) on startup`"
    requested = _step(out, "requested: ")
    assert requested["label"] == "requested: ceil(total × 0.8), the log's fraction"
    assert requested["bytes"] == math.ceil(round(23.53 * GIB) * 0.8)
    assert round(requested["bytes"] / GIB, 2) == 18.82  # the log's `Desired GPU memory utilization is (0.8, 18.82 GiB)`
    assert "Desired GPU memory utilization is (0.8, 18.82 GiB)" in requested["note"]
    assert (out["logged"]["gpu_total_bytes"], out["logged"]["memory_fraction"]) == (round(23.53 * GIB), 0.8)
    # the capacity is the logged KV memory's, as before: 9,232,221,491 B // (16 × 147,456 B) = 3,913 blocks × 16
    assert 9_232_221_491 // (16 * 147_456) * 16 == 62_608
    assert (out["verdict"], out["predicted"]["token_capacity"]) == ("match", 62_608)


def test_the_debug_line_alone_gives_the_fraction_and_no_total(capsys, tmp_path: Path) -> None:
    """Without the INFO ledger the DEBUG `Requested memory: 0.80 (util), 18.82 GiB` still states the fraction; no line
    states the total, so the stand-in stays, said as one."""
    lines = (QWEN3_8B / "engine.log").read_text().splitlines(keepends=True)
    log = tmp_path / "engine.log"
    log.write_text("".join(line for line in lines if "Free memory on device" not in line))
    device = logged_device(read_engine_log(str(log)))
    assert (device.total, device.fraction) == (None, 0.8)
    out = explain_json(capsys, log, "--model", str(QWEN3_8B_CONFIG))
    assert out["steps"][0]["label"] == "GPU memory (a stand-in: pass --gpu)"
    requested = _step(out, "requested: ")
    assert requested["label"] == "requested: ceil(total × 0.8), the log's fraction"
    assert requested["note"] == "the log's `Requested memory: 0.80 (util), 18.82 GiB`"


def test_the_operators_fraction_wins_and_a_contradiction_is_said(capsys) -> None:
    """--gpu-memory-utilization, the engine's own flag, overrides the logged fraction (said); --gpu H100 does not
    override the logged total (tests/domain/test_explain_precedence.py)."""
    out = explain_json(
        capsys, QWEN3_8B / "engine.log", "--model", str(QWEN3_8B_CONFIG), "--gpu", "H100",
        "--gpu-memory-utilization", "0.9",
    )  # fmt: skip
    assert (out["steps"][0]["label"], out["steps"][0]["bytes"]) == ("GPU memory (logged)", round(23.53 * GIB))
    assert _step(out, "requested: ")["label"] == "requested: ceil(total × 0.9)"
    assert any("--gpu-memory-utilization 0.9" in note and "(0.8, 18.82 GiB)" in note for note in out["notes"])


def test_v0_profile_states_both() -> None:
    """V0 (vllm#10517, RTX 3090): `Memory profiling results: total_gpu_memory=23.58GiB … gpu_memory_utilization=0.90`."""
    device = logged_device(read_engine_log(str(CASES / "vllm" / "vllm-10517-llama31-8b-3090-v0" / "engine.log")))
    assert device.total is not None and device.total.text == "23.58" and device.fraction == 0.9


def test_a_default_the_log_does_not_state_is_said_so(capsys) -> None:
    """LMCache#1739's log prints neither the total nor the fraction: vLLM's default, said as one."""
    out = explain_json(capsys, CASES / "vllm" / "lmcache-1739-qwen3-14b" / "engine.log", "--model", "llama-3.1-8b")
    assert out["steps"][0]["label"] == "GPU memory (a stand-in: pass --gpu)"
    assert _step(out, "requested: ")["label"] == "requested: ceil(total × 0.92), default (not in the log)"


def test_tensorrt_llm_total_logged_and_its_default_fraction_said(capsys) -> None:
    """TensorRT-LLM's C++ runtime (v0.19, RTX 5090): `Memory usage when calculating max tokens in paged kv cache: total:
    31.84 GiB, available: 17.83 GiB`; no line states free_gpu_memory_fraction, so 0.9 (a C++ float) is the default."""
    case = CASES / "trtllm" / "trtllm-4275-llama31-8b-fp8kv-rtx5090-v019"
    out = explain_json(capsys, case / "engine.log", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    gpu = out["steps"][0]
    assert (gpu["label"], gpu["bytes"], gpu["measured"]) == ("GPU memory (logged)", round(31.84 * GIB), True)
    fraction = _step(out, "× free_gpu_memory_fraction ")
    assert fraction["label"] == "× free_gpu_memory_fraction 0.9, default (not in the log)"  # as trtllm-serve states it
    assert round(fraction["bytes"] / GIB, 2) == round(17.83 * 0.9, 2)  # 16.05 GiB: 0.9 of the logged 17.83 GiB


def test_sglang_fraction_from_no_flag_is_said_a_default(capsys) -> None:
    """SGLang prints no GPU total and its mem_fraction_static only in server_args, which C13's log lacks: without
    --mem-fraction-static the fraction is the release's default, said so; with it, the flag's."""
    log = CASES / "sglang" / "C13" / "engine.log"
    config = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
    reserve = _step(explain_json(capsys, log, "--model", config), "− reserve: ")
    assert reserve["label"].endswith(", default (not in the log)")
    flagged = _step(explain_json(capsys, log, "--model", config, "--mem-fraction-static", "0.88"), "− reserve: ")
    assert flagged["label"] == "− reserve: pre-load × (1 − 0.88)"
