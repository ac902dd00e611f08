"""The cluster view of an engine seen only through its own /metrics (stop 37), on the default demo cluster
(`kvtop cluster --demo-cluster`: twelve nodes, among them a vLLM DP4 engine's two metrics pages, 10.0.5.10:8000
and 10.0.5.11:8000, that state 500,000 tokens a rank in `cache_config_info`, no kvtop exporter).

At 160 columns its tokens cell was cut ("500,000 engine metri"); Enter on it opened a node view with no GPU
series, a source failing. Now the cell fits and Enter says in one line why there is no node view."""

from __future__ import annotations

from kvtop.ui.cluster_app import ClusterApp
from kvtop.ui.screens.cluster import ClusterScreen
from kvtop.ui.widgets.cluster_table import ClusterTable
from kvtop.ui.widgets.engine_table import ENGINE_COLUMNS, EngineTable, engine_cells
from tests.ui.conftest import wait_for
from tests.ui.helpers import make_demo_cluster_app


def _metrics_only(app: ClusterApp) -> str:
    assert app.cluster.view is not None
    (engine,) = [e for e in app.cluster.view.engines if e.engine_metrics_only]
    return engine.name


async def test_a_metrics_only_engines_tokens_fit_and_enter_says_why_there_is_no_node_view() -> None:
    app, client = make_demo_cluster_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None, rounds=3000)
        await pilot.pause()
        table = app.cluster_screen.query_one(EngineTable)
        name = _metrics_only(app)
        engine = table.engine_named(name)
        assert engine is not None
        tokens = engine_cells(engine)[ENGINE_COLUMNS.index("tokens per rank")].text
        assert tokens == "500,000 metrics"  # engine core 3 on vllm-dp4-api1.prom: kv_cache_size_tokens 500,000
        # every column up to and including the tokens is inside the 160 columns the table is drawn in
        widths = [column.get_render_width(table) for column in table.ordered_columns]
        through_tokens = sum(widths[: ENGINE_COLUMNS.index("tokens per rank") + 1])
        assert through_tokens <= table.scrollable_content_region.width, (widths, table.scrollable_content_region)
        await pilot.press("e")
        table.move_cursor(row=table.get_row_index(name))
        await pilot.pause()
        notes = app.cluster_screen.query_one("#cluster-notes").render().plain
        assert "no node view for" in notes and "carry no GPU map" in notes and "Enter: the dashboard" not in notes
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ClusterScreen)  # no node opened, no source failing
        shown = [str(n.message) for n in app._notifications]
        assert any(m.startswith(f"no node view for {name}: ") and "no GPU map" in m for m in shown), shown
    client.close()


async def test_enter_on_a_node_seen_only_through_engine_metrics_says_why_there_is_no_node_view() -> None:
    app, client = make_demo_cluster_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None, rounds=3000)
        await pilot.pause()
        nodes = app.cluster_screen.query_one(ClusterTable)
        nodes.move_cursor(row=nodes.get_row_index("10.0.5.10:8000"))
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ClusterScreen)
        shown = [str(n.message) for n in app._notifications]
        assert any(m.startswith("no node view for 10.0.5.10:8000: ") for m in shown), shown
    client.close()
