"""A launch line's leading `NAME=VALUE` tokens are the environment it sets: kvtop keeps only the names an engine's
rules read (vLLM's VLLM_MXFP4_USE_MARLIN, mxfp4_backend.py) and drops every other assignment at parse time, so a
token (HF_TOKEN=hf_…) or key pasted with the command is never kept, shown or written (plan text and --json)."""

from __future__ import annotations

from kvtop.cli import main
from kvtop.domain.launch_line import parse_launch_command
from tests.conftest import CONFIGS

SECRET = "hf_kvtopTestSecret0123456789"


def test_only_the_environment_a_rule_reads_is_kept() -> None:
    settings = parse_launch_command(f"HF_TOKEN={SECRET} VLLM_MXFP4_USE_MARLIN=1 vllm serve openai/gpt-oss-120b --tp 2")
    assert settings is not None
    assert settings.flags == {"VLLM_MXFP4_USE_MARLIN": "1"}
    wrapped = parse_launch_command(f"env HF_TOKEN={SECRET} python -m sglang.launch_server --model-path m --tp 2")
    assert wrapped is not None and SECRET not in repr(wrapped)


def test_a_pasted_secret_reaches_no_output(capsys) -> None:
    command = f"HF_TOKEN={SECRET} OPENAI_API_KEY=sk-{SECRET} vllm serve openai/gpt-oss-120b"
    for extra in ([], ["--json"]):
        argv = ["plan", "--engine", "vllm", "--gpu", "H100", "--model", str(CONFIGS / "openai--gpt-oss-120b.json"),
                "--cmd", command, *extra]  # fmt: skip
        assert main(argv) == 0
        captured = capsys.readouterr()
        assert SECRET not in captured.out + captured.err
