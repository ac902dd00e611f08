"""A real Prometheus holding multi-node series: four `kvtop export --demo` processes — the two nodes of a
DeepSeek-V3 TP16 SGLang engine and a Dynamo-style prefill/decode pair — scraped by Prometheus, then read
by `ClusterReader`. The engine is one engine with its tightest rank on the node of the co-tenant, the pair
is grouped with its transfer path; and every answer the real server gives kvtop's queries matches what
kvtop's synthetic server (the demo cluster's and the tests' stand-in) computes from the same pages.

Needs the `prometheus` binary (Debian: `apt-get install -y prometheus`); skipped without it.
Every process started here is killed in a `finally`; each wait is bounded (≤ 30 s, 60 s for the scrape).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from kvtop.domain.capacity import CapacityCause
from kvtop.sources.prometheus import ALL_QUERIES, ClusterReader, PrometheusClient
from kvtop.sources.prometheus_synthetic import ScrapeTarget, SyntheticPrometheus
from tests.integration.test_prometheus_server import PROMETHEUS, free_port, start_exporter, stop, wait_for

pytestmark = pytest.mark.skipif(
    PROMETHEUS is None, reason="the prometheus binary is absent (apt-get install -y prometheus)"
)
NODES = {
    "h20-a": "dsv3-tp16-sglang-node0",
    "h20-b": "dsv3-tp16-sglang-node1",
    "pd-prefill": "llama70b-dynamo-prefill",
    "pd-decode": "llama70b-dynamo-decode",
}
#: answers that do not depend on when they are asked (ages do), compared with the synthetic server's
COMPARED = ("node", "gpu_states", "gpu_memory", "gpu", "gpu_state", "unexplained", "findings", "capacity", "terms", "engine_info", "usage")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    tmp_path = tmp_path_factory.mktemp("multinode")
    processes: list[subprocess.Popen[str]] = []
    try:
        exporters = {}
        for node, scenario in NODES.items():
            process, address = start_exporter(node, scenario, tmp_path / f"{node}.log")
            processes.append(process)
            exporters[node] = address
        config = tmp_path / "prometheus.yml"
        config.write_text(json.dumps({
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [{"job_name": "kvtop", "static_configs": [{"targets": list(exporters.values())}]}],
        }))  # fmt: skip
        port = free_port()
        processes.append(subprocess.Popen(
            [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=(tmp_path / "prometheus.log").open("w"),
        ))  # fmt: skip
        url = f"http://127.0.0.1:{port}"

        def scraped() -> bool:
            try:
                found = httpx.get(f"{url}/api/v1/query", params={"query": "count(kvtop_engine_info)"}, timeout=2)
                result = found.json()["data"]["result"]
            except (httpx.HTTPError, ValueError, KeyError):
                return False
            return bool(result) and result[0]["value"][1] == str(len(NODES))

        wait_for("Prometheus to scrape every exporter's engine", scraped, timeout_s=60)
        yield {"url": url, "exporters": exporters}
    finally:
        for process in processes:
            stop(process)


def test_the_two_nodes_are_one_engine_with_its_tightest_rank_on_the_co_tenants_node(cluster: dict) -> None:
    view = ClusterReader(PrometheusClient(cluster["url"])).read()
    (sglang,) = [e for e in view.engines if e.span.spans_nodes]
    assert sglang.nodes == ("h20-a", "h20-b") and sglang.span.rendezvous == "10.0.1.10:5000"
    assert sglang.tightest is not None and (sglang.tightest.node, sglang.tightest.gpu) == ("h20-b", "3")
    # the co-tenant, and the gap between kvtop's prediction and what SGLang measured (tests/sources/test_cluster_engines)
    assert [t.cause for t in sglang.terms] == [CapacityCause.OTHER_PROCESSES, CapacityCause.ENGINE_VS_PREDICTION]
    assert sglang.actual is not None
    assert sglang.clean_tokens + sum(t.tokens for t in sglang.terms) == sglang.actual[0]
    (pair,) = view.disaggregated
    assert pair.transfer == ("NIXL",) and pair.finding is not None


def _comparable(key: str, series: list[tuple[dict[str, str], float]]) -> set[tuple[object, ...]]:
    """A query's answer as a set; a tie `bottomk` may break either way, so its rank and GPU are left out."""
    tie_labels = {"rank", "gpu", "__name__"} if key in ("capacity", "terms") else {"__name__"}
    return {(tuple(sorted((k, v) for k, v in labels.items() if k not in tie_labels)), round(value, 6))
            for labels, value in series}  # fmt: skip


def test_the_synthetic_server_answers_as_prometheus_does(cluster: dict) -> None:
    client = PrometheusClient(cluster["url"])
    pages = [ScrapeTarget("kvtop", address, httpx.get(f"http://{address}/metrics", timeout=5).text)
             for address in cluster["exporters"].values()]  # fmt: skip
    synthetic = SyntheticPrometheus(pages, now=0.0)
    for key in COMPARED:
        real = client.query(ALL_QUERIES[key])
        assert _comparable(key, real) == _comparable(key, synthetic.answer(key)), key
