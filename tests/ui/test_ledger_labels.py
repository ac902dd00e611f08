"""The rank ledger's row labels are shown whole where the terminal has room (session 44, task E2).

`kvtop --demo dsv3-tp16-sglang-node0`, Enter on GPU 0, read "weights · routed_expert",
"weights · shared_expert" and "weights · calibrated_be": the label column was cut at 23 characters.
The names are the weights book's components (kvtop/domain/weights.py COMPONENT_ORDER) and the
calibrated term's row (kvtop/domain/ledger.py CALIBRATED_WEIGHTS_ROW).
"""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.ui.screens.ledger import LABEL_WIDTH, RankLedgerScreen, label_width
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource

WHOLE = ("weights · routed_experts", "weights · shared_experts", "weights · calibrated_beyond_book")


async def _ledger_lines(make_app, width: int) -> list[str]:
    node = DemoSource.open("dsv3-tp16-sglang-node0").collect_at(0)
    app = make_app(FakeSource(node, label="demo:dsv3-tp16-sglang-node0"))
    async with app.run_test(size=(width, 50)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        await pilot.pause()
        return app.screen.query_one("#ledger-table").render().plain.splitlines()


async def test_a_wide_terminal_shows_every_weights_row_whole(make_app):
    lines = await _ledger_lines(make_app, 160)
    for label in WHOLE:
        row = next(line for line in lines if line.startswith(label))
        assert row[len(label)] == " ", row  # the whole name, then the figures
    header = lines[0]
    assert header.index("predicted") > len(WHOLE[-1])  # the columns moved right to make room


async def test_an_80_column_terminal_marks_a_cut_label_and_keeps_the_figures_on_one_line(make_app):
    lines = await _ledger_lines(make_app, 80)
    row = next(line for line in lines if line.startswith("weights · calibrated"))
    assert "…" in row.split("  ")[0]  # said to be cut, not silently clipped
    assert row.rstrip().endswith(row.split()[-1]) and len(row) <= 80 - 2


def test_the_label_column_never_narrows_below_its_least():
    assert label_width(["free"], 200) == LABEL_WIDTH
    assert label_width(["x" * 40], 60) == LABEL_WIDTH  # a narrow screen: cut, at the least width
    assert label_width(["x" * 30], None) == 30
