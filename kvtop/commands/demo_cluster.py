"""The demo cluster: simulated nodes, each serving its `kvtop export` page, scraped by a synthetic Prometheus.

A cluster file (`examples/clusters/<name>.json`) names each node, the demo scenario it runs and its
exporter's address. Every node is a `DemoSource` read through `SnapshotCollector` — the exporter's own
series, `demo="1"` on each — and `SyntheticPrometheus` answers the cluster reader's and the node
reader's queries over them, so `kvtop cluster --demo` and the cluster TUI take the real path: the same
queries, the same join, the same drill-down. The reader collects the pages again before each read (at most once per `period_s`); a query is
answered from the last collection, as a server answers from its last scrape.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from prometheus_client import CollectorRegistry, generate_latest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kvtop.bundled import bundled_dir
from kvtop.commands.node_source import DemoSource
from kvtop.domain.cluster import ClusterView
from kvtop.domain.errors import InputError
from kvtop.sources.exporter import SnapshotCollector, default_findings
from kvtop.sources.json_file import read_json_object
from kvtop.sources.prometheus import ClusterReader
from kvtop.sources.prometheus_synthetic import ScrapeTarget, SyntheticPrometheus
from kvtop.sources.scenario import field_path

DEFAULT_CLUSTER = "demo"
DEMO_PROMETHEUS_URL = "http://prometheus.demo:9090"
CLUSTER_FLAG = "--demo-cluster"


class DemoNode(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=63)
    scenario: str  # a demo scenario name (examples/scenarios) or .json path
    instance: str = Field(min_length=3, max_length=80)  # the exporter's host:port as Prometheus labels it


class DemoEngineTarget(BaseModel):
    """A simulated engine's own /metrics with no kvtop exporter on its node (every series `demo="1"`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job: str = Field(min_length=1, max_length=40)  # the scrape job ("vllm", "sglang")
    instance: str = Field(min_length=3, max_length=80)  # the engine's host:port as Prometheus labels it
    page: str = Field(min_length=1, max_length=200)  # its page, relative to the cluster file's folder


class DemoClusterSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str = ""
    nodes: tuple[DemoNode, ...] = Field(min_length=1, max_length=64)
    engine_targets: tuple[DemoEngineTarget, ...] = Field(default=(), max_length=64)
    pages: dict[str, str] = {}  # each engine target's page text, read with the file


def cluster_names() -> list[str]:
    folder = bundled_dir("examples", "clusters")
    return sorted(path.stem for path in folder.glob("*.json")) if folder.is_dir() else []


def load_cluster(ref: str) -> DemoClusterSpec:
    """A cluster file by name ('default' included) or path; bad input is an InputError naming the field."""
    name = DEFAULT_CLUSTER if ref in ("", "default") else ref
    given_path = name.endswith(".json") or "/" in name
    path = Path(name).expanduser() if given_path else bundled_dir("examples", "clusters") / f"{name}.json"
    # a path that is there but no file (a folder, /dev/zero) is said so by read_json_object, not "no demo cluster"
    if not (path.exists() if given_path else path.is_file()):
        raise InputError(f"no demo cluster {name!r} (clusters: {', '.join(cluster_names()) or 'none'}; or a .json path)",
                         field=CLUSTER_FLAG)  # fmt: skip
    data = read_json_object(path, "demo cluster", field=CLUSTER_FLAG)
    try:
        spec = DemoClusterSpec.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise InputError(str(first["msg"]), field=field_path(first["loc"]), source=str(path)) from None
    names = [node.name for node in spec.nodes]
    if len(set(names)) != len(names):
        raise InputError("a node name is used twice", field="nodes", source=str(path))
    pages = {}
    for position, target in enumerate(spec.engine_targets):
        page = path.parent / target.page
        if not page.is_file() or not page.resolve().is_relative_to(path.parent.resolve()):
            raise InputError(f"no engine page {target.page!r} beside the cluster file",
                             field=f"engine_targets[{position}].page", source=str(path))  # fmt: skip
        pages[target.page] = page.read_text(encoding="utf-8")
    return spec.model_copy(update={"pages": pages})


def _source(node: DemoNode, position: int, clock: Callable[[], float]) -> DemoSource:
    """The node's demo scenario; one that cannot be read names the cluster file's field."""
    try:
        return DemoSource.open(node.scenario, clock=clock)
    except InputError as error:
        raise InputError(f"node {node.name!r}: {error}", field=f"nodes[{position}].scenario") from None


class DemoCluster:
    """The cluster's nodes as exporter pages behind a synthetic Prometheus (`transport()` for httpx)."""

    def __init__(self, spec: DemoClusterSpec, *, clock: Callable[[], float] = time.time, period_s: float = 1.0) -> None:
        self.spec = spec
        self._clock = clock
        self._period_s = period_s
        findings = default_findings()
        self._collectors = {
            node.name: SnapshotCollector(_source(node, position, clock), node=node.name, findings=findings, clock=clock)
            for position, node in enumerate(spec.nodes)
        }
        self._lock = threading.Lock()
        self._server: SyntheticPrometheus | None = None
        self._collected_at: float | None = None

    @classmethod
    def open(cls, ref: str, *, clock: Callable[[], float] = time.time, period_s: float = 1.0) -> DemoCluster:
        return cls(load_cluster(ref), clock=clock, period_s=period_s)

    def _page(self, collector: SnapshotCollector) -> str:
        collector.refresh()
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        return generate_latest(registry).decode()

    def refresh(self) -> SyntheticPrometheus:
        """Collect the nodes again once `period_s` has passed (the first call always collects)."""
        with self._lock:
            now = self._clock()
            if self._server is None or self._collected_at is None or now - self._collected_at >= self._period_s:
                targets = [
                    ScrapeTarget("kvtop", node.instance, self._page(self._collectors[node.name]), age_s=1.0)
                    for node in self.spec.nodes
                ]
                targets += [ScrapeTarget(t.job, t.instance, self.spec.pages[t.page], age_s=1.0)
                            for t in self.spec.engine_targets]  # fmt: skip
                # asked after every page was collected, as a server is after its scrapes: a snapshot
                # taken during the collection is never dated after the server's `time()`
                self._server = SyntheticPrometheus(targets, now=self._clock())
                self._collected_at = now
            return self._server

    def server(self) -> SyntheticPrometheus:
        """The synthetic Prometheus as last collected (a query never waits on a collection but the first)."""
        with self._lock:
            server = self._server
        return server if server is not None else self.refresh()

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(lambda request: self.server().handler(request))


class DemoClusterReader:
    """A `ClusterReaderPort` over the demo cluster: the nodes are collected first, then read through the
    synthetic Prometheus within the reader's deadline (a real server scrapes before it is asked, too)."""

    def __init__(self, cluster: DemoCluster, reader: ClusterReader) -> None:
        self.cluster = cluster
        self.reader = reader

    def read(self) -> ClusterView:
        self.cluster.refresh()
        return self.reader.read()
