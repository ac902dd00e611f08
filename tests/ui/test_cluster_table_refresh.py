"""A refresh of the cluster tables replaces only the cells that changed when the rows are the same nodes
(engines) in the same order, and rebuilds them otherwise, the cursor staying on its node; a theme change
redraws every cell in its colours."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from kvtop.domain.cluster import ClusterNode, ClusterTarget, TargetHealth
from kvtop.ui.widgets.cluster_table import ClusterTable


def nodes(age_b: float, order: tuple[str, ...] = ("a", "b", "c")) -> list[ClusterNode]:
    ages = {"a": 3.0, "b": age_b, "c": 4.0}
    return [ClusterNode(name=name, targets=(ClusterTarget(job="dcgm", instance=f"{name}:9400", health=TargetHealth.UP,
                                                          age_seconds=ages[name]),))
            for name in order]  # fmt: skip


class _Tables(App[None]):
    def compose(self) -> ComposeResult:
        yield ClusterTable(id="nodes")


def _texts(table: ClusterTable) -> list[list[str]]:
    return [[cell.plain if isinstance(cell, Text) else str(cell) for cell in table.get_row_at(row)]
            for row in range(table.row_count)]  # fmt: skip


async def test_only_changed_cells_are_replaced_and_a_new_order_rebuilds() -> None:
    app = _Tables()
    async with app.run_test(size=(160, 20)) as pilot:
        table = app.query_one(ClusterTable)
        table.show_nodes(nodes(5.0))
        await pilot.pause()
        table.move_cursor(row=1)
        first = table.get_row_at(0)
        table.show_nodes(nodes(7.0))  # only b's age moved
        await pilot.pause()
        assert [row[:2] for row in _texts(table)] == [["a", "● up 3 s"], ["b", "● up 7 s"], ["c", "● up 4 s"]]
        assert all(now is then for now, then in zip(table.get_row_at(0), first, strict=True))  # a's: not rebuilt
        assert table.selected_node == "b"
        table.show_nodes(nodes(7.0, order=("c", "b", "a")))  # another order: rebuilt, the cursor follows b
        await pilot.pause()
        assert [row[0] for row in _texts(table)] == ["c", "b", "a"]
        assert table.selected_node == "b" and table.cursor_row == 1
        assert app.theme == "textual-dark"
        before = table.get_row_at(0)[0]
        app.theme = "nord"  # another error, warning and success colour than textual-dark's
        await pilot.pause()
        assert table.get_row_at(0)[0] is not before  # the theme's change redrew every cell
        assert _texts(table)[0][0] == "c"
