"""A count and its noun agree: '1 process', '2 nodes × 1 GPU', never '1 process(es)' or '1 GPUs'
(session 58's left list: the process pane, the probe dialog and `kvtop plan --nodes` said them)."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.wording import counted
from tests.data_paths import CONFIGS


def test_one_takes_the_singular_and_every_other_count_the_plural() -> None:
    assert counted(1, "process", "processes") == "1 process"
    assert counted(0, "process", "processes") == "0 processes"
    assert counted(2, "GPU") == "2 GPUs"
    assert counted(1, "GPU") == "1 GPU"
    assert counted(1_000, "node") == "1,000 nodes"


def test_two_nodes_of_one_gpu_each(capsys: pytest.CaptureFixture[str]) -> None:
    """TP 2 over 2 nodes: one rank, so one GPU, on each (`place`: the ranks each node runs)."""
    model = str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json")
    assert main(["plan", "--model", model, "--engine", "sglang", "--tp", "2", "--nodes", "2", "--gpu", "H100"]) == 0
    assert "Nodes: 2 nodes × 1 GPU — node 0: rank 0 (TP0) · node 1: rank 1 (TP1)" in capsys.readouterr().out
