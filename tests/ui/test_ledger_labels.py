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

# in words (kvtop/domain/ledger_words.py), never the book's keys 'routed_experts' or 'calibrated_beyond_book'
WHOLE = ("weights · routed experts", "weights · shared experts", "weights · held beyond the checkpoint (calibrated)")


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


async def test_no_row_shows_a_key_or_a_pool_the_engine_lacks(make_app):
    """The trial: 'weights · calibrated_beyond_book' and 'req_to_token' were shown as keys. SGLang's demo
    holds a request → token table; its rows say so in words, and no label carries an underscore."""
    lines = await _ledger_lines(make_app, 160)
    labels = [line.split("  ")[0] for line in lines[1:] if line.strip()]
    assert not [label for label in labels if "_" in label], labels
    assert any(label.startswith("request→token table") for label in labels)


async def test_an_80_column_terminal_marks_a_cut_label_and_keeps_the_figures_on_one_line(make_app):
    lines = await _ledger_lines(make_app, 80)
    row = next(line for line in lines if line.startswith("weights · held beyond"))
    assert "…" in row.split("  ")[0]  # said to be cut, not silently clipped
    assert row.rstrip().endswith(row.split()[-1]) and len(row) <= 80 - 2


def test_the_label_column_never_narrows_below_its_least():
    assert label_width(["free"], 200) == LABEL_WIDTH
    assert label_width(["x" * 40], 60) == LABEL_WIDTH  # a narrow screen: cut, at the least width
    assert label_width(["x" * 30], None) == 30



async def test_the_tokens_note_says_which_bytes_the_column_reads(make_app):
    """Session 54 (operator trial, `kvtop` demo, Enter): the note said "every row's bytes ÷ 40.00 KiB per token",
    while the KV pool row's ≈ tokens reads its observed bytes and a weights component's its predicted bytes (no
    figure observes it): the note names both, and stays on one line at 80 columns."""
    for width in (160, 80):
        lines = await _ledger_lines(make_app, width)
        # session 56: the KV pool row gives the engine's reported count, so the note says so on a line of its own
        pool = next(line for line in lines if line.startswith("≈ tokens, KV pool"))
        # a demo's figure is its scenario's (`CapacitySource.SIMULATED`)
        assert pool.startswith("≈ tokens, KV pool: the count the demo simulates") and len(pool) <= 78, pool
        note = next(line for line in lines if line.startswith("≈ tokens, other rows:"))
        assert note.startswith("≈ tokens, other rows: observed bytes, else predicted, ÷ "), note
        assert note.endswith(" per token") and len(note) <= 78, note
