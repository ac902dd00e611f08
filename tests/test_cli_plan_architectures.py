"""`kvtop plan` of a model class the engine release does not register: refused (exit 2) in the engine's words;
a release kvtop read no list for says "not checked" (kvtop.domain.engine_architectures)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

JAMBA = str(CONFIGS / "heldout" / "ai21labs--AI21-Jamba-1.5-Mini.json")
ARGS = ["--model", JAMBA, "--gpu", "H100", "--no-calibration-store"]


def test_sglang_refuses_jamba_and_plan_exits_2_with_its_words(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--engine", "sglang", "--tp-size", "2", *ARGS]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "kvtop: error: --model: SGLang 0.5.23 (no release stated: the newest read) has no model"
    )
    assert "'JambaForCausalLM has no SGlang implementation and the Transformers implementation is not " in err
    assert "Traceback" not in err


def test_a_release_without_a_list_is_planned_and_says_not_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--engine", "sglang", "--tp-size", "2", "--engine-version", "0.5.10", *ARGS]) == 0
    out = capsys.readouterr().out
    assert ("note: whether SGLang 0.5.10 registers JambaForCausalLM is not checked: kvtop read its registry at "
            "0.5.6.post2, 0.5.23 only") in out  # fmt: skip


def test_plan_json_carries_the_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--json", "--engine", "vllm", "--tensor-parallel-size", "2", *ARGS]) == 0
    check = json.loads(capsys.readouterr().out)["architecture_check"]
    assert check["state"] == "registered" and check["architecture"] == "JambaForCausalLM"
    assert check["source"] == "vllm/model_executor/models/registry.py _VLLM_MODELS, vLLM 0.34.0 wheel"  # the newest release read
