"""A real Prometheus server scrapes two `kvtop export --demo` processes and a recorded DCGM page;
`kvtop cluster` then reads the numbers back through its HTTP API.

Needs a `prometheus` binary: `$KVTOP_PROMETHEUS`, else the one `.ci/prometheus` unpacked into its
cache folder (Debian's package, never installed), else one on PATH; skipped without it.
Every process started here is killed in a `finally`; each wait is bounded (≤ 30 s).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kvtop.domain.cluster import ClusterView, GpuSource, NodeGpus, TargetHealth
from kvtop.sources.prometheus import ALL_QUERIES, ClusterReader, PrometheusClient
from kvtop.sources.prometheus_gpus import GPU_LIST_QUERIES, GPU_SUMMARY_QUERIES
from kvtop.sources.prometheus_synthetic import ScrapeTarget, SyntheticPrometheus
from tests.conftest import SAMPLES


def prometheus_binary() -> str | None:
    """$KVTOP_PROMETHEUS, else .ci/prometheus's cached binary, else `prometheus` on PATH."""
    named = os.environ.get("KVTOP_PROMETHEUS")
    if named:
        return named
    cache = Path(os.environ.get("KVTOP_CI_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kvtop-ci")
    cached = cache / "prometheus-root" / "usr" / "bin" / "prometheus"
    return str(cached) if cached.is_file() else shutil.which("prometheus")


PROMETHEUS = prometheus_binary()
pytestmark = [
    pytest.mark.skipif(
        PROMETHEUS is None, reason="no prometheus binary: run `bash .ci/prometheus` (unpacks Debian's package into a cache)"
    ),
    # one xdist worker under `--dist loadgroup` (.ci/run): the module's Prometheus server and exporters start once per
    # run (the slowest-80 list had `cluster` set up on both workers, 21.75 s + 21.56 s)
    pytest.mark.xdist_group("prometheus-server"),
]
MIB = 1 << 20
WAIT_S = 30.0
SCENARIOS = {"node-a": "llama70b-tp8-sglang", "node-b": "llama70b-tp8-foreign-gpu3"}


def wait_for(what: str, check: Callable[[], object], timeout_s: float = WAIT_S) -> object:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.25)
    pytest.fail(f"timed out after {timeout_s:g} s waiting for {what}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def start_exporter(node: str, scenario: str, log: Path) -> tuple[subprocess.Popen[str], str]:
    """`kvtop export` on a port it picks; returns the process and its host:port."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kvtop", "export", "--demo", scenario, "--listen", "127.0.0.1:0", "--interval", "3600", "--node-name", node],
        stdout=subprocess.DEVNULL, stderr=log.open("w"), text=True,
    )  # fmt: skip

    def address() -> str | None:
        if process.poll() is not None:
            pytest.fail(f"kvtop export {scenario} exited {process.returncode}: {log.read_text().strip()}")
        found = re.search(r"http://(127\.0\.0\.1:\d+)/metrics", log.read_text())
        return found.group(1) if found else None

    try:
        return process, str(wait_for(f"kvtop export --demo {scenario} to listen", address))
    except BaseException:
        stop(process)
        raise


class _Page(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        return


@pytest.fixture(scope="module")
def dcgm_page() -> Iterator[str]:
    """The recorded L40S dcgm-exporter page served at http://127.0.0.1:PORT/l40s-single-gpu-full.txt."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Page, directory=str(SAMPLES / "dcgm_metrics")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, dcgm_page: str) -> Iterator[dict[str, object]]:
    """Two exporters, the DCGM page and Prometheus, shared by the module (the last test stops node-b)."""
    tmp_path = tmp_path_factory.mktemp("prometheus")
    processes: list[subprocess.Popen[str]] = []
    try:
        exporters = {}
        for node, scenario in SCENARIOS.items():
            process, address = start_exporter(node, scenario, tmp_path / f"{node}.log")
            processes.append(process)
            exporters[node] = (process, address)
        config = tmp_path / "prometheus.yml"
        config.write_text(json.dumps({  # YAML is a superset of JSON
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [
                {"job_name": "kvtop", "static_configs": [{"targets": [a for _, a in exporters.values()]}]},
                {"job_name": "dcgm", "metrics_path": "/l40s-single-gpu-full.txt", "static_configs": [{"targets": [dcgm_page]}]},
            ],
        }))  # fmt: skip
        port = free_port()
        log = tmp_path / "prometheus.log"
        processes.append(subprocess.Popen(
            [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=log.open("w"),
        ))  # fmt: skip
        url = f"http://127.0.0.1:{port}"

        def all_up() -> bool:
            try:
                targets = httpx.get(f"{url}/api/v1/targets", timeout=2).json()["data"]["activeTargets"]
            except (httpx.HTTPError, ValueError, KeyError):
                return False
            return len(targets) == 3 and all(t["health"] == "up" for t in targets)

        wait_for("Prometheus to scrape all three targets", all_up)
        yield {"url": url, "exporters": exporters}
    finally:
        for process in processes:
            stop(process)


def exporter_numbers(address: str) -> dict[str, float]:
    """What the exporter itself serves: unexplained bytes summed, the tightest capacities, GPUs."""
    page = httpx.get(f"http://{address}/metrics", timeout=5).text
    samples = [s for f in text_string_to_metric_families(page) for s in f.samples]
    capacity = [s for s in samples if s.name == "kvtop_rank_token_capacity"]
    return {
        "unexplained": sum(s.value for s in samples if s.name == "kvtop_rank_unexplained_bytes"),
        "clean": min(s.value for s in capacity if s.labels["source"] == "clean"),
        "live": min(s.value for s in capacity if s.labels["source"] in ("live", "logged", "simulated")),
        "gpus": len([s for s in samples if s.name == "kvtop_gpu_memory_total_bytes"]),
        "used": sum(s.value for s in samples if s.name == "kvtop_gpu_memory_used_bytes"),
        "total": sum(s.value for s in samples if s.name == "kvtop_gpu_memory_total_bytes"),
        "used_gpu0": next(
            s.value for s in samples if s.name == "kvtop_gpu_memory_used_bytes" and s.labels["gpu"] == "0"
        ),
    }


def test_the_cluster_view_holds_the_exporters_numbers(cluster: dict) -> None:
    view = ClusterReader(PrometheusClient(cluster["url"])).read()
    listed = ClusterReader(PrometheusClient(cluster["url"]), gpus=True).read()  # kvtop cluster --gpus
    assert {n.name for n in view.nodes} == {"node-a", "node-b", "gpu1-wl8sg"}
    for name, (_, address) in cluster["exporters"].items():
        expected = exporter_numbers(address)
        node = next(n for n in view.nodes if n.name == name)
        assert node.health is TargetHealth.UP
        assert node.unexplained_bytes == expected["unexplained"]
        (engine,) = node.engines
        assert engine.clean_token_capacity == expected["clean"]
        assert engine.live_token_capacity == expected["live"]
        # the node list: Prometheus' own per-node sums (`sum by`), equal to the exporter's page summed here
        assert node.gpus is None and node.gpu_summary is not None
        assert (node.gpu_summary.source, node.gpu_summary.count) == (GpuSource.KVTOP, expected["gpus"]) == (GpuSource.KVTOP, 8)
        assert (node.gpu_summary.used_bytes, node.gpu_summary.total_bytes) == (expected["used"], expected["total"])
        gpus = next(n for n in listed.nodes if n.name == name).gpus
        assert gpus is not None and len(gpus) == 8 and gpus[0].used_bytes == expected["used_gpu0"]
    # the co-tenant on node-b's GPU 3 shrank its live pool below node-a's
    a, b = (next(n for n in view.nodes if n.name == name) for name in ("node-a", "node-b"))
    assert b.capacity_shortfall_fraction > a.capacity_shortfall_fraction
    l40s = next(n for n in view.nodes if n.name == "gpu1-wl8sg")
    # the recorded L40S page: FB_USED 0, FB_FREE 45459, FB_RESERVED 608 MiB
    assert l40s.gpu_summary == NodeGpus(source=GpuSource.DCGM, count=1, used_bytes=0, total_bytes=(45459 + 608) * MIB)
    l40s_listed = next(n for n in listed.nodes if n.name == "gpu1-wl8sg")
    assert [(g.free_bytes, g.used_bytes, g.reserved_bytes) for g in l40s_listed.gpus or ()] == [
        (45459 * MIB, 0, 608 * MIB)
    ]


def test_the_synthetic_server_sums_the_gpus_as_prometheus_does(cluster: dict, dcgm_page: str) -> None:
    """The GPU queries (per-node sums and every GPU's series) over kvtop's pages and the DCGM page: the real
    server's answers against those of kvtop's synthetic server (the demo cluster's and the benchmark's)."""
    pages = [ScrapeTarget("kvtop", address, httpx.get(f"http://{address}/metrics", timeout=5).text)
             for _, address in cluster["exporters"].values()]  # fmt: skip
    dcgm = (SAMPLES / "dcgm_metrics" / "l40s-single-gpu-full.txt").read_text()
    synthetic = SyntheticPrometheus([*pages, ScrapeTarget("dcgm", dcgm_page, dcgm)], now=0.0)
    client = PrometheusClient(cluster["url"])

    def comparable(series: list[tuple[dict[str, str], float]]) -> set[tuple[object, ...]]:
        return {(tuple(sorted(labels.items())), round(value, 6)) for labels, value in series}

    for key in (*GPU_SUMMARY_QUERIES, *GPU_LIST_QUERIES):
        assert comparable(client.query(ALL_QUERIES[key])) == comparable(synthetic.answer(key)), key


def test_kvtop_cluster_json_from_the_command_line(cluster: dict) -> None:
    result = subprocess.run([sys.executable, "-m", "kvtop", "cluster", "--prometheus", cluster["url"], "--json"],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    view = json.loads(result.stdout)
    assert {n["name"] for n in view["nodes"]} == {"node-a", "node-b", "gpu1-wl8sg"}
    assert all(n["health"] == "up" for n in view["nodes"])


def test_a_stopped_exporter_is_listed_first_as_down(cluster: dict) -> None:
    process, address = cluster["exporters"]["node-b"]
    stop(process)
    reader = ClusterReader(PrometheusClient(cluster["url"]))

    def down() -> ClusterView | None:
        view = reader.read()
        return view if view.nodes[0].health is TargetHealth.DOWN else None

    view = wait_for("Prometheus to mark node-b down", down)
    assert isinstance(view, ClusterView)
    assert view.nodes[0].name == address and view.nodes_not_up == 1
    assert "node-b" not in {n.name for n in view.nodes}  # its series went stale with the failed scrape
