"""`--mem-fraction-static 1`: SGLang does not refuse it and runs out of memory at start (whole_fraction.py).

Its rule, `rest_memory = available − pre_load × (1 − mem_fraction_static)` (model_runner `profile_max_num_token`),
keeps 0 B there: the pool takes every byte free after the weights and the request-to-token pool, the CUDA graphs and
the activations allocated after it find none. Before: 'fits: at risk' with a 0.00 GiB reserve.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def plan(capsys: pytest.CaptureFixture[str], fraction: str) -> dict:
    assert main(["plan", "--model", LLAMA_8B, "--gpu", "H100", "--mem-fraction-static", fraction, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_fraction_of_one_does_not_fit_and_says_sglang_runs_out(capsys: pytest.CaptureFixture[str]) -> None:
    data = plan(capsys, "1")
    assert data["reserve_bytes"] == 0  # pre-load × (1 − 1)
    assert (data["fits"], data["token_capacity"]) == (False, 0)
    # SGLang's req_to_token pool, (max running requests + 1) × (context + 4) × 4 B: 2,049 × 131,076 × 4
    assert data["shortfall_bytes"] == 2_049 * (131_072 + 4) * 4 == 1_074_298_896
    runs_out = [note for note in data["notes"] if "leaves no runtime reserve" in note]
    assert len(runs_out) == 1 and "it runs out of memory at start" in runs_out[0]
    assert not any("may run out" in note for note in data["notes"])  # one note, not two


def test_a_fraction_below_one_still_fits_at_risk(capsys: pytest.CaptureFixture[str]) -> None:
    data = plan(capsys, "0.99")
    assert data["fits"] is True and data["token_capacity"] > 0 and data["reserve_short_bytes"] > 0
    assert any("it may run out of memory capturing its graphs" in note for note in data["notes"])
