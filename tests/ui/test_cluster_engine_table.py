"""Pilot tests of the cluster view's engine table on a two-node demo cluster (DeepSeek-V3 at TP16 over two
8x H20 nodes under SGLang, a co-tenant on node 1's GPU 3), read through the synthetic Prometheus: one row
for the engine, its tightest rank named with its node, Enter opens that node's dashboard, Esc comes back."""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.commands.demo_cluster import DEMO_PROMETHEUS_URL, DemoCluster, DemoClusterReader, load_cluster
from kvtop.sources.hub import load_model
from kvtop.sources.prometheus import ClusterReader, PrometheusClient
from kvtop.sources.prometheus_node import PrometheusNodeSource
from kvtop.ui.cluster_app import ClusterApp
from kvtop.ui.screens.cluster import ClusterNodeScreen, ClusterScreen
from kvtop.ui.widgets.engine_table import ENGINE_COLUMNS, EngineTable, engine_cells
from kvtop.ui.widgets.gpu_list import GpuList
from tests.ui.conftest import QUIET_INTERVAL_S, wait_for

NODES = [
    {"name": "h20-a", "scenario": "dsv3-tp16-sglang-node0", "instance": "10.0.1.10:9401"},
    {"name": "h20-b", "scenario": "dsv3-tp16-sglang-node1", "instance": "10.0.1.11:9401"},
]


def make_app(tmp_path: Path) -> tuple[ClusterApp, PrometheusClient]:
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"nodes": NODES}))
    cluster = DemoCluster(load_cluster(str(path)), clock=lambda: 1_750_000_000.0)
    client = PrometheusClient(DEMO_PROMETHEUS_URL, transport=cluster.transport())
    reader = DemoClusterReader(cluster, ClusterReader(client, clock=lambda: 1_750_000_000.0))
    app = ClusterApp(reader, lambda name: PrometheusNodeSource(client, name), load_model, theme="dark",
                     interval_s=QUIET_INTERVAL_S, label=DEMO_PROMETHEUS_URL)  # fmt: skip
    return app, client


async def test_one_row_per_engine_and_enter_opens_the_node_of_its_tightest_rank(tmp_path: Path) -> None:
    app, client = make_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None, rounds=3000)
        await pilot.pause()
        table = app.cluster_screen.query_one(EngineTable)
        assert table.row_count == 1
        (engine,) = app.cluster.view.engines
        cells = dict(zip(ENGINE_COLUMNS, (cell.text for cell in engine_cells(engine)), strict=True))
        assert (cells["engine"], cells["layout"], cells["where"], cells["tightest rank"]) == (
            "SGLang DeepSeek-V3 @10.0.1.10:5000", "TP16", "h20-a TP0–TP7 (API) · h20-b TP8–TP15", "h20-b GPU 3")  # fmt: skip
        cause = cells["largest cause"]
        assert cause.startswith("other processes −") and cause.endswith("(h20-b GPU 3)")
        await pilot.press("e")
        notes = app.cluster_screen.query_one("#cluster-notes").render().plain
        assert "Enter: the dashboard of h20-b (its tightest rank's node)" in notes
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ClusterNodeScreen) and app.node.snapshot is not None,
                       rounds=3000)  # fmt: skip
        assert "node h20-b" in app.node.snapshot.source
        assert app.screen.query_one(GpuList).shown_gpus == tuple(range(8))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ClusterScreen))
        assert app.cluster_screen.query_one(EngineTable).has_focus
    client.close()
