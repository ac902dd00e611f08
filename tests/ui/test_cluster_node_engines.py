"""The node screen and the cluster's engine table agree on which engines run on a node (one answer: the join).

A GPU-only node (DCGM scraped by address, `10.0.0.7:9400`, its `Hostname="gpu1-wl8sg"`) with an engine scraped
by that host name: the cluster's engine table placed SGLang on gpu1-wl8sg while Enter on the node said "no
SGLang, vLLM, LMDeploy, TensorRT-LLM or llama.cpp engine found on this node" (the node view read DCGM and kvtop's
exporter only). Now the node screen shows the engine the join places there with its own figures, and says
what it lacks. Pages recorded (tests/data/samples, SOURCES.md): the L40S DCGM page; SGLang's docs page,
`sglang:token_usage{model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.28`; a vLLM NIM page,
`cache_config_info{kv_cache_size_tokens="551520"}` and `kv_cache_usage_perc{model_name="qwen3-vl-235b-awq"} 0.0`.
"""

from __future__ import annotations

import threading
from pathlib import Path

import kvtop.ui
from kvtop.domain.cluster_findings import NO_EXPORTER
from kvtop.domain.cluster_node_engines import NOT_MODELLED
from kvtop.sources.hub import load_model
from kvtop.sources.prometheus import ClusterReader, PrometheusClient
from kvtop.sources.prometheus_node import PrometheusNodeSource
from kvtop.ui.cluster_app import ClusterApp, ClusterArrived
from kvtop.ui.screens.cluster import ClusterNodeScreen
from kvtop.ui.widgets.engine_table import EngineTable
from kvtop.ui.widgets.node_header import NodeHeader
from tests.conftest import SAMPLES
from tests.sources.fake_prometheus import NOW, FakePrometheus, Target
from tests.ui.conftest import QUIET_INTERVAL_S, wait_for

URL = "http://prometheus.test:9090"
L40S = (SAMPLES / "dcgm_metrics" / "l40s-single-gpu-full.txt").read_text()
SGLANG = (SAMPLES / "sglang_metrics" / "sglang-docs-llama3.1-8b-2024.txt").read_text()
VLLM = (SAMPLES / "vllm_metrics" / "v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt").read_text()


def make_app(*targets: Target) -> tuple[ClusterApp, PrometheusClient]:
    client = PrometheusClient(URL, transport=FakePrometheus(targets).transport())
    app = ClusterApp(ClusterReader(client, clock=lambda: NOW),
                     lambda name: PrometheusNodeSource(client, name, clock=lambda: NOW), load_model,
                     theme="dark", interval_s=QUIET_INTERVAL_S, label=URL)  # fmt: skip
    return app, client


async def open_node(app: ClusterApp, pilot) -> str:  # type: ignore[no-untyped-def]
    await wait_for(pilot, lambda: app.cluster.view is not None, rounds=3000)
    await pilot.pause()
    await pilot.press("enter")  # the only node, gpu1-wl8sg
    await wait_for(pilot, lambda: app.node.snapshot is not None, rounds=3000)
    await pilot.pause()
    assert isinstance(app.screen, ClusterNodeScreen)
    return app.screen.query_one(NodeHeader).header_content().plain


async def test_the_node_screen_shows_the_sglang_engine_the_engine_table_places_on_the_dcgm_node() -> None:
    app, client = make_app(
        Target("dcgm", "10.0.0.7:9400", L40S), Target("sglang", "gpu1-wl8sg:30000", SGLANG)
    )
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None, rounds=3000)
        await pilot.pause()
        assert app.cluster.view is not None
        (joined,) = app.cluster.view.engines
        assert joined.nodes == ("gpu1-wl8sg",) and joined.engine_metrics_only
        assert app.cluster_screen.query_one(EngineTable).row_count == 1
        header = await open_node(app, pilot)
        assert app.node.snapshot is not None
        (view,) = app.node.snapshot.engines
        assert (view.engine.kind, view.engine.model) == ("sglang", "meta-llama/Llama-3.1-8B-Instruct")
        assert view.engine.live.kv_usage_fraction == 0.28  # sglang:token_usage 0.28 on the page
        assert view.engine.live.token_capacity is None  # the docs page states no max_total_num_tokens
        assert view.ledger is None and view.ledger_error == NOT_MODELLED
        assert "engine found on this node" not in header
        assert "sglang@gpu1-wl8sg:30000 · Llama-3.1-8B-Instruct" in header and "KV 28% used" in header
        assert "1 engine from its own metrics" in header
        assert (
            NO_EXPORTER in header
        )  # no exporter, no plan to check it against: never "every rank holds what its plan predicts"
        assert [g.index for g in app.node.snapshot.observation.gpus] == [0]  # the L40S, from DCGM
    client.close()


async def test_a_vllm_engine_on_the_dcgm_node_shows_the_tokens_its_own_metrics_state() -> None:
    app, client = make_app(Target("dcgm", "10.0.0.7:9400", L40S), Target("vllm", "gpu1-wl8sg:8000", VLLM))
    async with app.run_test(size=(200, 40)) as pilot:
        header = await open_node(app, pilot)
        assert app.node.snapshot is not None
        (view,) = app.node.snapshot.engines
        assert (view.engine.kind, view.engine.model) == ("vllm", "qwen3-vl-235b-awq")
        assert view.engine.live.token_capacity == 551_520  # cache_config_info kv_cache_size_tokens="551520"
        assert "551,520 live" in header and "KV 0% used" in header
    client.close()


class _ThreadGuardedApp(ClusterApp):
    """A ClusterApp whose reactive cluster state may be read on the app's own thread only (docs/design.md: threads
    post messages; the app hands a worker what it needs)."""

    CSS_PATH = str(Path(kvtop.ui.__file__).parent / ClusterApp.CSS_PATH)  # a subclass's path is read beside its file

    def __getattribute__(self, name: str) -> object:
        if name == "cluster" and threading.current_thread() is not threading.main_thread():
            raise AssertionError(f"a worker thread ({threading.current_thread().name}) read the app's cluster state")
        return super().__getattribute__(name)


async def test_the_node_worker_gets_the_cluster_view_handed_in_and_the_newest_one_after() -> None:
    client = PrometheusClient(URL, transport=FakePrometheus(
        (Target("dcgm", "10.0.0.7:9400", L40S), Target("sglang", "gpu1-wl8sg:30000", SGLANG))
    ).transport())  # fmt: skip
    app = _ThreadGuardedApp(ClusterReader(client, clock=lambda: NOW),
                            lambda name: PrometheusNodeSource(client, name, clock=lambda: NOW), load_model,
                            theme="dark", interval_s=QUIET_INTERVAL_S, label=URL)  # fmt: skip
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None, rounds=3000)
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.node.snapshot is not None or app.node.failure is not None, rounds=3000)
        assert app.node.failure is None
        assert app.node.snapshot is not None  # the join's SGLang engine, from the view handed in at the start
        assert [v.engine.kind for v in app.node.snapshot.engines] == ["sglang"]
        # each cluster view the app receives is handed on to the open node's worker
        view = app.cluster.view
        assert view is not None and app._node_view.get() is view
        app.post_message(ClusterArrived(view.model_copy()))
        await wait_for(pilot, lambda: app.cluster.view is not view, rounds=3000)
        assert app._node_view.get() is app.cluster.view
    client.close()
