"""One "context" in every view of a plan (operator QA, session 56): the budget's context row, `ranks[].context_bytes`
and its error, and the plan's `terms.context` are one figure; nvidia-smi's total less CUDA's (the driver's share) is
its own row and its own field, never folded into the context; an interval whose ends lie unequally far from the
capacity says both.

Expected figures come from the plan's own table inputs, not from the function under test: the A100 80GB's 80 GiB
(nvidia-smi, kvtop/domain/gpus.py's table), CUDA's total as the committed fit of 7 logged totals gives it
(79.205714 GiB, docs/calibration.md), and the context LMDeploy's calibration assumes at TP 1 (0.75 GiB,
`features.ASSUMED_CONTEXT_GIB`: too few LMDeploy logs to fit it).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.features import ASSUMED_CONTEXT_GIB
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS

QWEN_7B = str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")
LMDEPLOY_A100 = ("--engine", "lmdeploy", "--gpu", "A100-80GB", "--model", QWEN_7B)
NVIDIA_SMI_TOTAL = 80 * GIB  # the A100 80GB's 81,920 MiB
CUDA_TOTAL = round(CUDA_TOTAL_FITS["cuda_total.A100-80GB"].coefficients[0] * GIB)
CONTEXT = round(ASSUMED_CONTEXT_GIB[0] * GIB)  # 805,306,368 B at TP 1


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", "--no-calibration-store", *args]) == 0
    return capsys.readouterr().out


def _term(out: dict, name: str) -> dict:  # type: ignore[type-arg]
    return next(term for term in out["terms"] if term["term"] == name)


def test_the_lmdeploy_budget_shows_the_drivers_share_apart_from_the_context(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: '− CUDA context, NCCL 1.54 GiB' from nvidia-smi's 80.00 GiB, the 0.79 GiB gap silently in it, beside
    the assumptions table's 0.75 GiB context and 79.21 GiB CUDA total."""
    out = json.loads(_plan(capsys, "--json", *LMDEPLOY_A100))
    steps = {step["label"]: step["bytes"] for step in out["steps"]}
    assert CUDA_TOTAL == 85_046_487_822 and NVIDIA_SMI_TOTAL - CUDA_TOTAL == 852_858_098  # 0.79 GiB
    assert steps["GPU memory (nvidia-smi's total)"] == NVIDIA_SMI_TOTAL
    assert steps["− driver reserved (nvidia-smi's total less CUDA's)"] == -(NVIDIA_SMI_TOTAL - CUDA_TOTAL)
    assert steps["− CUDA context, NCCL"] == -CONTEXT == -_term(out, "context")["bytes"]
    # the budget still starts the weights from CUDA's total less the context, as LMDeploy measures its free memory
    assert steps["free after weights (least over ranks)"] == CUDA_TOTAL - CONTEXT - out["weights_bytes"]


def test_a_ranks_context_and_its_error_are_the_plans_context_term(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `ranks[0].context_bytes` 1.54 GiB ± 1.0 GiB (a flat range) against `terms.context` 0.75 ± 1.54 GiB."""
    out = json.loads(_plan(capsys, "--json", *LMDEPLOY_A100))
    context = _term(out, "context")
    for rank in out["ranks"]:
        assert (rank["context_bytes"], rank["context_error_bytes"], rank["context_source"]) == (
            CONTEXT, context["error_bytes"], context["source"])  # fmt: skip
        assert rank["driver_reserved_bytes"] == NVIDIA_SMI_TOTAL - CUDA_TOTAL


def test_sglang_on_an_h100_keeps_its_context_term_and_the_drivers_share_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: 1.233 GiB a rank (the H100's 0.46 GiB driver share in it) against `terms.context` 0.77 GiB."""
    out = json.loads(_plan(capsys, "--json", "--engine", "sglang", "--gpu", "H100", "--model", QWEN_7B))
    context, cuda_total = _term(out, "context"), _term(out, "cuda_total")
    rank = out["ranks"][0]
    assert (rank["context_bytes"], rank["context_error_bytes"]) == (context["bytes"], context["error_bytes"])
    assert rank["driver_reserved_bytes"] == out["gpu"]["total_bytes"] - cuda_total["bytes"] == 497_434_455


def test_an_asymmetric_interval_says_both_ends(capsys: pytest.CaptureFixture[str]) -> None:
    """LMDeploy's object cache is a share of the memory after the weights, cut into whole 64-token blocks, and the
    context cannot move below 0 bytes: its ends lie unequally far from the capacity, and '± the wider' hid that."""
    out = json.loads(_plan(capsys, "--json", *LMDEPLOY_A100))
    low, centre, high = out["token_capacity_min"], out["token_capacity"], out["token_capacity_max"]
    assert centre - low != high - centre
    line = next(line for line in _plan(capsys, *LMDEPLOY_A100).splitlines() if line.startswith("Interval"))
    assert f"{low:,} – {high:,} tokens (−{centre - low:,} / +{high - centre:,})" in line


def test_ends_a_token_apart_read_as_one_plus_minus() -> None:
    """Ends that differ by rounding (a token, a page) are one '±' of the wider; ends 40 % apart say both."""
    from kvtop.domain.wording import spread

    assert spread(29_292, 29_291) == "± 29,292"
    assert spread(45_056, 27_520) == "−45,056 / +27,520"
