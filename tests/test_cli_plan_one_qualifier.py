"""A plan's dominant term carries one qualifier, its source (session 54's trial on a TensorRT-LLM plan: "mostly CUDA
graphs, workspaces, NCCL (profiled) (assumed)"). TensorRT-LLM 1.x's non-torch term is what its profiling run leaves
besides the context and the weights; with no fit it is assumed (docs/engines/trtllm.md §20), and the label says whose
it is in words, the source in the one parenthesis."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS


def test_a_trtllm_plans_dominant_term_has_one_parenthesis(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--no-calibration-store", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B.json"),
            "--engine", "trtllm", "--gpu", "H100"]  # fmt: skip
    assert main(args) == 0
    interval = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Interval"))
    assert "mostly the profiling run's CUDA graphs, workspaces, NCCL (assumed)" in interval
    assert ") (" not in interval
