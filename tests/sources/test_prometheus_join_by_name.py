"""An engine scraped by its node's host name joins the node DCGM names, when DCGM is scraped by address.

A common scrape config lists the DCGM exporter by IP (`10.0.0.7:9400`) and the engine by name
(`gpu1-wl8sg:30000`); the node's name is DCGM's `Hostname` label. Before, no exporter's instance had the host
`gpu1-wl8sg`, so the engine became a node of its own named `gpu1-wl8sg:30000` with no GPUs, beside the node
`gpu1-wl8sg` with its GPU and no engine. The pages are recorded (tests/data/samples, SOURCES.md): the
L40S page's `Hostname="gpu1-wl8sg"`, SGLang's docs page's `sglang:token_usage` 0.28.
"""

from __future__ import annotations

import pytest

from kvtop.sources.prometheus import ClusterReader, PrometheusClient
from tests.conftest import SAMPLES
from tests.sources.fake_prometheus import NOW, FakePrometheus, Target

L40S = (SAMPLES / "dcgm_metrics" / "l40s-single-gpu-full.txt").read_text()
SGLANG = (SAMPLES / "sglang_metrics" / "sglang-docs-llama3.1-8b-2024.txt").read_text()


def read(*targets: Target):
    client = PrometheusClient("http://prometheus.test:9090", transport=FakePrometheus(targets).transport())
    return ClusterReader(client, clock=lambda: NOW).read()


def test_an_engine_scraped_by_name_joins_the_node_dcgm_scraped_by_address() -> None:
    assert 'Hostname="gpu1-wl8sg"' in L40S and "sglang:token_usage" in SGLANG
    view = read(Target("dcgm", "10.0.0.7:9400", L40S), Target("sglang", "gpu1-wl8sg:30000", SGLANG))
    assert [node.name for node in view.nodes] == ["gpu1-wl8sg"]
    (node,) = view.nodes
    assert [engine.instance for engine in node.engines] == ["gpu1-wl8sg:30000"]
    assert node.engines[0].kv_usage_fraction == pytest.approx(0.28)


def test_an_engine_on_a_host_no_node_is_named_stays_its_own() -> None:
    view = read(Target("dcgm", "10.0.0.7:9400", L40S), Target("sglang", "gpu2-other:30000", SGLANG))
    assert sorted(node.name for node in view.nodes) == ["gpu1-wl8sg", "gpu2-other:30000"]
