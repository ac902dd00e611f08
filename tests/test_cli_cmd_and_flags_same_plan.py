"""One launch, one plan: the SageMaker L4 start of google/gemma-4-E2B-it (tests/data/calibration/vllm.jsonl
`xbill9-sagemaker-gemma-gemma-4-e2b-it-l4-v0300-u090-len8192`: sm.py sets SM_VLLM_MAX_MODEL_LEN 8192,
SM_VLLM_GPU_MEMORY_UTILIZATION '0.9', SM_VLLM_SERVED_MODEL_NAME) reads the same whether given as `--cmd` or as
kvtop's own flags, with or without `--served-model-name` (a name, no memory). A reading without
`--gpu-memory-utilization` is another launch: vLLM 0.30.0's own default, 0.92 (config/cache.py:103
`gpu_memory_utilization: float = Field(default=0.92, ...)`; 0.9 at v0.19.0 cache.py:41), which is why the
flags-only judgement of session 67 printed 814,743 where the `--cmd` printed 778,585."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import DATA

E2B = str(DATA / "calibration" / "configs" / "blazejewicz--gemma-4-e2b-japanese-teacher.json")
BASE = ["plan", "--model", E2B, "--engine", "vllm", "--engine-version", "0.30.0", "--gpu", "L4", "--json"]
FLAGS = ["--max-model-len", "8192", "--gpu-memory-utilization", "0.9"]
NAME = ["--served-model-name", "google/gemma-4-E2B-it"]
# the plan's figures; `engine_flags` echoes the words given, the rest is the plan
FIGURES = ("token_capacity", "token_capacity_min", "token_capacity_max", "kv_budget_bytes", "weights_bytes",
           "memory_fraction", "num_blocks", "kv_bytes_per_token", "terms", "not_modelled", "notes")  # fmt: skip


def _plan(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(BASE + args) == 0
    plan = json.loads(capsys.readouterr().out)
    return {name: plan[name] for name in FIGURES}


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def test_cmd_and_flags_plan_the_same_launch_identically(capsys: pytest.CaptureFixture[str]) -> None:
    cmd = _plan(["--cmd", " ".join(["vllm serve google/gemma-4-E2B-it", *FLAGS, *NAME])], capsys)
    assert cmd == _plan(FLAGS + NAME, capsys)
    assert cmd == _plan(FLAGS, capsys)  # the served name holds no memory
    assert cmd == _plan(["--cmd", " ".join(["python -m vllm.entrypoints.openai.api_server --model",
                                            "google/gemma-4-E2B-it", *FLAGS])], capsys)  # fmt: skip


def test_an_unsaid_utilization_is_vllm_030s_default_not_the_launchs(capsys: pytest.CaptureFixture[str]) -> None:
    said, unsaid = _plan(FLAGS, capsys), _plan(FLAGS[:2], capsys)
    assert said["memory_fraction"]["value"] == 0.9  # type: ignore[index]
    assert unsaid["memory_fraction"]["value"] == 0.92  # type: ignore[index]
    assert unsaid == _plan(["--cmd", "vllm serve google/gemma-4-E2B-it --max-model-len 8192"], capsys)
