"""`plan --compare all --cmd "vllm serve …"` compares from the pasted launch's engine (operator pass, session 72).

`all` is the registry's order (SGLang first), and the first engine is the reference whose KV budget the others are
re-solved at: the pasted vLLM launch was compared from SGLang's budget. A named list keeps its own order."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.compare import engines_named
from kvtop.domain.engines.registry import ENGINE_IDS


def test_all_puts_the_pasted_engine_first_and_keeps_the_rest_in_order() -> None:
    assert engines_named("all", first="vllm") == ("vllm", *(e for e in ENGINE_IDS if e != "vllm"))
    assert engines_named("all") == ENGINE_IDS
    assert engines_named("sglang,vllm", first="vllm") == ("sglang", "vllm")  # named: the first named is the reference


def test_a_pasted_vllm_launch_is_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--no-calibration-store", "--compare", "all", "--gpu", "H100",
            "--cmd", "vllm serve llama-3.1-8b --tensor-parallel-size 2"]  # fmt: skip
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(index for index, line in enumerate(lines) if line.lstrip().startswith("engine (rules)"))
    assert lines[header + 1].lstrip().startswith("vLLM latest")
    assert any(line.startswith("Same KV budget per rank as vLLM,") for line in lines)
