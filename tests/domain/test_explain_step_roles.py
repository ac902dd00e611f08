"""explain finds the GPU total's and the memory fraction's budget steps by their typed role, not by their label.

explain named the GPU-memory step as a stand-in (no --gpu) or as the log's (a printed total) only where the label
was exactly "GPU memory", and found the fraction's step by each engine's label start passed from its explainer
(session 48, I). LMDeploy's TurboMind labels its total "total (cudaMemGetInfo), …" (GetBlockCount's name) and vLLM's calibrated
total is "GPU memory as CUDA reports it": the role finds them. Each engine's case below, without --gpu, names the
total a stand-in; where the log prints a total, the log's (its figure read from the log file here). SGLang and
LMDeploy print no GPU total, so only the stand-in applies to them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from kvtop.commands.explain import settings_typed_for_log
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.lmdeploy.eras import resolve_version
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import (
    PLACEHOLDER_GPU_BYTES,
    logged_total_said,
    stand_in_gpu_said,
    total_origin_said,
)
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.ledger_values import Ledger
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CASES, CONFIGS, DATA
from tests.explain_cli import explain_json

MIB = 2**20
STAND_IN = "GPU memory (a stand-in: pass --gpu)"
LLAMA2_7B = str(CONFIGS / "meta-llama--Llama-2-7b-hf.json")
TUTORIAL = CASES / "lmdeploy" / "lmdeploy-tutorial-v010-internlm-chat-7b-vgpu"  # LMDeploy v0.1.0: total × 0.5
QWEN3_8B = CASES / "vllm" / "vllm-v0102-qwen3-8b-fp8-4090-underscore-flags"


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _role(out: dict[str, Any], role: str) -> dict[str, Any]:
    """The one JSON step of `role` (the field JSON readers find a step by, as explain does)."""
    found: list[dict[str, Any]] = [step for step in out["steps"] if step["role"] == role]
    assert len(found) == 1
    return found[0]


def _gib_in_log(log: Path, pattern: str) -> int:
    """A GiB figure the log prints, as explain reads a 2-decimal figure (its central bytes)."""
    found = re.search(pattern, log.read_text())
    assert found is not None
    return round(float(found.group(1)) * GIB)


def test_sglang_c13_without_gpu_names_the_stand_in(capsys: pytest.CaptureFixture[str]) -> None:
    # C13 prints `Load weight begin. avail mem=78.81 GB` but no GPU total (SGLang never does): the 80 GiB stand-in
    out = explain_json(capsys, CASES / "sglang" / "C13" / "engine.log", "--model",
                       str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))  # fmt: skip
    gpu = _role(out, "gpu_total")
    assert (gpu["label"], gpu["bytes"], gpu["measured"]) == (STAND_IN, 80 * GIB, False)
    fraction = _role(out, "memory_fraction")  # SGLang's fraction step is its reserve, in its own words
    assert fraction["label"].startswith("− reserve: pre-load × (1 − ")
    assert fraction["label"].endswith(", default (not in the log)")


def test_vllm_stand_in_without_gpu_and_the_logs_total_where_printed(capsys: pytest.CaptureFixture[str]) -> None:
    lmcache = explain_json(capsys, CASES / "vllm" / "lmcache-1739-qwen3-14b" / "engine.log", "--model", "llama-3.1-8b")
    assert (_role(lmcache, "gpu_total")["label"], _role(lmcache, "gpu_total")["measured"]) == (STAND_IN, False)
    assert _role(lmcache, "memory_fraction")["label"] == "requested: ceil(total × 0.92), default (not in the log)"
    log = QWEN3_8B / "engine.log"
    config = str(DATA / "calibration" / "configs" / "Qwen--Qwen3-8B-FP8.RECONSTRUCTED.json")
    total = _gib_in_log(log, r"Free memory on device \([\d.]+/([\d.]+) GiB\)")  # 23.53 GiB
    for flags in ((), ("--gpu", "H100")):  # --gpu's table total never replaces the total the log printed
        out = explain_json(capsys, log, "--model", config, *flags)
        gpu = _role(out, "gpu_total")
        assert (gpu["label"], gpu["bytes"], gpu["measured"]) == ("GPU memory (logged)", total, True)
        assert _role(out, "memory_fraction")["label"] == "requested: ceil(total × 0.8), the log's fraction"


def test_tensorrt_llm_stand_in_without_gpu_and_the_logs_total_where_printed(capsys: pytest.CaptureFixture[str]) -> None:
    # TensorRT-LLM#224 (≤ v0.8) prints no memory line: with the free memory given, the total is the stand-in
    old = explain_json(capsys, CASES / "trtllm" / "trtllm-224-llama2-7b-a10-fraction" / "engine.log", "--model",
                       LLAMA2_7B, "--engine", "trtllm", "--free-after-load", "5.5GiB")  # fmt: skip
    assert (_role(old, "gpu_total")["label"], _role(old, "gpu_total")["measured"]) == (STAND_IN, False)
    case = CASES / "trtllm" / "trtllm-4275-llama31-8b-fp8kv-rtx5090-v019"
    total = _gib_in_log(case / "engine.log", r"paged kv cache: total: ([\d.]+) GiB")  # 31.84 GiB
    out = explain_json(capsys, case / "engine.log", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    gpu = _role(out, "gpu_total")
    assert (gpu["label"], gpu["bytes"], gpu["measured"]) == ("GPU memory (logged)", total, True)
    assert _role(out, "memory_fraction")["label"] == "× free_gpu_memory_fraction 0.9, default (not in the log)"


def test_lmdeploy_stand_in_without_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    """LMDeploy#3950 (TurboMind, size_t(free × 0.8)) with its free memory given (1.7925 GiB, case.json's implied
    free): the total is the stand-in; v0.1.0's share of total memory is not solved at a stand-in at all: the
    total is named missing."""
    case = CASES / "lmdeploy" / "lmdeploy-3950-gptoss20b-int4kv-2080maxq"
    out = explain_json(capsys, case / "engine.log", "--model", str(CONFIGS / "openai--gpt-oss-20b.json"),
                       "--free-after-load", "1.7925GiB")  # fmt: skip
    assert (_role(out, "gpu_total")["label"], _role(out, "gpu_total")["measured"]) == (STAND_IN, False)
    assert _role(out, "memory_fraction")["label"] == "size_t(free × 0.8)"
    tutorial = explain_json(capsys, TUTORIAL / "engine.log", "--model", LLAMA2_7B, "--engine-version", "0.1.0")
    assert tutorial["verdict"] == "insufficient" and "the GPU's total memory" in tutorial["missing"][0]
    assert tutorial["steps"] == []


def _tutorial_ledger(gpu_total: int) -> Ledger:
    """LMDeploy v0.1.0's TurboMind ledger of the tutorial log, solved at `gpu_total` (cudaMemGetInfo's total)."""
    log = read_engine_log(TUTORIAL / "engine.log")
    settings = settings_typed_for_log(log.server_args, "lmdeploy", ["--engine-version", "0.1.0"], LLAMA2_7B)[0]
    assert resolve_version(log).label == "~0.7.3"  # its lines alone: the flag above sets v0.1.0
    result = explain(ExplainRequest(log=log, model=load_model(LLAMA2_7B), settings=settings, gpu_total_bytes=gpu_total,
                                    given=MeasuredInputs()))  # fmt: skip
    assert result.ledger is not None
    return result.ledger


def _gpu_step(ledger: Ledger) -> BudgetStep:
    (step,) = [step for step in ledger.engine.steps if step.role == "gpu_total"]
    return step


def test_turbomind_total_is_found_by_its_role_whatever_its_wording() -> None:
    """v0.1.0's GetBlockCount: size_t(total × 0.5) // block; at 20,470 MiB (the vGPU's total, VGPU-SMI in the log)
    10,235 MiB // 64 MiB = 159 blocks, the log's `max_block_count = 159`. The step keeps TurboMind's wording; the
    stand-in and the log's total find it by its role (the label "GPU memory" matched nothing here before)."""
    smi = re.search(r"\| +\d+MiB / (\d+)MiB", (TUTORIAL / "engine.log").read_text())  # `14750MiB / 20470MiB`
    assert smi is not None
    vgpu = int(smi.group(1)) * MIB
    ledger = _tutorial_ledger(vgpu)
    assert ledger.engine.token_capacity == 159 * 128  # the log's `max_block_count = 159` of 128-token blocks
    step = _gpu_step(ledger)
    assert (step.label, step.bytes) == ("total (cudaMemGetInfo), taken as --gpu-memory", vgpu)
    assert logged_total_said(ledger, "`20470MiB`", total=vgpu).engine.steps[0].label == "GPU memory (logged)"
    at_stand_in = _tutorial_ledger(PLACEHOLDER_GPU_BYTES)
    said = _gpu_step(stand_in_gpu_said(at_stand_in))
    assert (said.label, said.measured) == (STAND_IN, False)


