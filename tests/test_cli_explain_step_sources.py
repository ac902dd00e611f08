"""`kvtop explain` says where each recomputed input came from, as `kvtop plan` does (session 44, F2).

A llama.cpp log that states no free memory, the command given no --gpu: explain printed "free before the weights
load  84.83 GB (79.00 GiB)" bare, read as if 79 GiB were free (--json: source "assumed"). Ollama's older log of
Llama-3.1-8B (tests/data/cases/llamacpp/ollama-llama31-8b-np4-kv-self-size) is one; the Hermes-3 RTX 2060 log first
used here does state it (`CUDA0 : NVIDIA GeForce RTX 2060 (5738 MiB, 5141 MiB free)`), now read as measured
(tests/engines/llamacpp/test_device_info.py).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CASES


def _steps(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, str]:
    assert main(["explain", *argv]) == 0
    out = capsys.readouterr().out
    recomputed = out.split("Recomputed with the engine's rules (central values):\n", 1)[1]
    lines = recomputed.split("\n  predicted ", 1)[0].splitlines()
    return {line[2:50].strip(): line for line in lines}


def test_an_input_the_log_lacks_reads_assumed(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    log = CASES / "llamacpp" / "ollama-llama31-8b-np4-kv-self-size" / "engine.log"
    steps = _steps(capsys, str(log), "--model", "llama-3.1-8b")
    assert steps["free before the weights load"].endswith("  assumed")
    assert steps["context asked (-c)"].endswith("8,192")  # the log's n_ctx: an engine figure, no source word


def test_a_logged_input_reads_measured_and_an_estimated_one_never_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    # SGLang C04 (sglang#11716): 'Load weight begin. avail mem=137.34 / 137.29 / 137.52 GB' on TP0 / TP5 / TP7
    # (the least, 137.29 GiB, is the engine's), and no 'Load weight end' line: kvtop estimates the free memory after
    log = CASES / "sglang" / "C04" / "engine.log"
    steps = _steps(capsys, str(log), "--model", "llama-3-70b", "--tp", "8", "--gpu", "H200")
    assert steps["free before weight load (min over ranks)"].endswith("(137.29 GiB)  measured")
    assert not steps["free after weight load"].endswith("measured")
