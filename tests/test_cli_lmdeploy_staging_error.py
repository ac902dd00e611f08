"""TurboMind's staging charge (docs/engines/lmdeploy.md §15.1) is a lower bound: the smaller tensors staged before
the LM head leave segments in torch's cache too. Its error, the largest layer matrix's rank slice × the era's live
copies, widens the weights term's error and so the plan's interval; a workspace or the PyTorch engine has none.

Expected figures from Llama-3.1-8B's config.json (intermediate_size 14,336, hidden_size 4,096, bfloat16) and the
layers' live copies in LMDeploy's converter: 0 up to v0.6.1 (each shard's reader emptied torch's cache) and from
v0.9.0 (PR #3570), 2 from v0.6.2, whose `module.py` stages the MLP's matrices as transposed views (`Ffn._export`:
`map(transpose, w123)`), which `.cuda()` keeps and `.contiguous()` copies.
"""

from __future__ import annotations

import json
import math

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
MLP_SLICE = 14_336 * 4_096 * 2  # one rank's MLP matrix at TP 1, bf16: 112 MiB


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--json", "--model", LLAMA_8B, "--engine", "lmdeploy", "--gpu", "H100", *args]) == 0
    return json.loads(capsys.readouterr().out)


def _weights_error(plan: dict) -> int:
    return next(term["error_bytes"] for term in plan["terms"] if term["term"] == "weights")


def _half_width(plan: dict) -> float:
    return (plan["kv_budget_max_bytes"] - plan["kv_budget_min_bytes"]) / 2


@pytest.mark.parametrize(
    ("version", "tp", "leftover"),
    [
        ("0.8.0", "1", 2 * MLP_SLICE),  # v0.8.0 stages a transposed view: two live copies
        ("0.7.0", "1", 2 * MLP_SLICE),  # the LM head is staged as stored, the layers' matrices as .t() views
        ("0.6.2", "1", 2 * MLP_SLICE),  # the first loader that empties no cache
        ("0.8.0", "2", 2 * MLP_SLICE // 2),  # 7,168 of the MLP's rows a rank
        ("0.6.1", "1", 0),  # each shard's reader emptied the cache
        ("0.9.0", "1", 0),  # PR #3570 empties it after conversion
    ],
)
def test_the_weights_error_holds_the_staging_leftover(
    capsys: pytest.CaptureFixture[str], version: str, tp: str, leftover: int
) -> None:
    launch = ("--engine-version", version, "--tp", tp)
    checkpoint = _plan(capsys, *launch)
    workspace = _plan(capsys, *launch, "--turbomind-workspace")  # a workspace stages nothing
    assert _weights_error(checkpoint) == round(math.hypot(_weights_error(workspace), leftover))


def test_the_interval_widens_by_the_leftover_and_the_pytorch_engine_has_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    checkpoint = _plan(capsys, "--engine-version", "0.8.0")
    workspace = _plan(capsys, "--engine-version", "0.8.0", "--turbomind-workspace")
    # the budget is size_t(free × 0.8); the interval's half-width is 0.8 × scale × √(Σ errors²)
    added = 0.8 * checkpoint["interval_scale"] * 2 * MLP_SLICE
    assert math.isclose(_half_width(checkpoint) ** 2, _half_width(workspace) ** 2 + added**2, rel_tol=1e-6)
    staging = next(step for step in checkpoint["steps"] if "staging" in step["label"])
    assert "up to 224 MiB more (in the interval)" in staging["note"]
    pytorch = _plan(capsys, "--engine-version", "0.8.0", "--backend", "pytorch")
    assert _weights_error(pytorch) == _weights_error(workspace)
