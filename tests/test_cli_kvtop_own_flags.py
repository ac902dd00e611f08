"""A flag kvtop takes for one engine that the engine itself lacks (`EngineFlags.own_flags`, LMDeploy's
`--turbomind-workspace`): listed as kvtop's in help, accepted typed to kvtop, refused inside `--cmd` (an
engine's own command line, which LMDeploy's argparse would reject), and named as kvtop's to another engine.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.commands.common import engine_flags_help
from tests.cli_in_process import Ran, run_kvtop
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")  # vocab 128,256, hidden 4,096, bf16
PLAN = ["--model", LLAMA_8B, "--gpu", "H100"]
STAGING = "− torch's cache of the weights' staging (first GPU)"


def _kvtop(*args: str) -> Ran:
    return run_kvtop(*args)


def test_help_lists_it_as_kvtops_not_among_lmdeploys_spellings() -> None:
    lines = engine_flags_help().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  LMDeploy (--engine lmdeploy):"))
    # the first "kvtop's own" line after LMDeploy's heading (vLLM lists its own --llm-class earlier)
    own = next(i for i, line in enumerate(lines) if i > start and "kvtop's own, not the engine's" in line)
    assert not any("--turbomind-workspace" in line for line in lines[start:own])  # not LMDeploy's spelling
    assert "--turbomind-workspace (the model path is a TurboMind workspace)" in lines[own]


@pytest.mark.parametrize(
    "cmd",
    [
        ["--cmd", "lmdeploy serve api_server /models/llama --tp 1 --turbomind-workspace"],
        ["--engine", "lmdeploy", "--cmd", "--tp 1 --turbomind-workspace"],  # the engine's flags alone
    ],
)
def test_inside_cmd_it_is_refused_by_name_in_one_line(cmd: list[str]) -> None:
    result = _kvtop("plan", *PLAN, *cmd)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("kvtop: error: --turbomind-workspace: kvtop's own flag")
    assert "which LMDeploy would reject" in result.stderr and "outside --cmd" in result.stderr


def test_to_another_engine_it_is_named_as_kvtops_not_lmdeploys() -> None:
    result = _kvtop("plan", *PLAN, "--engine", "vllm", "--turbomind-workspace")
    assert result.returncode == 2 and "is LMDeploy's flag" not in result.stderr
    assert "--turbomind-workspace: is kvtop's own flag for LMDeploy" in result.stderr
    assert "vLLM has no such setting" in result.stderr


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--json", *PLAN, *args]) == 0
    return json.loads(capsys.readouterr().out)


def _step(plan: dict, label: str) -> int | None:
    return next((step["bytes"] for step in plan["steps"] if step["label"] == label), None)


@pytest.mark.parametrize(
    "launch",
    [
        ["--engine", "lmdeploy", "--engine-version", "0.8.0"],
        ["--cmd", "lmdeploy serve api_server /models/llama --engine-version 0.8.0"],  # typed beside a --cmd
    ],
)
def test_typed_to_kvtop_it_is_accepted_and_drops_the_staging(
    capsys: pytest.CaptureFixture[str], launch: list[str]
) -> None:
    """v0.8.0 stages a Hugging Face checkpoint's LM head through torch (lmdeploy.md §15.1): its rank slice,
    128,256 × 4,096 bf16 params, twice, beside one layer's MLP (14,336 × 4,096 bf16: 3 read whole, 3 zero-pad clones,
    1 contiguous slice at TP 1); a workspace stages nothing. The pool is size_t(free × 0.8)."""
    checkpoint = _plan(capsys, *launch)
    workspace = _plan(capsys, *launch, "--turbomind-workspace")
    staging = 128_256 * 4_096 * 2 * 2 + 7 * 14_336 * 4_096 * 2
    assert _step(checkpoint, STAGING) == -staging and _step(workspace, STAGING) is None
    free = _step(workspace, "free after weights (least over ranks)")
    assert free is not None and free == _step(checkpoint, "free after weights (least over ranks)")
    assert workspace["kv_budget_bytes"] == int(free * 0.8)
    assert checkpoint["kv_budget_bytes"] == int((free - staging) * 0.8)
