"""`--trust-remote-code` on LMDeploy and TensorRT-LLM: accepted where the engine's parser has it, refused by name
where it does not (vLLM and SGLang take it as a no-op launch flag).

- LMDeploy: `serve api_server` adds `--trust-remote-code` (store_true) in v0.13.0 (cli/serve.py:84
  `ArgumentHelper.trust_remote_code`, cli/utils.py:774-779, the v0.13.0 wheel); the v0.12.3 wheel's serve.py has no
  such argument (its loaders pass `trust_remote_code=True` themselves, tokenizer.py:50), so its argparse rejects it.
- TensorRT-LLM: trtllm-serve declares `@click.option("--trust_remote_code", is_flag=True)` (commands/serve.py);
  click takes names as declared, so `--trust-remote-code` is "No such option" there.
The flag lets the model's own code load and holds no memory: the plan with it is the plan without it.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA2_7B = str(CONFIGS / "meta-llama--Llama-2-7b-hf.json")
PLAN = ["--model", LLAMA2_7B, "--gpu", "H100", "--no-calibration-store"]


def _tokens(capsys: pytest.CaptureFixture[str], *args: str) -> int:
    assert main(["plan", "--json", *PLAN, *args]) == 0
    tokens: int = json.loads(capsys.readouterr().out)["token_capacity"]
    return tokens


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", *PLAN, *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("version", ["0.13.0", "0.16.0"])
def test_lmdeploy_takes_it_from_v0130(capsys: pytest.CaptureFixture[str], version: str) -> None:
    launch = ("--engine", "lmdeploy", "--engine-version", version)
    assert _tokens(capsys, *launch, "--trust-remote-code") == _tokens(capsys, *launch)


@pytest.mark.parametrize(
    "launch",
    [
        ["--engine", "lmdeploy", "--engine-version", "0.12.3", "--trust-remote-code"],
        ["--engine-version", "0.10.0", "--cmd", f"lmdeploy serve api_server {LLAMA2_7B} --trust-remote-code"],
    ],
)
def test_lmdeploy_before_v0130_refuses_it_by_name(capsys: pytest.CaptureFixture[str], launch: list[str]) -> None:
    err = _refused(capsys, *launch)
    assert err.startswith("kvtop: error: --trust-remote-code: LMDeploy 0.1") and "from v0.13.0" in err
    assert "cli/serve.py:84" in err


def test_lmdeploy_names_its_spelling_for_the_underscored_one(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(capsys, "--engine", "lmdeploy", "--trust_remote_code")
    assert err == "kvtop: error: --trust_remote_code: LMDeploy spells it --trust-remote-code\n"


def test_tensorrt_llm_takes_its_click_spelling_and_names_it_for_the_hyphened(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _tokens(capsys, "--engine", "trtllm", "--trust_remote_code") == _tokens(capsys, "--engine", "trtllm")
    err = _refused(capsys, "--engine", "trtllm", "--trust-remote-code")
    assert err == "kvtop: error: --trust-remote-code: TensorRT-LLM spells it --trust_remote_code\n"
