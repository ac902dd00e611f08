"""Pilot tests of ClusterApp: the node list worst-first, drilling into a node, failures as markers.

The list tests use a hand-built ClusterView of three nodes (one down, one stale) with figures
of tests/ui/fakes.py's Llama-3-70B TP8 node; the drill-down renders a snapshot that
PrometheusNodeSource rebuilt from the fake Prometheus API (no predicted ledger).
"""

from __future__ import annotations

import argparse

import httpx
import pytest

from kvtop.commands.tui_cluster import run_cluster_tui
from kvtop.domain.errors import InputError
from kvtop.domain.wording import GIB
from kvtop.sources.prometheus import PrometheusClient, PrometheusError, PrometheusState
from kvtop.sources.prometheus_node import NodeSeriesMissing, PrometheusNodeSource
from kvtop.ui.cluster_app import ClusterApp
from kvtop.ui.screens.cluster import ClusterNodeScreen, ClusterScreen
from kvtop.ui.widgets.findings import FindingsPane
from kvtop.ui.widgets.gpu_list import GpuList
from kvtop.ui.widgets.node_header import NodeHeader
from tests.conftest import SAMPLES
from tests.sources.fake_prometheus import NOW, FakePrometheus, Target
from tests.sources.test_prometheus import kvtop_page
from tests.sources.test_prometheus_node import answer
from tests.ui.conftest import wait_for
from tests.ui.fakes import H100_TOTAL_BYTES, FakeSource, llama_snapshot
from tests.ui.helpers import URL, Factory, FakeReader, header, make_cluster_app, rows, three_nodes


def findings_text(app: ClusterApp) -> str:
    pane = app.screen.query_one(FindingsPane)
    return "\n".join(s.render().plain for s in pane.query(".finding, .findings-note") if s.display)


async def test_nodes_are_listed_worst_first_with_ages_and_figures():
    app = make_cluster_app(FakeReader(three_nodes()))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None)
        await pilot.pause()
        shown = rows(app)
        assert list(shown) == ["gpu-node-02", "gpu-node-03", "gpu-node-01"]
        # in COLUMNS order: health, tokens per rank now / clean, findings, engine, unexplained, GPUs, used / total
        assert shown["gpu-node-02"][1:] == ["▼ down 4 s", "—", "—", "—", "—", "—", "—"]
        assert shown["gpu-node-03"][1:] == ["▲ stale 300 s", "—", "—", "—", "—", "1", "0.0 / 45.0 GiB"]
        used = sum(g.used_bytes or 0 for g in llama_snapshot(co_tenant_gpu=3).observation.gpus)
        assert shown["gpu-node-01"][1:] == [
            "● up 5 s", "1,127,125 / 1,255,785 (−10.2%)", "1 warning · 2 advice", "sglang:4242", "+2.00 GiB", "8",
            f"{used / GIB:,.1f} / {8 * H100_TOTAL_BYTES / GIB:,.1f} GiB",
        ]  # fmt: skip
        assert f"kvtop cluster │ {URL} │ 3 nodes · 2 not up │ ● live · every 3600 s" in header(app)
        notes = app.cluster_screen.query_one("#cluster-notes").render().plain
        assert notes.startswith("gpu-node-02: target 10.0.0.2:9401 (kvtop) down, last sample 4 s ago")


async def test_enter_drills_into_a_node_and_escape_returns_to_the_list():
    factory = Factory(FakeSource(llama_snapshot(co_tenant_gpu=3)))
    app = make_cluster_app(FakeReader(three_nodes()), factory)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None)
        await pilot.press("down", "down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ClusterNodeScreen))
        await wait_for(pilot, lambda: app.node.snapshot is not None)
        await pilot.pause()
        assert factory.opened == ["gpu-node-01"]
        assert app.screen.query_one(GpuList).shown_gpus == tuple(range(8))
        assert "probe" not in [b.binding.action for b in app.screen.active_bindings.values()]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ClusterScreen))
        assert app.cluster_screen.selected_node == "gpu-node-01"
        await wait_for(pilot, lambda: not [w for w in app.workers if w.group == "node" and w.is_running])


