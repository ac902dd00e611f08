"""A real Prometheus scraping engines' own /metrics (no kvtop exporter anywhere): the two nodes of an SGLang
DeepSeek-R1 prefill engine with DP attention and a vLLM engine data-parallel over two API servers are each
read as one engine, as the synthetic server's answers make them (tests/sources/test_cluster_metrics_join.py
holds the recorded series shapes and figures); and the real server's `engine` answer is the synthetic one.

Needs the `prometheus` binary (`bash .ci/prometheus`); skipped without it. Every process started here is
stopped in a `finally`; each wait is bounded (60 s for the scrape).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from kvtop.domain.capacity import CapacitySource
from kvtop.sources.prometheus import QUERIES, ClusterReader, PrometheusClient
from kvtop.sources.prometheus_synthetic import ScrapeTarget, SyntheticPrometheus
from tests.integration.test_prometheus_server import PROMETHEUS, free_port, stop, wait_for
from tests.local_http import serving
from tests.sources.test_cluster_metrics_capacity import MODEL, v0110_page
from tests.sources.test_cluster_metrics_join import R1_TOKENS, sglang_page

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="no prometheus binary: run `bash .ci/prometheus`")
PAGES = {
    "sglang": [sglang_page(range(0, 8), usage={3: 0.28}), sglang_page(range(8, 16))],
    # each engine core's recorded v0.11.0 cache_config_info (9,271 blocks × 16; DP rank 3 sized 9,000) and KV usage
    "vllm": [v0110_page({0: 9271, 1: 9271}, usage=0.25), v0110_page({2: 9271, 3: 9000}, usage=0.5)],
}


def _page(text: str) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        body = text.encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain; version=0.0.4")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    tmp_path = tmp_path_factory.mktemp("engine-metrics")
    with ExitStack() as pages:
        targets = {job: [pages.enter_context(serving(_page(text))).removeprefix("http://") for text in texts]
                   for job, texts in PAGES.items()}  # fmt: skip
        config = tmp_path / "prometheus.yml"
        config.write_text(json.dumps({
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [{"job_name": job, "static_configs": [{"targets": found}]} for job, found in targets.items()],
        }))  # fmt: skip
        port = free_port()
        process = subprocess.Popen(
            [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=(tmp_path / "prometheus.log").open("w"),
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"

            def scraped() -> bool:
                try:
                    found = httpx.get(f"{url}/api/v1/query", params={"query": QUERIES["engine"]}, timeout=2)
                    return len(found.json()["data"]["result"]) == 16 + 16 + 4 + 4
                except (httpx.HTTPError, ValueError, KeyError):
                    return False

            wait_for("Prometheus to scrape every engine's page", scraped, timeout_s=60)
            yield {"url": url, "targets": targets}
        finally:
            stop(process)


def test_each_engine_is_one_engine_across_its_instances(cluster: dict) -> None:
    view = ClusterReader(PrometheusClient(cluster["url"])).read()
    sglang, vllm = cluster["targets"]["sglang"], cluster["targets"]["vllm"]
    joined = {e.name: [(p.instance, p.ranks_label) for p in e.pieces] for e in view.engines}
    assert joined == {
        f"sglang deepseek-r1 @{sglang[0]}": [(sglang[0], "DP0–DP7 TP0–TP7"), (sglang[1], "DP8–DP15 TP8–TP15")],
        f"vllm {MODEL} @{vllm[0]}": [(vllm[0], "DP0–DP1"), (vllm[1], "DP2–DP3")],
    }
    engines = {e.span.kind: e for e in view.engines}
    assert engines["sglang"].actual == (R1_TOKENS, CapacitySource.LIVE)
    assert engines["sglang"].kv_usage_fraction == pytest.approx(0.28)
    assert engines["vllm"].kv_usage_fraction == pytest.approx(0.5)
    # capacity, layout and tightest rank from the engines' own series (issue 31): 9,000 × 16 by hand
    assert engines["vllm"].actual == (144_000, CapacitySource.LIVE)
    tightest = engines["vllm"].tightest
    assert tightest is not None and tightest.clear and (tightest.node, tightest.rank) == (engines["vllm"].pieces[1].node, "dp3")
    layouts = {kind: engine.pieces[0].layout for kind, engine in engines.items()}
    assert layouts == {"sglang": "TP16 DP16 (DP attention)", "vllm": "DP4, TP, PP not reported"}


def test_the_synthetic_server_answers_the_engine_query_as_prometheus_does(cluster: dict) -> None:
    pages = [ScrapeTarget(job, address, httpx.get(f"http://{address}/metrics", timeout=5).text)
             for job, addresses in cluster["targets"].items() for address in addresses]  # fmt: skip
    real = PrometheusClient(cluster["url"]).query(QUERIES["engine"])
    synthetic = SyntheticPrometheus(pages, now=0.0).answer("engine")
    assert sorted((sorted(labels.items()), value) for labels, value in real) == sorted(
        (sorted(labels.items()), value) for labels, value in synthetic
    )
