"""A refresh of the cluster tables replaces only the cells that changed when the rows are the same nodes
(engines) in the same order, and rebuilds them otherwise, the cursor staying on its node; a theme change
redraws every cell in its colours. Engines: SGLang's own metrics in a recorded page's label set
(tests/sources/test_cluster_metrics_join.py)."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from kvtop.domain.cluster import ClusterNode, ClusterTarget, ClusterView, TargetHealth
from kvtop.ui.widgets.cluster_table import ClusterTable
from kvtop.ui.widgets.engine_table import ENGINE_COLUMNS, EngineTable
from tests.sources.fake_prometheus import FakePrometheus, Target
from tests.sources.test_cluster_metrics_join import R1_TOKENS, sglang_page, vllm_page
from tests.sources.test_prometheus import read


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


class _Engines(App[None]):
    def compose(self) -> ComposeResult:
        yield EngineTable(id="engines")


def _engines(tokens: str) -> ClusterView:
    """Two SGLang engines seen through their own metrics; the first's page states `tokens` per rank."""
    first = sglang_page(range(0, 8)).replace(f"}} {R1_TOKENS}.0", f"}} {tokens}")
    return read(FakePrometheus([
        Target("sglang", "10.0.0.1:30000", first), Target("sglang", "10.0.0.2:30000", sglang_page(range(8, 16))),
        Target("vllm", "10.0.1.1:8000", vllm_page(range(0, 2))),
    ]))  # fmt: skip


async def test_engine_rows_replace_only_their_changed_cells() -> None:
    app = _Engines()
    async with app.run_test(size=(200, 20)) as pilot:
        table = app.query_one(EngineTable)
        before = _engines(f"{R1_TOKENS}.0")
        table.show_engines(before.engines, before.disaggregated)
        await pilot.pause()
        rows = [table.get_row_at(row) for row in range(table.row_count)]
        after = _engines("300000.0")  # the first node's ranks now state fewer tokens: the engine's least
        table.show_engines(after.engines, after.disaggregated)
        await pilot.pause()
        now = [table.get_row_at(row) for row in range(table.row_count)]
        changed = [(row, column) for row in range(len(rows)) for column in range(len(rows[row]))
                   if now[row][column] is not rows[row][column]]  # fmt: skip
        sglang_row = [e.span.kind for e in after.engines].index("sglang")
        # only the SGLang engine's tightest rank (its first node now holds fewer than the second, issue 31)
        # and tokens cells were replaced
        tight, tokens = ENGINE_COLUMNS.index("tightest rank"), ENGINE_COLUMNS.index("tokens per rank")
        assert changed == sorted([(sglang_row, tight), (sglang_row, tokens)])
        assert (rows[sglang_row][tight].plain, now[sglang_row][tight].plain) == ("—", "10.0.0.1:30000")
        assert now[sglang_row][tokens].plain == "300,000 metrics"
