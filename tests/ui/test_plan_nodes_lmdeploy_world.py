"""The planner's node count reads LMDeploy's DP world with the model, as the ledger and `kvtop plan` do.

LMDeploy's PyTorch engine (the backend DeepSeek-V3 gets: TurboMind does not serve it) runs `--tp 8 --dp 16 --ep 16`
as one world of ep = 16 GPUs, not tp × dp = 128 (lmdeploy/pytorch/config.py `DistConfig` from v0.11.0: world = ep
at ep > 1; serve/openai/launch_server.py spreads the dp servers over max(dp, tp, ep) GPUs). Without the model the
backend is unknown and the layout read tp × dp replicas, so an edit to `--dp 8 --ep 8` (8 GPUs: one node of 8)
kept the launch's `--nnodes 2`.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from kvtop.ui.plan_nodes import on_its_nodes
from tests.data_paths import CONFIGS

DEEPSEEK = str(CONFIGS / "deepseek-ai--DeepSeek-V3.json")


def test_an_edit_to_one_node_s_dp_world_drops_nnodes(capsys: pytest.CaptureFixture[str]) -> None:
    base = parse_flags("lmdeploy", ["--tp", "8", "--dp", "16", "--ep", "16", "--nnodes", "2"], strict=True)
    edited = base.model_copy(update={"dp": 8, "ep": 8})
    assert on_its_nodes(base, edited, 8, load_model(DEEPSEEK)).flags == {}  # 8 GPUs: one node of 8
    assert on_its_nodes(base, edited, 8).flags == {"nnodes": "2"}  # without the model: 64 GPUs read, not 8
    # `kvtop plan` lays the edited launch on the one node of 8 GPUs the planner now writes (no --nnodes)
    cmd = "lmdeploy serve api_server deepseek-ai/DeepSeek-V3 --tp 8 --dp 8 --ep 8"
    assert main(["plan", "--model", DEEPSEEK, "--engine", "lmdeploy", "--gpu", "H200", "--cmd", cmd,
                 "--nodes", "1", "--gpus-per-node", "8", "--no-calibration-store", "--json"]) == 0  # fmt: skip
    planned = json.loads(capsys.readouterr().out)
    assert planned["layout"]["gpus"] == 8
