"""The budget's figures stay in one column whatever a label's length (session 64's operator walk): vLLM's 'free at the
worker's start (the extensible KV cache's headroom)' (v0.34.0, budget.py) and the term 'vLLM V2's CUDA-graph estimate
and the memory beside its profile' (v0.29.0 on, v2_graphs.py) are longer than the 48-cell label column and pushed
their figures right; each now wraps within its column, its figure on its last line. The budget's figures end at
column 80 (an 80-column terminal holds them), the terms' at column 62."""

from __future__ import annotations

import re

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")
EXTENSIBLE = ("--engine-version", "0.34.0", "--gpu", "H100", "--", "--enable-extensible-kv-cache", "--max-model-len", "8192")
V2_GRAPHS = ("--engine-version", "0.29.0", "--gpu", "RTX5090", "--", "--max-model-len", "8192")
FIGURE = re.compile(r"\d[\d,.]* GB \([\d.]+ GiB\)")


def _section(out: str, heading: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
    return lines[start + 1 : end]


@pytest.mark.parametrize(("args", "label"), [
    (EXTENSIBLE, ("  free at the worker's start (the extensible KV", "    cache's headroom)")),
])  # fmt: skip
def test_a_long_budget_label_wraps_and_its_figure_stays_in_the_column(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], label: tuple[str, str]
) -> None:
    assert main(["plan", "--model", QWEN3_8B, "--engine", "vllm", *args]) == 0
    rows = _section(capsys.readouterr().out, "Budget (")
    first = rows.index(label[0])  # the label's first part alone on its row
    assert rows[first + 1].startswith(f"{label[1]} ")
    ends = {match.end() for row in rows if (match := FIGURE.search(row))}
    assert ends == {80}  # every figure, the wrapped label's included, ends at column 80


def test_a_long_term_label_wraps_and_its_figure_stays_in_the_column(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", QWEN3_8B, "--engine", "vllm", *V2_GRAPHS]) == 0
    rows = _section(capsys.readouterr().out, "Before the start")
    first = rows.index("  vLLM V2's CUDA-graph estimate and the memory")
    assert rows[first + 1].startswith("    beside its profile ")
    ends = {m.end(1) for row in rows if (m := re.match(r"  \S.*?\s+(\d+\.\d\d GiB)  ±", row))}
    assert ends == {62}  # 2 + the 48-cell label column + the 12-cell figure
