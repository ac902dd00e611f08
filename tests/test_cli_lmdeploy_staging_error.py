"""TurboMind's staging charge (docs/engines/lmdeploy.md §15.1) leaves out the attention's own segments in torch's
cache. Their estimate, the q, k, v and o projections read whole and copied once, widens the weights term's error and
so the plan's interval; a workspace or the PyTorch engine has none.

Expected figures from Llama-3.1-8B's config.json (32 heads, 8 KV heads, head_dim 128, hidden_size 4,096, bfloat16)
and LMDeploy's converter: 0 up to v0.6.1 (each shard's reader emptied torch's cache) and from v0.9.0 (PR #3570); from
v0.6.2 the reader puts each projection whole on the GPU (`policy.to_cuda`) and `module.py` copies it once more
(`permute_v2`/`merge_qkv_v2` for q, k, v; `.contiguous()` of wo's transposed view), whatever the TP.
"""

from __future__ import annotations

import json
import math

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.estimate import preload_estimate
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term
from kvtop.domain.calibration.weights import ERROR_FEATURES, LOADED_ERROR_KEY, WEIGHTS_RELATIVE_ERROR
from kvtop.domain.engines.lmdeploy.calibration import FITS
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
ATTENTION = 2 * (32 + 8 + 8 + 32) * 128 * 4_096 * 2  # q, k, v, o read whole and copied once, bf16: 160 MiB


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--json", "--model", LLAMA_8B, "--engine", "lmdeploy", "--gpu", "H100", *args]) == 0
    return json.loads(capsys.readouterr().out)


def _weights_error(plan: dict) -> int:
    return next(term["error_bytes"] for term in plan["terms"] if term["term"] == "weights")


def _half_width(plan: dict) -> float:
    """The interval's lower half: where every term charges more, none meets the floor that keeps a term from moving
    below 0 bytes (the assumed 0.75 GiB context's error is wider than it, so the upper half is not symmetric), less
    the widening for lying outside the corpus, which joins it as one more root-of-squares error proportional to each
    plan's own budget (`ExtrapolationWidening.widen`; the plan's `extrapolation` term)."""
    widening = next((term["error_bytes"] for term in plan["terms"] if term["term"] == "extrapolation"), 0)
    return math.sqrt((plan["kv_budget_bytes"] - plan["kv_budget_min_bytes"]) ** 2 - widening**2)


@pytest.mark.parametrize(
    ("version", "tp", "leftover"),
    [
        ("0.8.0", "1", ATTENTION),
        ("0.7.0", "1", ATTENTION),
        ("0.6.2", "1", ATTENTION),  # the first loader that empties no cache
        ("0.8.0", "2", ATTENTION),  # read whole on the first GPU whatever the TP
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
    # the budget is size_t(free × 0.8); the interval's lower half is 0.8 × scale × √(Σ errors²)
    added = 0.8 * checkpoint["interval_scale"] * ATTENTION
    assert math.isclose(_half_width(checkpoint) ** 2, _half_width(workspace) ** 2 + added**2, rel_tol=1e-6)
    staging = next(step for step in checkpoint["steps"] if "staging" in step["label"])
    assert "about 160 MiB more (in the interval)" in staging["note"]
    pytorch = _plan(capsys, "--engine-version", "0.8.0", "--backend", "pytorch")
    assert _weights_error(pytorch) == _weights_error(workspace)


@pytest.mark.parametrize("relative_error", [WEIGHTS_RELATIVE_ERROR, 0.05])
def test_a_judged_plan_keeps_the_leftover_beside_its_fitted_error(
    capsys: pytest.CaptureFixture[str], relative_error: float
) -> None:
    """A plan judged blind (benchmarks/calibration/evaluate.py) re-reads the book's relative error from fits that left
    its source out (`weights.with_fitted_error`); the staging leftover is the engine's, not the fit's, and stays
    beside it: root of the squares of the book × the fitted error and 2 × 80 × 128 × 4,096 × 2 B (v0.8.0, TP 1). At the
    committed error the judged term is the one `plan` prints."""
    settings = LaunchSettings(engine="lmdeploy", model=LLAMA_8B, engine_version="0.8.0")
    ledger = predict(load_model(LLAMA_8B), settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    fit = LinearTerm(key=LOADED_ERROR_KEY, features=ERROR_FEATURES, coefficients=(relative_error,), error_bytes=0,
                     records=1)  # fmt: skip
    judged = preload_estimate(ledger, fits={**CUDA_TOTAL_FITS, **FITS, LOADED_ERROR_KEY: fit}).term(Term.WEIGHTS)
    assert judged is not None
    assert judged.error_bytes == round(math.hypot(round(judged.bytes * relative_error), ATTENTION))
    if relative_error == WEIGHTS_RELATIVE_ERROR:
        assert judged.error_bytes == _weights_error(_plan(capsys, "--engine-version", "0.8.0"))
