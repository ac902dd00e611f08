"""The rank ledger's summary at 80 columns: a value too long for its line goes on under the value, never back at
column 1 under the label (session 67's walk: 'tokens' and 'fraction from' wrapped to column 1 at 80×24).

The figures are the co-tenant node's (tests/ui/fakes.py): SGLang's clean 1,255,785 tokens a rank, 128,660 of them
lost to the co-tenant's bytes on GPU 3; tests/ui/test_snapshots.py's test_rank_ledger[80x24] draws the same lines.
"""

from __future__ import annotations

from kvtop.ui.ledger_rows import rank_ledger
from kvtop.ui.screens.ledger import SUMMARY_LABEL_WIDTH, summary_lines
from tests.ui.fakes import llama_snapshot

#: what an 80-column screen leaves the summary: its scroll's padding (1 a side) and scrollbar (1) aside
WIDTH = 80 - 3
INDENT = " " * SUMMARY_LABEL_WIDTH


def test_at_80_columns_every_summary_line_goes_on_under_its_value() -> None:
    snapshot = llama_snapshot(co_tenant_gpu=3)
    view = rank_ledger(snapshot, 3)
    assert view is not None
    lines = summary_lines(view, snapshot, WIDTH).plain.splitlines()
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[2:4] == [
        "tokens         clean 1,255,785 → other processes −128,660 (GPU 3, pid 9001) →",
        f"{INDENT}1,127,125 live",
    ]
    assert lines[1] == f"{INDENT}1,127,125 · KV in use 42%"  # 'token capacity … engine reports' goes on
    fraction = next(i for i, line in enumerate(lines) if line.startswith("fraction from  "))
    assert lines[fraction + 1] == f"{INDENT}GPUs of TP × PP (8 × 1; 1,024 MiB per 8 GPUs)) ÷ 81559 MiB"
    # no width given (a test, a text dump): one line a summary, as before
    assert summary_lines(view, snapshot).plain.splitlines()[1].endswith("(GPU 3, pid 9001) → 1,127,125 live")
