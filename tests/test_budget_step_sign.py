"""A budget step whose label states its sign ('− weights') prints its size once signed: not '− weights  -17.64 GB'
(issue from the operator trial), in `kvtop plan` and `kvtop explain` alike."""

from __future__ import annotations

import re

import pytest

from kvtop.cli import main
from kvtop.commands.render_ledger import step_figure
from kvtop.domain.engines.budget_step import BudgetStep
from tests.conftest import CASES, CONFIGS

LLAMA_70B = str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json")
LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
C13_LOG = str(CASES / "sglang" / "C13" / "engine.log")


def step_line(text: str, label: str) -> str:
    """The step's row, a label longer than its column joined with its wrapped rows (`render_ledger.column_rows`)."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(label))
    rows = [lines[at]]
    for line in lines[at + 1 :]:
        if not line.startswith("    ") or line.lstrip().startswith("↳"):
            break
        rows.append(line.strip())
    return " ".join(rows)


def test_plan_prints_the_weights_and_the_reserve_it_subtracts_without_a_second_minus(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Llama-3-70B at TP 8 (the weights table): 8,820,367,360 parameters × 2 B = 17,640,734,720 B, plus SGLang's
    # float32 rope cache 8,192 × 128 × 4 = 4,194,304 B, plus the unused tails of the segments PyTorch's caching
    # allocator opened for them, 21,479,424 B (tests/calibrated_figures.py, SGLANG_LLAMA_70B_SEGMENT_TAILS):
    # 17,666,408,448 B = 17.67 GB = 16.45 GiB
    assert main(["plan", "--model", LLAMA_70B, "--tp", "8", "--gpu", "H100"]) == 0
    text = capsys.readouterr().out
    weights = step_line(text, "− weights")
    assert re.search(r"\s17\.67 GB \(16\.45 GiB\)", weights) and "-" not in weights
    reserve = step_line(text, "− reserve")
    assert re.search(r"\s[0-9.]+ GB \([0-9.]+ GiB\)", reserve) and " -" not in reserve and "(-" not in reserve


def test_explain_prints_the_reserve_it_subtracts_once_signed(capsys: pytest.CaptureFixture[str]) -> None:
    # C13's log: 78.81 GiB free before load, SGLang's fraction 0.88: the reserve is 78.81 × 0.12 = 9.457 GiB
    assert main(["explain", C13_LOG, "--model", LLAMA_8B]) == 0
    reserve = step_line(capsys.readouterr().out, "− reserve: pre-load × (1 − 0.88)")
    assert reserve.endswith(" 10.15 GB (9.46 GiB)") and " -" not in reserve and "(-" not in reserve


def test_a_step_against_its_labels_sign_keeps_its_own_sign() -> None:
    assert step_figure(BudgetStep(label="− weights", bytes=-(3 << 30))) == "3.22 GB (3.00 GiB)"
    assert step_figure(BudgetStep(label="− weights", bytes=3 << 30)) == "+3.22 GB (3.00 GiB)"  # it adds: said
    assert step_figure(BudgetStep(label="unused", bytes=-(3 << 30))) == "−3.22 GB (−3.00 GiB)"  # no sign in the label
    assert step_figure(BudgetStep(label="− page rounding", bytes=-4096)) == "4,096 B"
    assert step_figure(BudgetStep(label="tokens", value=1_209_386)) == "1,209,386"


def test_a_step_prints_the_one_minus_and_the_one_small_figure_rule() -> None:
    # a label stating '+' over a negative size, and a signless label over a few negative bytes: the typographic
    # minus (U+2212) every figure of kvtop's prints, never ASCII '-'; under 0.01 GB the exact bytes
    # the sign on both units: 3 GiB = 3.22 GB, both below zero (was '−3.22 GB (3.00 GiB)': a GiB read as a gain)
    assert step_figure(BudgetStep(label="+ graphs", bytes=-(3 << 30))) == "−3.22 GB (−3.00 GiB)"
    assert step_figure(BudgetStep(label="+ rounding", bytes=-4096)) == "−4,096 B"
    assert step_figure(BudgetStep(label="unused", bytes=-4096)) == "−4,096 B"
    assert step_figure(BudgetStep(label="− page rounding", bytes=4096)) == "+4,096 B"
    assert step_figure(BudgetStep(label="+ nothing", bytes=0)) == "0 B"  # no sign on a zero, against no label
    assert step_figure(BudgetStep(label="tokens", value=-1024)) == "−1,024"
    # a fraction as given, in wording's one formatter (`number`): the fewest digits, the same minus
    assert step_figure(BudgetStep(label="× memory fraction", value=0.9)) == "0.9"
    assert step_figure(BudgetStep(label="ratio", value=-0.25)) == "−0.25"
    # 0.01 GB = 10,000,000 B is the bound: at it both units, a byte below it the exact count
    assert step_figure(BudgetStep(label="unused", bytes=10_000_000)) == "0.01 GB (0.01 GiB)"
    assert step_figure(BudgetStep(label="unused", bytes=9_999_999)) == "9,999,999 B"


def test_a_mismatch_below_the_interval_prints_its_gap_with_the_one_minus(capsys: pytest.CaptureFixture[str]) -> None:
    # C13's log (SGLang, Llama-3.1-8B: 444,500 tokens) read against gpt-oss-20b's config: the log's capacity lies
    # below the predicted interval, a negative gap, written '−' as its bytes beside it are (was 'by -740,766')
    assert main(["explain", C13_LOG, "--model", str(CONFIGS / "openai--gpt-oss-20b.json")]) == 0
    verdict = step_line(capsys.readouterr().out, "verdict: MISMATCH")
    assert re.search(r"MISMATCH by −[\d,]+ tokens from the interval's low end", verdict) and "by -" not in verdict
