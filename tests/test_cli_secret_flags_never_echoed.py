"""The secret-bearing flags of each engine's own server parser are accepted (vLLM's and SGLang's as memory-neutral;
LMDeploy's and llama.cpp's as typed, their flags not classified), never 'an unknown flag', and their values are never echoed: not in the plan's text, its JSON, the notes on stderr, nor explain.

The flags, from the engines' arg lists: vLLM `--api-key` (entrypoints/common/cli_args.py:335, v0.33.0), `--hf-token`
(engine/arg_utils.py:1034), `--ssl-keyfile` (cli_args.py:346); SGLang `--api-key` (srt/arg_groups/fields/serving.py:160,
v0.5.23), `--admin-api-key` (:164, from v0.5.8), `--ssl-keyfile-password` (:148); LMDeploy `--api-keys k1 k2`
(lmdeploy/cli/utils.py ArgumentHelper.api_keys, nargs='*', v0.2.2 to v0.16.0: it was refused as unknown); llama.cpp
`--api-key` and `-hft/--hf-token` (common/arg.cpp: `-hft` was refused as unknown). TensorRT-LLM's CLIs take none
(trtllm/flags.py `secret_flags`)."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
SECRETS = ("sk-abcSECRET1", "sk-def2SECRET", "hf_ghiSECRET3", "pwSECRET4", "admSECRET5")

LAUNCHES = {
    "vllm": f"vllm serve {LLAMA} --tp 4 --api-key sk-abcSECRET1 sk-def2SECRET --hf-token hf_ghiSECRET3 "
    "--ssl-keyfile /etc/k.pem",
    "sglang": f"python -m sglang.launch_server --model-path {LLAMA} --tp 4 --api-key sk-abcSECRET1 "
    "--admin-api-key admSECRET5 --ssl-keyfile /etc/k.pem --ssl-keyfile-password pwSECRET4",
    "lmdeploy": f"lmdeploy serve api_server {LLAMA} --tp 4 --api-keys sk-abcSECRET1 sk-def2SECRET",
    "llamacpp": f"llama-server -m {LLAMA} --api-key sk-abcSECRET1 -hft hf_ghiSECRET3",
}


def _no_secret(text: str) -> None:
    assert not [secret for secret in SECRETS if secret in text]


@pytest.mark.parametrize("engine", sorted(LAUNCHES))
def test_a_secret_flag_is_neutral_and_never_echoed(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    for as_json in ([], ["--json"]):
        assert main(["plan", "--cmd", LAUNCHES[engine], "--gpu", "H100", *as_json]) == 0
        out, err = capsys.readouterr()
        _no_secret(out + err)
        assert "does not know" not in err  # accepted by name, not 'an unknown flag'
    if engine in ("vllm", "sglang"):  # LMDeploy's and llama.cpp's flags are not classified: accepted, not listed
        assert main(["plan", "--cmd", LAUNCHES[engine], "--gpu", "H100"]) == 0
        named = [line for line in capsys.readouterr().out.splitlines() if "no effect on memory (accepted" in line]
        assert len(named) == 1 and "api-key" in named[0]  # named, its value not


def test_kvtop_s_own_secret_value_over_the_cmd_s_is_said_without_either(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--cmd", LAUNCHES["vllm"], "--api-key", "admSECRET5", "--gpu", "H100"]) == 0
    out, err = capsys.readouterr()
    _no_secret(out + err)
    assert err.endswith("kvtop's value wins at a secret (neither shown): --api-key\n")


def test_explain_never_echoes_one(capsys: pytest.CaptureFixture[str]) -> None:
    log = CONFIGS.parent / "cases" / "sglang" / "C04" / "engine.log"
    cmd = f"python -m sglang.launch_server --model-path {LLAMA} --tp 1 --api-key sk-abcSECRET1"
    main(["explain", str(log), "--model", LLAMA, "--gpu", "H200", "--cmd", cmd])
    out, err = capsys.readouterr()
    _no_secret(out + err)
    assert out


@pytest.mark.parametrize("cmd", [
    f"HF_TOKEN=hf_ghiSECRET3 vllm serve {LLAMA} --api-key=sk-abcSECRET1",  # an env prefix, a flag=value
    f"env HF_TOKEN=hf_ghiSECRET3 python3 -m sglang.launch_server --model-path {LLAMA} --api-key=sk-abcSECRET1",
    f"llama-server -m {LLAMA} --hf-token=hf_ghiSECRET3 --api-key sk-abcSECRET1",
])  # fmt: skip
def test_an_env_prefix_or_a_glued_value_is_never_echoed(capsys: pytest.CaptureFixture[str], cmd: str) -> None:
    for as_json in ([], ["--json"]):
        assert main(["plan", "--cmd", cmd, "--gpu", "H100", *as_json]) == 0
        out, err = capsys.readouterr()
        _no_secret(out + err)
        assert "does not know" not in err
