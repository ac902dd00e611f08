"""A pasted launch command of one engine with --engine naming another (an operator trial: `kvtop plan --cmd 'vllm
serve M --gpu-memory-utilization 0.5' --engine sglang`) was planned under SGLang's rules with the command's vLLM
fraction dropped in silence (SGLang's automatic 0.83 stood): a plan of a launch nobody typed. The command says its
engine, so a different --engine is refused by name, as `explain` refuses a log of another engine."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS

QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")


@pytest.mark.parametrize(
    ("cmd", "engine", "named"),
    [
        (f"vllm serve {QWEN3_8B} --gpu-memory-utilization 0.5", "sglang", "vLLM"),
        (f"python -m sglang.launch_server --model-path {QWEN3_8B} --tp 2", "trtllm", "SGLang"),
        (f"llama-server -m {QWEN3_8B} -c 8192", "vllm", "llama.cpp"),
    ],
)
def test_a_command_of_another_engine_is_refused(
    capsys: pytest.CaptureFixture[str], cmd: str, engine: str, named: str
) -> None:
    assert main(["plan", "--cmd", cmd, "--engine", engine]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"kvtop: error: --engine: the --cmd is {named}'s launch command")
    assert err.count("\n") == 1


def test_the_same_engine_named_twice_is_fine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--cmd", f"vllm serve {QWEN3_8B} --gpu-memory-utilization 0.5", "--engine", "vllm"]) == 0
    assert "ceil(total × 0.5)" in capsys.readouterr().out
