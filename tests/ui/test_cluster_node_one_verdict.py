"""A node read through Prometheus says one thing about its findings: the top line and the findings pane read the
same counts of its own `kvtop export` (`kvtop.domain.cluster_findings.ExportedCounts`).

Before (session 66, `kvtop --demo-cluster`, Enter on h100-f, scenario gpu5-lost): the top line read "○ no engine
rank here has a plan to check it against: nothing was diagnosed" over a pane listing "● critical 1 finding ·
counted by kvtop export on h100-f". The counts are the exporter's `kvtop_findings` series as the cluster table
shows them ('1 critical · 3 advice', pinned in test_cluster_simulated.py).
"""

from __future__ import annotations

import httpx

from kvtop.domain.cluster_findings import NO_EXPORTER
from kvtop.domain.incident import NO_ENGINE
from kvtop.sources.prometheus import PrometheusClient
from kvtop.sources.prometheus_node import PrometheusNodeSource
from kvtop.ui.screens.cluster import ClusterNodeScreen
from kvtop.ui.widgets.findings import FindingsPane
from kvtop.ui.widgets.node_header import NodeHeader
from tests.conftest import SAMPLES
from tests.sources.fake_prometheus import NOW, FakePrometheus, Target
from tests.sources.test_prometheus_node import answer
from tests.ui.conftest import wait_for
from tests.ui.fakes import FakeSource
from tests.ui.helpers import URL, Factory, FakeReader, make_cluster_app, make_demo_cluster_app, three_nodes


def _screen(app) -> tuple[list[str], str]:  # type: ignore[no-untyped-def]
    """(the node header's lines, the findings pane's text)."""
    head = app.screen.query_one(NodeHeader).header_content().plain.splitlines()
    pane = app.screen.query_one(FindingsPane)
    text = "\n".join(s.render().plain for s in pane.query(".finding, .findings-note") if s.display)
    return head, text


async def test_the_demo_node_h100_f_says_its_critical_finding_on_top_as_its_pane_lists_it() -> None:
    app, client = make_demo_cluster_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None, rounds=3000)
        await pilot.pause()
        assert app.cluster_screen.selected_node == "h100-f"  # worst first: its critical finding
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ClusterNodeScreen) and app.node.snapshot is not None,
                       rounds=3000)  # fmt: skip
        await pilot.pause()
        head, pane = _screen(app)
        answer = next((line for line in head if line.startswith("▶")), head)  # the header wraps whole parts
        assert answer == (
            "▶ kvtop export on h100-f counts 1 critical finding and 3 advice — "
            "run `kvtop diagnose` on the node for each cause and its fix"
        ), head
        assert pane.splitlines()[:2] == ["● critical 1 finding · node", "  counted by kvtop export on h100-f"]
        assert "● info 3 advice · node" in pane
        screen = "\n".join(head) + "\n" + pane
        assert "nothing was diagnosed" not in screen and NO_ENGINE not in screen
    client.close()


async def test_a_node_with_no_exporter_says_so_once_on_top_and_in_the_pane() -> None:
    """A DCGM-only L40S (tests/data/samples/dcgm_metrics): both the top line and the pane say NO_EXPORTER."""
    fake = FakePrometheus(
        [Target("dcgm", "10.0.0.4:9400", (SAMPLES / "dcgm_metrics" / "l40s-single-gpu-full.txt").read_text())]
    )
    client = PrometheusClient(URL, transport=httpx.MockTransport(lambda request: answer(fake, request)))
    l40s = PrometheusNodeSource(client, "gpu1-wl8sg", clock=lambda: NOW).collect()
    app = make_cluster_app(FakeReader(three_nodes()), Factory(FakeSource(l40s)))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None)
        await pilot.press("down", "enter")  # gpu-node-03: no kvtop series in the view
        await wait_for(pilot, lambda: app.node.snapshot is not None)
        await pilot.pause()
        head, pane = _screen(app)
        assert head[1] == f"○ {NO_EXPORTER}", head
        assert f"  {NO_EXPORTER}" in pane.splitlines() and NO_ENGINE not in pane
    client.close()
