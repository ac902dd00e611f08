"""'Beside the model' rows wrap a long label within its 54-character column, as the budget's rows do
(`render_ledger.column_rows`): SGLang's DeepSeek-V3 EAGLE draft row 'draft's own embedding and LM head (freed after the
pool)' (56 characters) and vLLM's host tier 'OffloadingConnector: 1,456,320 tokens per rank (9.1× the GPU pool)' pushed
their figures two and twelve characters out of the figure column (session 65's operator walk). Each figure's column ends
at 2 + 16 + 54 + 30 = 102 characters."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.commands.render_deployment import term_rows

FIGURE_END = 2 + 16 + 54 + 30


def test_a_long_label_wraps_and_its_figure_stays_in_its_column() -> None:
    label = "draft's own embedding and LM head (freed after the pool)"
    rows = term_rows("speculative", label, f"{'0.46 GB (0.43 GiB)':>30}  before the pool")
    assert rows == [
        "  speculative     draft's own embedding and LM head (freed after the",
        f"{'':<18}  pool){'':<47}{'0.46 GB (0.43 GiB)':>30}  before the pool",
    ]
    assert rows[-1].index("0.46 GB") + len("0.46 GB (0.43 GiB)") == FIGURE_END


def test_a_short_label_is_one_row_as_before() -> None:
    assert term_rows("LoRA", "LoRA slots: 1 × rank 64", f"{'not modelled':>30}") == [
        f"  {'LoRA':<16}{'LoRA slots: 1 × rank 64':<54}{'not modelled':>30}"
    ]


def test_the_host_tiers_figures_stay_in_their_column(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--model", "gpt-oss-120b", "--engine", "vllm", "--kv-offloading-size", "100", "--no-calibration-store"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    # 100 GiB = 107.37 GB per rank, on one rank
    tier = [line for line in lines if "107.37 GB (100.00 GiB)" in line and line.startswith("  ")][:2]
    assert len(tier) == 2
    assert all(line.index("107.37 GB") + len("107.37 GB (100.00 GiB)") == FIGURE_END for line in tier)
