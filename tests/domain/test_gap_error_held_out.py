"""The error of CUDA's total on a GPU no log printed the total of: the gap's held-out error, judged on each printed total
of a GPU model left out whole (#27, session 56).

Expected value: an A40 prints `GPU 2 has a total capacity of 44.35 GiB` (search-index id 56148972164, a lab cluster of
8 × A40; tests/data/calibration/gpus.jsonl `file56148972164-a40-oom`), against nvidia-smi's 46,068 MiB (44.99 GiB,
kvtop's table). Before session 56 no log of the A40 was in the corpus and the plan took 44.54 ± 0.16 GiB: the gap's error
was judged at each GPU model's mean total, which leaves out how far one card's totals spread about their model's mean,
so the A40's printed total fell 0.03 GiB outside (SGLang's A40 start of search-index id 67328003014 missed its interval).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from benchmarks.calibration import evaluate
from benchmarks.calibration.corpus import load_all
from kvtop.domain.calibration.gpu_totals import (
    FALLBACK_KEY,
    GAP_FEATURES,
    KEY_PREFIX,
    cuda_total_estimate,
    gap_features,
)
from kvtop.domain.calibration.linear import fit_term
from kvtop.domain.gpus import GPU_TOTAL_MIB
from kvtop.domain.wording import GIB, MIB

A40_PRINTED = round(Decimal("44.35") * GIB)  # search-index id 56148972164


def test_an_a40_left_out_holds_its_printed_total(monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus's totals without the A40's: the A40 planned from nvidia-smi's total less the gap, and its interval
    holds the total the A40 printed; the error judged at the models' means would not."""
    kept = [row for row in evaluate.GPU_TOTALS if row.gpu != "A40"]
    monkeypatch.setattr(evaluate, "GPU_TOTALS", kept)
    fits = evaluate.cuda_total_fits(load_all())
    assert "cuda_total.A40" not in fits
    estimate = cuda_total_estimate("A40", GPU_TOTAL_MIB["A40"] * MIB, fits)
    assert "no log of this GPU" in estimate.basis
    miss = abs(estimate.bytes - A40_PRINTED)
    assert miss <= estimate.error_bytes
    # the same gap judged at each model's mean total (its held-out error before session 56) does not hold it
    models = [key.removeprefix(KEY_PREFIX) for key in fits if key.startswith(KEY_PREFIX) and key != FALLBACK_KEY]
    rows = [(gap_features(GPU_TOTAL_MIB[model] * MIB), GPU_TOTAL_MIB[model] * MIB / GIB - fits[KEY_PREFIX + model].predict_gib((1.0,)))
            for model in models if model in GPU_TOTAL_MIB]  # fmt: skip
    assert miss > fit_term(FALLBACK_KEY, GAP_FEATURES, rows).error_bytes


def test_one_models_spread_is_in_the_gap_error() -> None:
    """Four models whose mean totals lie on one gap (0.30 GiB + 0.50 per 100 GiB of nvidia-smi's total): each left out
    is predicted at its mean exactly, so an error judged at the means is 0; the one model that printed 19.50 and 19.70
    about its 19.60 misses each by 0.10, and the 90th percentile over four models (each weighing as one) is that."""
    smi = {"a": 10.0, "b": 20.0, "c": 40.0, "d": 80.0}
    printed = {"a": (9.65,), "b": (19.50, 19.70), "c": (39.50,), "d": (79.30,)}
    features = {model: gap_features(round(total * GIB)) for model, total in smi.items()}
    gaps = {model: tuple(smi[model] - total for total in totals) for model, totals in printed.items()}
    assert evaluate.gap_held_out_error_gib(features, gaps) == pytest.approx(0.10, abs=1e-6)
    two = {model: gaps[model] for model in ("a", "b")}
    assert evaluate.gap_held_out_error_gib(features, two) is None  # two models: nothing left to judge on