async def test_the_planner_key_says_why_the_cluster_view_has_no_planner():
    """`p` opens the planner on a node's own kvtop; in the cluster view (list or drill-down) it answers instead of
    doing nothing."""
    factory = Factory(FakeSource(llama_snapshot(co_tenant_gpu=3)))
    app = make_cluster_app(FakeReader(three_nodes()), factory)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None)
        await pilot.press("p")
        await pilot.pause()
        assert [n.message for n in app._notifications] == [
            "no planner here (the cluster view only reads): run kvtop on a node to plan"
        ]
        await pilot.press("down", "down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ClusterNodeScreen))
        await pilot.press("p")
        await pilot.pause()
        assert [n.message for n in app._notifications][-1] == (
            "no planner here (the cluster view only reads): run kvtop on gpu-node-01 to plan"
        )


async def test_a_snapshot_read_through_prometheus_renders_without_predictions():
    fake = FakePrometheus([Target("kvtop", "10.0.0.1:9401", kvtop_page("gpu-node-01", co_tenant_gpu=3))])
    client = PrometheusClient(URL, transport=httpx.MockTransport(lambda request: answer(fake, request)))
    factory = Factory(PrometheusNodeSource(client, "gpu-node-01", clock=lambda: NOW))
    app = make_cluster_app(FakeReader(three_nodes()), factory)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None)
        await pilot.press("down", "down", "enter")
        await wait_for(pilot, lambda: app.node.snapshot is not None)
        await pilot.pause()
        assert factory.opened == ["gpu-node-01"]
        head = " ".join(app.screen.query_one(NodeHeader).render().plain.split())
        assert f"prometheus:{URL} node gpu-node-01" in head
        # the exporter's prediction, said as the exporter's: never "no prediction: … (kvtop export predicts …)"
        assert "tokens 1,127,125 predicted by kvtop export (its ledger stays on the node) / 1,127,125 live" in head
        assert "no prediction" not in head
        assert "read through Prometheus: its ledger stays on the node; no processes" in head  # one wording (LEDGER_ON_NODE)
        row3 = app.screen.query_one(GpuList).row_text(3)  # the predicted bar needs the ledger, which stays on the node
        assert "sglang TP3" in row3 and "pred its ledger stays on the node" in row3 and "H100 80GB" in row3
        assert findings_text(app).splitlines()[:3] == [
            "● warning 1 finding · node",  # a count over the node: never "GPU node"
            "  counted by kvtop export on gpu-node-01",
            "  fix: run `kvtop diagnose` on the node for each cause and its fix",
        ]
        assert "● info 2 advice · node" in findings_text(app)
        await pilot.press("enter")  # no rank ledger through Prometheus: a notice, the dashboard stays
        await pilot.pause()
        assert isinstance(app.screen, ClusterNodeScreen)
        # the header, the row and the notice say the ledger's absence in one wording (session 67 found three)
        assert [n.message for n in app._notifications][-1] == (
            "no rank ledger here: its ledger stays on the node (Prometheus carries its figures only); "
            "run kvtop on the node to see it"
        )
        client.close()


async def test_a_failing_reader_shows_a_marker_and_the_app_stays_alive():
    reader = FakeReader(three_nodes())
    app = make_cluster_app(reader)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None)
        reader.push(PrometheusError(PrometheusState.TIMEOUT, f"{URL} did not answer within 5 s"))
        await pilot.press("r")
        await wait_for(pilot, lambda: app.cluster.failure is not None)
        await pilot.pause()
        # one line: Prometheus's error names Prometheus and its state once (never 'prometheus failing: prometheus …')
        said = header(app)
        assert f"▲ STALE · prometheus timeout: {URL} did not answer within 5 s · showing data" in said
        assert "prometheus failing" not in said
        assert app.cluster.failure is not None and app.cluster.failure.state is PrometheusState.TIMEOUT  # typed
        assert list(rows(app)) == ["gpu-node-02", "gpu-node-03", "gpu-node-01"]  # the last good view stays
        await pilot.press("enter")  # still answering keys
        await wait_for(pilot, lambda: isinstance(app.screen, ClusterNodeScreen))