def test_a_measured_total_of_exactly_the_stand_ins_bytes_is_not_said_a_stand_in() -> None:
    """A total the log printed (measured) as 80.00 GiB is the log's, not the stand-in, though its bytes are equal."""
    ledger = logged_total_said(_tutorial_ledger(PLACEHOLDER_GPU_BYTES), "`80.00 GiB`", total=PLACEHOLDER_GPU_BYTES)
    step = _gpu_step(stand_in_gpu_said(ledger))
    assert (step.label, step.measured, step.note) == ("GPU memory (logged)", True, "the log's `80.00 GiB`")


def test_vllms_cuda_total_is_found_by_its_role() -> None:
    """With --gpu H100 and no KV-memory line (talos#1995), vLLM solves at CUDA's calibrated total, labelled "GPU
    memory as CUDA reports it", role `cuda_total`: the table's label is never put on it, even where the ledger's given
    total has its very bytes (labelled by role, not by comparing bytes), nor the log's (a logged total is passed as
    the GPU total, whose step is `gpu_total`)."""
    log = read_engine_log(CASES / "vllm" / "talos-pr1995-qwen38-27b-fp8-tp2" / "engine.log")
    settings = settings_typed_for_log({**log.server_args, **log.engine_config}, "vllm", [], "llama-3.1-8b")[0]
    result = explain(ExplainRequest(log=log, model=load_model("llama-3.1-8b"), settings=settings,
                                    gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100"))  # fmt: skip
    assert result.ledger is not None
    (step,) = [step for step in result.ledger.engine.steps if step.role == "cuda_total"]
    assert (step.label, step.source, step.measured) == ("GPU memory as CUDA reports it", "calibrated", False)
    assert step.bytes is not None and step.bytes < gpu_total_bytes("H100")  # CUDA's total, below nvidia-smi's
    assert not [step for step in result.ledger.engine.steps if step.role == "gpu_total"]
    same_bytes = result.ledger.model_copy(update={"gpu_total_bytes": step.bytes})
    for said in (total_origin_said(same_bytes, GpuTotalOrigin.TABLE), logged_total_said(same_bytes, "`t`", step.bytes)):
        assert said.engine.steps[0] == step
