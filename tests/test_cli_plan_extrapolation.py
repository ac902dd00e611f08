"""`kvtop plan` outside what the engine's corpus covers: a SGLang plan on an L40 (no SGLang record ran one;
the B300 has one since 93ffec7c) names the widening in its `outside the corpus:` words, in `beyond_support` and as a term of its own (source calibrated) with the committed
share of its KV budget; the same plan on an H100 (records ran it) carries none (#27)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.calibration import EXTRAPOLATION

ARGS = ("--model", "llama-3.1-8b", "--engine", "sglang", "--engine-version", "0.5.9")


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    assert main(["plan", "--json", "--no-calibration-store", *ARGS, *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_plan_on_a_gpu_no_record_ran_names_its_widening(capsys: pytest.CaptureFixture[str]) -> None:
    assert EXTRAPOLATION is not None and "L40" not in EXTRAPOLATION.gpus
    out = _plan(capsys, "--gpu", "L40")
    words = f"no record on an L40; interval widened by ± {EXTRAPOLATION.gpu_fraction * 100:.1f} %"
    if EXTRAPOLATION.gpu_fraction <= 0:  # a refit that measured no miss: named, not widened
        assert any(why.startswith("no record on an L40; the interval is not widened for it") for why in out["beyond_support"])
        return
    assert words in out["beyond_support"]
    term = next(term for term in out["terms"] if term["term"] == "extrapolation")
    assert term["source"] == "calibrated" and term["label"] == words
    assert term["error_bytes"] == round(EXTRAPOLATION.gpu_fraction * out["kv_budget_bytes"])  # the centre's budget
    assert main(["plan", "--no-calibration-store", *ARGS, "--gpu", "L40"]) == 0
    assert f"the interval, outside the corpus: {words}" in capsys.readouterr().out


def test_a_plan_inside_the_corpus_carries_no_widening(capsys: pytest.CaptureFixture[str]) -> None:
    out = _plan(capsys, "--gpu", "H100")
    assert not any(term["term"] == "extrapolation" for term in out["terms"])
    assert not any("interval widened" in why or "not widened" in why for why in out["beyond_support"])