async def test_a_reader_failing_from_the_start_says_why_in_place_of_the_list():
    app = make_cluster_app(FakeReader(RuntimeError("certificate verify failed")))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.cluster.failure is not None)
        await pilot.pause()
        empty = app.cluster_screen.query_one("#cluster-empty").render().plain
        assert empty == "prometheus failing: RuntimeError: certificate verify failed"
        assert app.cluster.failure is not None and app.cluster.failure.state is None  # no Prometheus state: any error
        assert "nothing shown yet" in header(app)


async def test_a_node_prometheus_lost_shows_its_failure_and_escape_still_returns():
    missing = NodeSeriesMissing(
        f"prometheus {URL} holds no kvtop or DCGM GPU series for node 'gpu-node-02' now"
    )
    app = make_cluster_app(FakeReader(three_nodes()), Factory(FakeSource(missing)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.node.failure is not None)
        await pilot.pause()
        assert "source failing: prometheus" in app.screen.query_one("#empty").render().plain
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ClusterScreen))


async def test_a_dcgm_node_is_marked_not_diagnosed_and_escape_clears_the_filter_first():
    fake = FakePrometheus(
        [Target("dcgm", "10.0.0.4:9400", (SAMPLES / "dcgm_metrics" / "l40s-single-gpu-full.txt").read_text())]
    )
    client = PrometheusClient(URL, transport=httpx.MockTransport(lambda request: answer(fake, request)))
    l40s = PrometheusNodeSource(client, "gpu1-wl8sg", clock=lambda: NOW).collect()
    app = make_cluster_app(FakeReader(three_nodes()), Factory(FakeSource(l40s)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None)
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.node.snapshot is not None)
        await pilot.pause()
        assert app.screen.query_one(GpuList).shown_gpus == (0,)
        assert "no kvtop exporter on this node: nothing was diagnosed" in findings_text(
            app
        )  # never "no findings"
        await pilot.press("slash", "x", "escape")
        await pilot.pause()
        assert isinstance(app.screen, ClusterNodeScreen)
        assert app.screen.query_one(GpuList).shown_gpus == (0,)  # the filter cleared
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ClusterScreen))
        assert app.cluster_screen.selected_node == "gpu-node-03"
    client.close()


def test_run_cluster_tui_reads_the_token_from_the_environment_and_shows_the_url_without_credentials(
    monkeypatch: pytest.MonkeyPatch,
):
    started: list[ClusterApp] = []
    monkeypatch.setattr(ClusterApp, "run", lambda self: started.append(self))
    monkeypatch.setattr("kvtop.ui.heap.settle_heap", lambda: None)  # no gc.freeze inside the test run
    monkeypatch.setenv("KVTOP_PROMETHEUS_TOKEN", "s3cret-token")
    args = argparse.Namespace(prometheus="https://admin:pw@prom.example:9443", interval=2.0, theme=None)
    assert run_cluster_tui(args) == 0
    (app,) = started
    assert app.cluster.source_label == "https://prom.example:9443"
    reader = app._reader  # the ClusterReader run_cluster_tui built
    assert reader.client._http.headers["authorization"] == "Bearer s3cret-token"
    assert "s3cret" not in app.cluster.source_label


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"prometheus": "http://prom:9090", "interval": 0.0}, "--interval: must be at least 0.1 s"),
        ({"prometheus": "prom:9090", "interval": 1.0}, "--prometheus: expected an http:// or https:// URL"),
    ],
)
def test_run_cluster_tui_refuses_bad_options_before_anything_starts(options: dict[str, object], message: str):
    with pytest.raises(InputError) as caught:
        run_cluster_tui(argparse.Namespace(theme=None, **options))
    assert str(caught.value).startswith(message)
