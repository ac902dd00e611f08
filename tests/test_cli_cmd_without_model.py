"""A pasted launch command without its model (an operator trial: `kvtop plan --cmd 'vllm serve'`) was answered
'--model: no model given (use --model … or --cmd …)', naming the flag not given and offering the one that was. The
command is what lacks it: the error names --cmd and the engine's own model flag (SGLang's server_args.py
`--model-path`, vLLM's `--model`, llama.cpp's `-m`)."""

from __future__ import annotations

import pytest

from kvtop.cli import main


@pytest.mark.parametrize(
    ("cmd", "flag"),
    [
        ("vllm serve --tensor-parallel-size 2", "--model"),
        ("python -m sglang.launch_server --tp 2", "--model-path"),
        ("llama-server -c 4096", "-m"),
    ],
)
def test_a_launch_command_without_a_model_says_so(capsys: pytest.CaptureFixture[str], cmd: str, flag: str) -> None:
    assert main(["plan", "--cmd", cmd]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"kvtop: error: --cmd: the launch command names no model (add {flag} M to it, or give --model "
        "PATH|PRESET|HUB_ID)"
    )


def test_no_model_and_no_command_still_names_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--tp", "2"]) == 2
    assert capsys.readouterr().err.strip() == (
        "kvtop: error: --model: no model given (use --model PATH|PRESET|HUB_ID or --cmd '<launch command>')"
    )
