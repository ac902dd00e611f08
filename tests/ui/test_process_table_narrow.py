"""The process table at 80×24 (session 62's operator pass): its header read 'comman' over 'sglan…' cells and the
footer was cut at 'I' (Interrupt, and Quit / Help, past the edge).

Now the columns that matter least (age, then user) give way below a 16-cell command, the detail line says the
selected row's hidden cells, the footer is compact there and T / K / I are one 'Signal' group: every key of the
table and Quit / Help are whole inside 80 columns. The busy node's TP0 worker runs 'sglang::scheduler_TP0'
(tests/ui/fakes.py), 21 characters.
"""

from __future__ import annotations

from textual.widgets import DataTable
from textual.widgets._footer import FooterKey, FooterLabel

from tests.ui.conftest import wait_for_value
from tests.ui.helpers import FakeSignalSender, open_node_table, text
from tests.ui.test_process_table import busy_node


async def test_at_80_columns_the_command_is_readable_and_the_footer_keys_whole(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app(busy_node(), signal_sender=FakeSignalSender())
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_node_table(pilot)
        await pilot.pause()
        table = panel.query_one(DataTable)
        headers = [str(column.label) for column in table.columns.values()]
        assert headers == ["GPU", "pid", "role", "engine / rank", "GiB", "command"]
        command = next(column for column in table.columns.values() if str(column.label) == "command")
        assert command.width >= len("sglang::scheduler_TP0")
        assert table.get_row_at(0)[-1].plain == "sglang::scheduler_TP0"  # whole, was 'sglan…'
        assert text(panel, "#processes-detail") == "user ? · age ? · command sglang::scheduler_TP0"
        names = ("Back", "Sort", "Filter", "GPU scope", "Tag", "Quit", "Help")

        def drawn() -> dict[str, FooterKey]:  # laid out: a key not drawn yet has an empty region, inside any bound
            return {key.description or key.key: key for key in panel.query(FooterKey) if key.region.width > 0}

        def signal_labels() -> list[FooterLabel]:
            return [label for label in panel.query(FooterLabel) if str(label.render()) == "Signal" and label.region.width]

        # Textual recomposes the footer after the panel's bindings change: wait for every key and the group label drawn
        await wait_for_value(pilot, lambda: (sorted(set(names) - set(drawn())), len(signal_labels())), ([], 1))
        keys = drawn()
        for name in names:
            assert keys[name].region.right <= 80, (name, keys[name].region)
        (signal,) = signal_labels()
        assert signal.region.right <= 80


async def test_at_120_columns_every_column_is_drawn(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app(busy_node(), signal_sender=FakeSignalSender())
    async with app.run_test(size=(120, 40)) as pilot:
        panel = await open_node_table(pilot)
        await pilot.pause()
        headers = [str(column.label) for column in panel.query_one(DataTable).columns.values()]
        assert headers == ["GPU", "pid", "user", "role", "engine / rank", "GiB", "age", "command"]
        assert text(panel, "#processes-detail") == "command sglang::scheduler_TP0"
