"""explain reads the GPU a log names when no --gpu is given, through the one GPU table (`kvtop.domain.gpus`).

vLLM: the Isambard-AI run (tests/data/cases/vllm/isambard-v0101dev-qwen3-30b-a3b-pp2-tp4-gh200) names its GPU only in
a fused-MoE config path (`device_name=NVIDIA_GH200_120GB`). Its stage-0 worker logged `Model loading took 7.3272 GiB`
and `Available KV cache memory: 76.15 GiB`: the pool vLLM requested (total × 0.9) held at least both, 83.48 GiB. On the
80 GiB stand-in explain used, the requested memory was 72.00 GiB, less than what the log says it held.
"""

from __future__ import annotations

import pytest

from kvtop.domain.wording import GIB
from tests.conftest import CASES, CONFIGS
from tests.explain_cli import explain_json

ISAMBARD = CASES / "vllm" / "isambard-v0101dev-qwen3-30b-a3b-pp2-tp4-gh200" / "engine.log"
QWEN3_30B = str(CONFIGS / "Qwen--Qwen3-30B-A3B.json")
# the log's stage-0 worker: `Model loading took 7.3272 GiB` + `Available KV cache memory: 76.15 GiB`
STAGE0_HELD_BYTES = round((7.3272 + 76.15) * GIB)


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _steps(out: dict[str, object]) -> dict[str, dict[str, object]]:
    steps = out["steps"]
    assert isinstance(steps, list)
    return {str(s["role"]): s for s in steps if s["role"] in ("gpu_total", "memory_fraction")}


def test_vllm_requests_what_the_log_says_its_worker_held(capsys: pytest.CaptureFixture[str]) -> None:
    out = explain_json(capsys, ISAMBARD, "--model", QWEN3_30B, "--engine", "vllm", "--tp", "4", "--pp", "2")
    steps = _steps(out)
    requested = steps["memory_fraction"]["bytes"]
    assert isinstance(requested, int) and requested >= STAGE0_HELD_BYTES  # was 72.00 GiB on the 80 GiB stand-in
    assert steps["gpu_total"]["label"] == "GPU memory (nvidia-smi's total)"  # not "a stand-in: pass --gpu"
    assert out["verdict"] == "match"


def test_vllm_takes_the_log_named_gpu_as_gpu_would(capsys: pytest.CaptureFixture[str]) -> None:
    """The same total and steps as `--gpu 'NVIDIA GH200 120GB'`: one table read, not a second figure."""
    argv = ("--model", QWEN3_30B, "--engine", "vllm", "--tp", "4", "--pp", "2")
    named = _steps(explain_json(capsys, ISAMBARD, *argv))
    given = _steps(explain_json(capsys, ISAMBARD, *argv, "--gpu", "NVIDIA GH200 120GB"))
    assert named == given
