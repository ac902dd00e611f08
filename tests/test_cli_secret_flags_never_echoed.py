"""The secret-bearing flags of each engine's own server parser are accepted (vLLM's and SGLang's as memory-neutral;
LMDeploy's and llama.cpp's as typed, their flags not classified), never 'an unknown flag', and their values are never echoed: not in the plan's text, its JSON, the notes on stderr, nor explain.

The flags, from the engines' arg lists: vLLM `--api-key` (entrypoints/common/cli_args.py:335, v0.33.0), `--hf-token`
(engine/arg_utils.py:1034), `--ssl-keyfile` (cli_args.py:346); SGLang `--api-key` (srt/arg_groups/fields/serving.py:160,
v0.5.23), `--admin-api-key` (:164, from v0.5.8), `--ssl-keyfile-password` (:148); LMDeploy `--api-keys k1 k2`
(lmdeploy/cli/utils.py ArgumentHelper.api_keys, nargs='*', v0.2.2 to v0.16.0: it was refused as unknown); llama.cpp
`--api-key` and `-hft/--hf-token` (common/arg.cpp: `-hft` was refused as unknown). TensorRT-LLM's CLIs take none
(trtllm/flags.py `secret_flags`)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.redact import redact_argv
from kvtop.domain.secret_text import redact_text
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


# A short secret flag with its value glued on (`-hftVALUE`, `-hft=VALUE`, `-kVALUE`): llama.cpp's `-hft` (common/arg.cpp
# `{"-hft", "--hf-token"}`, ggml-org/llama.cpp@145b6280) and `-k` by convention. No engine's parser takes a value
# glued to a short flag, so the word is named as an unknown flag: its tail is the key, masked whatever it looks like
# (plain words here, which no shape test calls random), and never anywhere else.
GLUED = ("plainword", "plaintwo", "plainthree")
GLUED_LAUNCHES = {
    "llamacpp": f"llama-server -m {LLAMA} -hftplainword -kplaintwo -hft/a+b=plainthree",
    "vllm": f"vllm serve {LLAMA} --tp 2 -hftplainword -kplaintwo -hft/a+b=plainthree",
    "sglang": f"python -m sglang.launch_server --model-path {LLAMA} -hftplainword -kplaintwo -hft/a+b=plainthree",
}


@pytest.mark.parametrize("engine", sorted(GLUED_LAUNCHES))
def test_a_glued_short_secret_flag_s_value_is_never_echoed(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    assert main(["plan", "--cmd", GLUED_LAUNCHES[engine], "--gpu", "H100"]) == 0
    out, err = capsys.readouterr()
    assert not [value for value in GLUED if value in out + err]
    assert err.endswith(": -hft***, -k***\n")  # named as spelled up to the key: the two `-hft…` alike, once
    assert main(["plan", "--cmd", GLUED_LAUNCHES[engine], "--gpu", "H100", "--json"]) == 0
    out, err = capsys.readouterr()
    assert not [value for value in GLUED if value in out + err]
    named = [entry["flag"] for entry in json.loads(out)["flags_not_read"]]
    assert named == ["-hft***", "-k***"]


def test_a_short_secret_flag_glued_or_given_by_equals_is_masked_in_text_and_argv() -> None:
    assert redact_text("kvtop ignored: -hftplainword, -k=plaintwo") == "kvtop ignored: -hft***, -k=***"
    assert redact_text('["-hftplain word", "-kvu"]') == '["-hft***", "-kvu"]'  # a quoted word to its quote
    argv = ["llama-server", "-kvu", "-kvo", "-hftplainword", "-hft=plaintwo", "-kplainthree", "-hft", "x"]
    # `-kvu`, `-kvo`: llama.cpp's own flags (common/arg.cpp), not `-k` with a value
    assert redact_argv(argv) == ("llama-server", "-kvu", "-kvo", "-hft***", "-hft=***", "-k***", "-hft", "***")


def test_an_unknown_secret_named_flag_s_likeness_reads_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    # `--apikey (like --api-key?)` read `(like` as the key's value: `--apikey *** --api-key?)`
    assert main(["plan", "--cmd", f"vllm serve {LLAMA} --apikey plainword --frobnicat", "--gpu", "H100"]) == 0
    err = capsys.readouterr().err
    assert "plainword" not in err
    assert err.startswith("kvtop: note: --cmd: kvtop ignored 2 flags it does not know for vLLM: "
                          "--apikey, like --api-key?, --frobnicat\n")  # fmt: skip


def test_a_glued_short_secret_flag_typed_to_kvtop_is_never_echoed(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse reads `-hftKEY` as kvtop's `-h` with `ftKEY` glued on, and said so: `ignored explicit argument 'ftKEY'`
    for glued in ("-hftplainword", "-kplainword"):
        try:
            assert main(["plan", "--engine", "llamacpp", "--model", LLAMA, glued, "--gpu", "H100"]) != 0
        except SystemExit as exit_:  # argparse's own refusal
            assert exit_.code == 2
        err = capsys.readouterr().err
        assert "plainword" not in err and err.startswith("kvtop")


def test_a_launch_s_parse_keeps_a_glued_key_masked() -> None:
    # a running server's command line is parsed into `LaunchSettings` (its flags shown by the TUI): the key is never
    # kept, neither in the flag's name (`-hftKEY`) nor as the value split off at its `=` (`-hft/a+b=KEY`)
    settings = parse_launch_command(GLUED_LAUNCHES["llamacpp"])
    assert settings is not None
    assert settings.unknown_flags == ("-hft***", "-k***", "-hft***")
    assert not [value for value in GLUED if value in repr(settings)]
