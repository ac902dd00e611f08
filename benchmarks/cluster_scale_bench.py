"""The cluster view at scale: 1,000 nodes × 8 GPUs with 500 two-node engines, through a synthetic Prometheus.

Every engine is DeepSeek-V3 at TP16 over two 8× H20 nodes under SGLang: its two nodes serve the pages
`kvtop export` renders for the demo scenarios `dsv3-tp16-sglang-node0` and `-node1` (the recorded series
shapes: every family, label and rank of a real exporter page), each engine with its own rendezvous, node
names and pids; every node also serves a DCGM page of eight GPUs. A server process builds the pages,
computes the answer to each of the cluster reader's queries with kvtop's `SyntheticPrometheus` (checked
against a real Prometheus in tests/integration) and serves them over HTTP; this process only reads, so
its RSS is the reader's. As a Prometheus does, it stamps every answer with the time it is asked, and
between two refreshes the ages, KV usage and used GPU memory move (`MOVING`); the rest holds the same
samples. One refresh = `ClusterReader.read()` (HTTP, JSON, typing, the join of nodes and engines) plus
every row the TUI draws from it (`node_cells`, `engine_cells`). Targets: ≤ 1 s per refresh, ≤ 300 MB of RSS.

    .venv/bin/python benchmarks/cluster_scale_bench.py [--engines 500] [--repeat 5] [--gpus] [--own-metrics]

`--own-metrics`: no kvtop exporter anywhere; every node serves SGLang's own /metrics (each scheduler's
`sglang:max_total_num_tokens` and `sglang:token_usage`), so each engine is joined by the ranks its series name.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NOW = 1_750_000_100.0
DCGM_LINE = ('DCGM_FI_DEV_FB_{field}{{gpu="{gpu}",UUID="GPU-{node:04d}{gpu:04d}",modelName="NVIDIA H20",'
             'Hostname="n{node}"}} {value}\n')  # fmt: skip


def _page(scenario: str, node: str) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    from kvtop.commands.node_source import DemoSource
    from kvtop.sources.exporter import SnapshotCollector, default_findings

    collector = SnapshotCollector(DemoSource.open(scenario, clock=lambda: NOW), node=node,
                                  findings=default_findings(), clock=lambda: NOW)  # fmt: skip
    collector.refresh()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return generate_latest(registry).decode()


def _dcgm(node: int) -> str:
    lines = [f"# TYPE DCGM_FI_DEV_FB_{f} gauge\n" for f in ("USED", "FREE", "RESERVED")]
    for gpu in range(8):
        for field, value in (("USED", 91000 + gpu), ("FREE", 6000 - gpu), ("RESERVED", 336)):
            lines.append(DCGM_LINE.format(field=field, gpu=gpu, node=node, value=value))
    return "".join(lines)


#: the answers whose samples move between two refreshes of a live cluster (the rest hold the same samples:
#: which engines run where, their capacities and waterfalls, findings, GPU counts; only their stamps move)
MOVING = ("age", "snapshot_age", "usage", "gpu_memory", "dcgm_memory", "engine")
INTERVAL_S = 2.5  # the second refresh's answers are this much later


def _later(key: str, labels: dict[str, str], value: float) -> float:
    """A sample of a `MOVING` answer one refresh later: ages grown, KV usage and used GPU memory moved."""
    if key in ("age", "snapshot_age"):
        return value + INTERVAL_S
    if key == "usage" or labels.get("__name__") == "sglang:token_usage":
        return min(1.0, value + 0.01)
    name = labels.get("__name__", "")
    return value + 1.0 if "USED" in name.upper() else value - 1.0 if "FREE" in name.upper() else value


def _own_metrics(engine: int, node_rank: int) -> str:
    """One node's SGLang /metrics when no kvtop exporter runs there: DeepSeek-R1 with DP attention over two
    nodes, every scheduler reporting (`--enable-metrics-for-all-schedulers`), in the label set of a recorded
    page (tests/data/samples/sglang_metrics, DP8 DeepSeek-R1), each engine's series labelled with its
    rendezvous (`kvtop_engine`: 500 engines of one model cannot be told apart otherwise)."""
    lines = ["# TYPE sglang:max_total_num_tokens gauge\n", "# TYPE sglang:token_usage gauge\n"]
    for rank in range(8 * node_rank, 8 * node_rank + 8):
        labels = (f'dp_rank="{rank}",engine_type="unified",kvtop_engine="10.200.{engine // 256}.{engine % 256}:5000",'
                  f'model_name="deepseek-r1",pid="{910 + rank}",pp_rank="0",tp_rank="{rank}"')  # fmt: skip
        lines.append(f"sglang:max_total_num_tokens{{{labels}}} 326223.0\n")
        lines.append(f"sglang:token_usage{{{labels}}} {0.25 + rank / 100}\n")
    return "".join(lines)


def build_answers(engines: int, own_metrics: bool = False) -> tuple[list[dict[str, bytes]], dict[str, int]]:
    """The JSON body of each query's answer over 2 × `engines` nodes (the refresh's queries, then the three
    of `--gpus`), at two refreshes (the second with the `MOVING` answers' samples moved), each sample stamped
    `NOW` for the server to restamp; and what the cluster holds: series and bytes of the refresh's answers,
    of `--gpus`' more."""
    from kvtop.sources.prometheus import ALL_QUERIES, QUERIES
    from kvtop.sources.prometheus_synthetic import ScrapeTarget, SyntheticPrometheus

    templates = [_page("dsv3-tp16-sglang-node0", "TEMPLATE"), _page("dsv3-tp16-sglang-node1", "TEMPLATE")]
    targets = []
    for engine in range(engines):
        for rank, template in enumerate(templates):
            node = 2 * engine + rank
            host = f"10.{node // 65536}.{node // 256 % 256}.{node % 256}"
            page = (template.replace('node="TEMPLATE"', f'node="n{node}"')
                    .replace("10.0.1.10:5000", f"10.200.{engine // 256}.{engine % 256}:5000")
                    .replace("sglang:61000", f"sglang:{100_000 + engine}").replace("sglang:61500", f"sglang:{100_000 + engine}"))  # fmt: skip
            if own_metrics:
                targets.append(ScrapeTarget("sglang", f"{host}:30000", _own_metrics(engine, rank), age_s=3.0))
            else:
                targets.append(ScrapeTarget("kvtop", f"{host}:9401", page, age_s=3.0))
            targets.append(ScrapeTarget("dcgm", f"{host}:9400", _dcgm(node), age_s=3.0))
    server = SyntheticPrometheus(targets, now=NOW)
    bodies: list[dict[str, bytes]] = [{}, {}]
    series = {"refresh": 0, "gpus": 0}
    for key, expr in ALL_QUERIES.items():
        answer = server.answer(key)
        series["refresh" if key in QUERIES else "gpus"] += len(answer)
        for refresh in (0, 1):
            moved = refresh and key in MOVING
            result = [{"metric": labels, "value": [NOW, repr(float(_later(key, labels, value) if moved else value))]}
                      for labels, value in answer]  # fmt: skip
            bodies[refresh][expr] = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()
    refresh_bytes = sum(len(bodies[0][expr]) for expr in QUERIES.values())
    return bodies, {"nodes": 2 * engines, "gpus": 16 * engines, "series": series["refresh"], "answer_bytes": refresh_bytes,
                    "gpus_series": series["gpus"], "gpus_bytes": sum(len(b) for b in bodies[0].values()) - refresh_bytes,
                    "moving_series": sum(len(server.answer(key)) for key in MOVING)}  # fmt: skip


def serve(engines: int, ready: multiprocessing.Queue, own_metrics: bool) -> None:  # type: ignore[type-arg]
    """The server process: build every answer, then serve `/api/v1/query?query=…` from memory, as a
    Prometheus would: each answer stamped with the time it is asked, the `MOVING` answers alternating
    between the two refreshes' samples (every query's n-th ask gets refresh n mod 2)."""
    started = time.perf_counter()
    bodies, facts = build_answers(engines, own_metrics)
    asked: dict[str, int] = {}
    stamp = f"[{NOW!r},".encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            query = parse_qs(urlsplit(self.path).query).get("query", [""])[0]
            refresh = asked.get(query, 0)
            asked[query] = refresh + 1
            body = bodies[refresh % 2].get(query)
            self.send_response(200 if body else 400)
            body = body.replace(stamp, f"[{time.time():.3f},".encode()) if body else (
                b'{"status":"error","errorType":"bad_data","error":"unknown query"}')  # fmt: skip
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ready.put((httpd.server_address[1], facts, time.perf_counter() - started))
    httpd.serve_forever()


def loop_ms() -> float:
    started = time.perf_counter()
    total = 0
    for step in range(1_000_000):
        total += step
    return (time.perf_counter() - started) * 1000


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def best_of(runs: int, work: Callable[[], object]) -> float:
    """The least CPU seconds `work` took over `runs` runs (the machine is shared: the least is the work's own)."""
    spent = []
    for _ in range(runs):
        started = time.process_time()
        work()
        spent.append(time.process_time() - started)
    return min(spent)


def by_part(port: int, gpus: bool) -> None:
    """The reader's CPU per refresh by part, on the answers read once: JSON decoding (json, and orjson when
    installed), typing at the door without and with the labels' redaction and sanitising, the join, the rows."""
    import httpx

    from kvtop.sources import prometheus, prometheus_parse
    from kvtop.ui.widgets.cluster_table import node_cells
    from kvtop.ui.widgets.engine_table import engine_cells

    queries = prometheus.ALL_QUERIES if gpus else prometheus.QUERIES
    with httpx.Client() as client:
        raw = {key: client.get(f"http://127.0.0.1:{port}/api/v1/query", params={"query": expr}).content
               for key, expr in queries.items()}  # fmt: skip
    payloads = {key: json.loads(body) for key, body in raw.items()}
    parts = {"json.loads": best_of(3, lambda: [json.loads(body) for body in raw.values()])}
    try:
        import orjson

        parts["orjson.loads"] = best_of(3, lambda: [orjson.loads(body) for body in raw.values()])
    except ImportError:
        pass
    shown = prometheus_parse._shown_labels  # where `_vector` looks it up
    try:
        prometheus_parse._shown_labels = lambda labels: labels  # type: ignore[assignment]
        parts["typing, labels as given"] = best_of(3, lambda: [prometheus._vector(p, k, keep_nan=True) for k, p in payloads.items()])
    finally:
        prometheus_parse._shown_labels = shown
    prometheus_parse._shown_label.cache_clear()  # the first refresh redacts every label; the next ones remember
    started = time.process_time()
    answers = {key: prometheus._vector(payload, key, keep_nan=True) for key, payload in payloads.items()}
    parts["typing, labels redacted + sanitised (first refresh)"] = time.process_time() - started
    parts["typing, labels redacted + sanitised (next refreshes)"] = best_of(3, lambda: [prometheus._vector(p, k, keep_nan=True) for k, p in payloads.items()])
    join = lambda: prometheus.join_answers(answers, url="http://x", taken_at=NOW, stale_after_s=120.0, gpus=gpus)  # noqa: E731
    parts["join"] = best_of(3, join)
    view = join()
    parts["rows"] = best_of(3, lambda: [node_cells(n) for n in view.nodes] + [engine_cells(e, view.disaggregated) for e in view.engines])
    for name, seconds in parts.items():
        print(f"  {name:<52} {seconds * 1000:7.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", type=int, default=500, help="two-node engines (each adds 2 nodes × 8 GPUs)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--gpus", action="store_true", help="also read every GPU's series, as `kvtop cluster --gpus`")
    parser.add_argument("--own-metrics", action="store_true",
                        help="no kvtop exporter: every node serves SGLang's own /metrics (engines joined by their ranks)")  # fmt: skip
    args = parser.parse_args()

    ready: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    server = multiprocessing.get_context("fork").Process(target=serve, args=(args.engines, ready, args.own_metrics), daemon=True)
    server.start()
    try:
        port, facts, build_s = ready.get(timeout=1800)
        print(f"server: {facts['nodes']:,} nodes, {facts['gpus']:,} GPUs, {facts['series']:,} series in the answers "
              f"({facts['moving_series']:,} move between refreshes; "
              f"{facts['answer_bytes'] / 2**20:.1f} MiB of JSON; --gpus reads {facts['gpus_series']:,} more, "
              f"{facts['gpus_bytes'] / 2**20:.1f} MiB), built in {build_s:.0f} s")  # fmt: skip
        from kvtop.gc_pause import collector_paused
        from kvtop.sources.prometheus import ClusterReader, PrometheusClient
        from kvtop.ui.widgets.cluster_table import node_cells
        from kvtop.ui.widgets.engine_table import engine_cells

        before = rss_mib()
        reader = ClusterReader(PrometheusClient(f"http://127.0.0.1:{port}", timeout_s=60), clock=lambda: NOW, gpus=args.gpus)
        times, cpu = [], []
        for _ in range(args.repeat + 1):  # the first refresh types every answer; the next ones only what moved
            started, started_cpu = time.perf_counter(), time.process_time()
            view = reader.read()
            with collector_paused():  # as the cluster screen draws them (ui/screens/cluster.py)
                rows = [node_cells(node) for node in view.nodes]
                rows += [engine_cells(engine, view.disaggregated) for engine in view.engines]
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        first, first_cpu, times, cpu = times[0], cpu[0], times[1:], cpu[1:]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        spanning = sum(1 for e in view.engines if e.span.spans_nodes and len(e.pieces) == 2)
        median = statistics.median(times)
        counted = sum(n.gpu_summary.count for n in view.nodes if n.gpu_summary is not None)
        print(f"cluster: {len(view.nodes):,} nodes, {counted:,} GPUs, "
              f"{len(view.engines):,} engines ({spanning:,} joined over two nodes), {len(rows):,} rows")  # fmt: skip
        print(f"first refresh (every answer typed): {first * 1000:.0f} ms, this process's CPU {first_cpu * 1000:.0f} ms")
        print(f"refresh ({', '.join(MOVING)} moved; every stamp): median {median * 1000:.0f} ms, "
              f"max {max(times) * 1000:.0f} ms over {args.repeat}, this process's CPU median {statistics.median(cpu) * 1000:.0f} ms "
              f"(target ≤ 1000 ms: {'ok' if median <= 1.0 else 'OVER TARGET'})")  # fmt: skip
        print(f"machine: 1M-step Python loop {loop_ms():.0f} ms (~50 ms on a typical idle modern core)")
        print(f"memory: RSS {before:.0f} MiB before the first read, peak {peak:.0f} MiB "
              f"(target ≤ 300 MB = 286 MiB: {'ok' if peak * 2**20 <= 300e6 else 'OVER TARGET'})")  # fmt: skip
        print(f"load average at the end: {os.getloadavg()[0]:.1f} (1 min); the reader's CPU per refresh by part:")
        by_part(port, args.gpus)
    finally:
        server.terminate()
        server.join(timeout=10)


if __name__ == "__main__":
    main()
