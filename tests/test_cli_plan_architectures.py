"""`kvtop plan` of a model class the engine release does not register: refused (exit 2) in the engine's words;
a release kvtop read no list for says "not checked" (kvtop.domain.engine_architectures)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS, DATA

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


def test_vllm_says_what_it_read_where_no_wheel_decides(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """QuuxForCausalLM is in no vLLM wheel's registry (tests/data/architectures/vllm_first_releases.json, every wheel
    0.6.0 … 0.34.0); 0.35.0 is past the wheels read: kvtop names the wheels it read, not only the three lists."""
    quux = tmp_path / "quux.json"
    quux.write_text(json.dumps(json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
                               | {"architectures": ["QuuxForCausalLM"]}))  # fmt: skip
    read = json.loads((DATA / "architectures" / "vllm_first_releases.json").read_text())
    assert "QuuxForCausalLM" not in read["classes"] and read["releases"][0] == "0.6.0" and "0.20.0" in read["releases"]
    args = ["--model", str(quux), "--gpu", "H100", "--no-calibration-store", "--engine", "vllm"]
    assert main(["plan", *args, "--engine-version", "0.20.0"]) == 0
    assert ("note: whether vLLM 0.20.0 registers QuuxForCausalLM is not checked: no vLLM wheel 0.6.0 … 0.34.0 "
            "registers it (class_releases.py); from 0.7.2 its Transformers backend may serve it with the "
            "transformers installed") in " ".join(capsys.readouterr().out.split())  # fmt: skip
    assert main(["plan", *args, "--engine-version", "0.35.0"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "registers QuuxForCausalLM is not checked: kvtop read the registry of every vLLM wheel 0.6.0 … 0.34.0" in out
    assert "read its registry at" not in out


def test_vllm_before_its_transformers_backend_refuses_a_class_no_wheel_registers(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """vLLM 0.7.1 has no Transformers backend (first in 0.7.2) and reads no auto_map (the 0.7.1 wheel): it stops
    with "Model architectures ['QuuxForCausalLM'] are not supported for now." (registry.py _raise_for_unsupported)."""
    config = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text()) | {"architectures": ["QuuxForCausalLM"]}
    args = ["--gpu", "H100", "--no-calibration-store", "--engine", "vllm", "--engine-version", "0.7.1"]
    for name, text in (("quux", config), ("remote", config | {"auto_map": {"AutoModelForCausalLM": "m.Quux"}})):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(text))
        assert main(["plan", "--model", str(path), *args]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert err.startswith("kvtop: error: --model: vLLM 0.7.1 has no QuuxForCausalLM (no vLLM wheel 0.6.0 … 0.34.0 ")
        assert "it stops with \"Model architectures ['QuuxForCausalLM'] are not supported for now.\"" in err
        assert ("auto_map remote code is not loaded" in err) == (name == "remote")
