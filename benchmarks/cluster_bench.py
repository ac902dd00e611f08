"""Cluster view at scale: 128 nodes × 8 GPUs through the Prometheus API, and the exporter's scrape.

Each node serves the exporter page of the demo scenario `llama70b-tp8-foreign-gpu3` (its own
node label) and a DCGM page with eight GPUs. The answers Prometheus would give to every query
of `kvtop cluster` are computed once and served from memory by httpx.MockTransport, so the time
measured is kvtop's own: the HTTP round trips through httpx, JSON decoding and the join.
Targets: refresh ≤ 250 ms; the exporter's scrape well under a second.

    .venv/bin/python benchmarks/cluster_bench.py [--nodes 128] [--repeat 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import httpx
from prometheus_client import CollectorRegistry, generate_latest

from kvtop.commands.node_source import DemoSource
from kvtop.sources.exporter import SnapshotCollector
from kvtop.sources.prometheus import QUERIES, ClusterReader, PrometheusClient
from kvtop.sources.scenario import load_scenario
from tests.sources.fake_prometheus import NOW, FakePrometheus, Target

GPUS_PER_NODE = 8
DCGM_LINE = ('DCGM_FI_DEV_FB_{field}{{gpu="{gpu}",UUID="GPU-{node:04d}{gpu:04d}",modelName="NVIDIA H100 80GB HBM3",'
             'Hostname="dcgm-host-{node}"}} {value}\n')  # fmt: skip


def dcgm_page(node: int) -> str:
    lines = [f"# TYPE DCGM_FI_DEV_FB_{f} gauge\n" for f in ("USED", "FREE", "RESERVED")]
    for gpu in range(GPUS_PER_NODE):
        for field, value in (("USED", 76000 + gpu), ("FREE", 5000 - gpu), ("RESERVED", 559)):
            lines.append(DCGM_LINE.format(field=field, gpu=gpu, node=node, value=value))
    return "".join(lines)


def exporter_page(collector: SnapshotCollector) -> tuple[str, float]:
    """The page and how long one scrape took (seconds, best of 20)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    times = []
    for _ in range(20):
        started = time.perf_counter()
        page = generate_latest(registry).decode()
        times.append(time.perf_counter() - started)
    return page, min(times)


def loop_calibration_ms() -> float:
    """A million-step Python loop: ~50 ms on a typical modern core (read the numbers against it)."""
    started = time.perf_counter()
    total = 0
    for step in range(1_000_000):
        total += step
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()

    print(f"machine: 1M-step Python loop {loop_calibration_ms():.0f} ms")
    collector = SnapshotCollector(
        DemoSource(load_scenario("llama70b-tp8-foreign-gpu3")), node="node", clock=lambda: NOW
    )
    started = time.perf_counter()
    collector.refresh()
    collect_s = time.perf_counter() - started
    page, scrape_s = exporter_page(collector)
    print(f"exporter: collect {collect_s * 1000:.1f} ms (background), scrape {scrape_s * 1000:.2f} ms, "
          f"{len(page.splitlines())} lines, {len(page) / 1024:.0f} KiB")  # fmt: skip

    targets = []
    for node in range(args.nodes):
        targets.append(
            Target(
                "kvtop",
                f"10.0.{node // 256}.{node % 256}:9401",
                page.replace('node="node"', f'node="dcgm-host-{node}"'),
            )
        )
        targets.append(Target("dcgm", f"10.0.{node // 256}.{node % 256}:9400", dcgm_page(node)))
    fake = FakePrometheus(targets)
    bodies = {}
    for key, expr in QUERIES.items():
        result = [
            {"metric": labels, "value": [NOW, repr(float(value))]} for labels, value in fake.answer(key)
        ]
        bodies[expr] = json.dumps(
            {"status": "success", "data": {"resultType": "vector", "result": result}}
        ).encode()
    series = sum(len(json.loads(body)["data"]["result"]) for body in bodies.values())
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=bodies[request.url.params["query"]],
                                                                   headers={"content-type": "application/json"}))  # fmt: skip
    reader = ClusterReader(
        PrometheusClient("http://prometheus.bench:9090", transport=transport), clock=lambda: NOW
    )
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        view = reader.read()
        times.append(time.perf_counter() - started)
    gpus = sum(len(n.gpus) for n in view.nodes)
    median_ms = statistics.median(times) * 1000
    verdict = "ok" if median_ms <= 250 else "OVER TARGET"
    print(f"cluster: {len(view.nodes)} nodes, {gpus} GPUs, {series} series in {len(QUERIES)} queries: "
          f"refresh median {median_ms:.1f} ms, max {max(times) * 1000:.1f} ms (target ≤ 250 ms: {verdict})")  # fmt: skip


if __name__ == "__main__":
    main()
