"""llama.cpp's `device_info:` lines: each backend device's total and free memory before the model loads (common.cpp
`common_params_print_info`, `  - %-8s: %s (%zu MiB, %zu MiB free)`, bytes / 1024 / 1024 from `ggml_backend_dev_memory`).

The Ollama log of Hermes 3 (tests/data/cases/llamacpp/ollama-hermes3-llama31-8b-q4_0-rtx2060) prints
`  - CUDA0   : NVIDIA GeForce RTX 2060 (5738 MiB, 5141 MiB free)`: explain without --gpu said "free before the weights
load 79.00 GiB assumed" (the 80 GiB stand-in), not the 5141 MiB the log measured.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.llamacpp.log_records import LlamacppRankLog
from kvtop.sources.engine_logs import read_engine_log
from tests.data_paths import CASES, CONFIGS

LOGS = CASES / "llamacpp"
HERMES = LOGS / "ollama-hermes3-llama31-8b-q4_0-rtx2060" / "engine.log"
LLAMA_31_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B.json")
MIB = 1 << 20


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _explain(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["explain", "--json", str(HERMES), "--model", LLAMA_31_8B, *args]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


def _free_step(out: dict[str, object]) -> dict[str, object]:
    steps = out["steps"]
    assert isinstance(steps, list)
    (step,) = [s for s in steps if s["label"] == "free before the weights load"]
    return dict(step)


def test_the_device_lines_are_read() -> None:
    (rank,) = read_engine_log(str(HERMES)).ranks(LlamacppRankLog)
    cpu, gpu = rank.devices
    assert (cpu.device, cpu.description, cpu.total.text, cpu.free.text) == (
        "CPU", "AMD Ryzen 7 5700X 8-Core Processor", "64220", "64220",
    )  # fmt: skip
    assert (gpu.device, gpu.description) == ("CUDA0", "NVIDIA GeForce RTX 2060")
    # `%zu` of bytes / 1024 / 1024: the bytes lie in [N, N + 1) MiB
    assert (gpu.total.low_bytes, gpu.total.high_bytes) == (5738 * MIB, 5739 * MIB - 1)
    assert gpu.free.value_bytes == 5141 * MIB


def test_explain_solves_with_the_free_memory_the_log_measured(capsys: pytest.CaptureFixture[str]) -> None:
    out = _explain(capsys)
    step = _free_step(out)
    assert (step["bytes"], step["source"]) == (5141 * MIB, "measured")  # was 79.00 GiB, assumed
    notes = out["notes"]
    assert isinstance(notes, list)
    assert any("NVIDIA GeForce RTX 2060 (CUDA0)" in note and "5141 MiB free" in note for note in notes)
    assert out["verdict"] == "match"  # the cells are -c's whatever the memory (llama.cpp sizes by -c)


def test_a_given_free_memory_wins_over_the_logs(capsys: pytest.CaptureFixture[str]) -> None:
    assert _free_step(_explain(capsys, "--free-memory", "4GiB"))["bytes"] == 4096 * MIB
