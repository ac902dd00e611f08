"""`kvtop export`: the node's ledgers as Prometheus metrics (prometheus-client renders the page).

A background thread collects a `NodeSnapshot` every `interval_s` seconds; a scrape serves the
page of the LAST snapshot (rendered once per collection and format), so it never waits on NVML
or an engine endpoint. A failed collection keeps the previous numbers and says so in
`kvtop_exporter_collect_success`. `/metrics` serves the page, `/healthz` whether the served
snapshot is fresh (503 once it is older than `stale_after_s`); every other path is 404 and
every method but GET and HEAD 405. The series are built in `exporter_series`, the HTTP server
is `exporter_http` (bounded threads, deep queue, timeouts). Docs: docs/metrics.md.
"""

from __future__ import annotations

import gzip
import ipaddress
import json
import math
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, choose_encoder, generate_latest, gzip_accepted
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from kvtop.domain.errors import InputError
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.ports import SnapshotSource
from kvtop.domain.redact import redact_shown
from kvtop.sources.exporter_http import HttpServer, Request, Response, ServerLimits, plain
from kvtop.sources.exporter_series import DEMO_LABELS, is_demo_source, labelled, snapshot_families

DEFAULT_LISTEN = "127.0.0.1:9401"
STALE_AFTER_PERIODS = 3  # /healthz fails once the served snapshot is older than this many --interval
METRICS_PATH = "/metrics"
HEALTH_PATH = "/healthz"
ALLOWED_METHODS = ("GET", "HEAD")
MAX_CACHED_PAGES = 8  # formats × compression asked for since the last collection

FindingsFn = Callable[[NodeSnapshot], Iterable[Any]]


@dataclass(frozen=True)
class ListenAddress:
    """Where the exporter binds; `loopback` is False for any address reachable from elsewhere."""

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False  # a host name other than localhost: assume reachable


def parse_listen(text: str, *, allow_remote: bool = False) -> ListenAddress:
    """`HOST:PORT`, `[IPv6]:PORT` or `:PORT` (loopback); a non-loopback host needs `allow_remote`."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit():
        raise InputError(f"expected HOST:PORT, got {text!r}", field="--listen")
    host = host.strip("[]") or "127.0.0.1"
    port = int(port_text)
    if not 0 <= port <= 65535:
        raise InputError(f"port {port} is out of range 0-65535", field="--listen")
    address = ListenAddress(host=host, port=port)
    if not address.loopback and not allow_remote:
        raise InputError(
            f"{host} is reachable from other machines; add --allow-remote to serve node metrics there",
            field="--listen",
        )
    return address


def default_findings() -> FindingsFn | None:
    """`kvtop.domain.diagnose.diagnose` when that module exists (it is optional for the exporter)."""
    try:
        from kvtop.domain import diagnose as diagnose_module
    except ImportError:
        return None
    found = getattr(diagnose_module, "diagnose", None)
    return found if callable(found) else None


def node_name(source_label: str, given: str | None) -> str:
    """The `node` label: the name given, else the host's name; a demo node is named by its scenario
    (`demo:<scenario>`), never as this host, whose real GPUs it does not describe. A given name is redacted as any
    text kvtop shows (`redact_shown`): a URL pasted with its password serves no password."""
    if given:
        return redact_shown(given)
    return source_label if is_demo_source(source_label) else socket.gethostname()


@dataclass(frozen=True)
class Health:
    """What /healthz says: the served snapshot's age against the staleness limit."""

    snapshot_age_s: float | None  # None: no collection has succeeded yet
    stale_after_s: float
    last_collection_ok: bool
    source: str
    demo: bool

    @property
    def fresh(self) -> bool:
        return self.snapshot_age_s is not None and self.snapshot_age_s <= self.stale_after_s

    @property
    def status(self) -> str:
        if self.snapshot_age_s is None:
            return "no_snapshot"
        return "ok" if self.fresh else "stale"

    def response(self) -> Response:
        body = {
            "status": self.status,
            "snapshot_age_seconds": None if self.snapshot_age_s is None else round(self.snapshot_age_s, 3),
            "stale_after_seconds": self.stale_after_s,
            "last_collection": "ok" if self.last_collection_ok else "failed",
            "source": self.source,
            "demo": self.demo,
        }
        code = HTTPStatus.OK if self.fresh else HTTPStatus.SERVICE_UNAVAILABLE
        return Response(code, (json.dumps(body) + "\n").encode(), (("Content-Type", "application/json"),))


class SnapshotCollector(Collector):
    """Holds the last snapshot; `refresh()` collects a new one, `collect()` serves the held one.

    `node` None names the node with `node_name`. A demo source's every series carries `demo="1"`.
    `clock` stamps the served times (epoch); `monotonic` measures the snapshot's age.
    """

    def __init__(
        self,
        source: SnapshotSource,
        *,
        node: str | None = None,
        findings: FindingsFn | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.source = source
        self.demo = is_demo_source(source.label)
        self.node = node_name(source.label, node)
        self._constant_labels = DEMO_LABELS if self.demo else {}
        self._findings_fn = findings
        self._clock = clock
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._families: list[GaugeMetricFamily] = []
        self._ok = False
        self._error: str | None = None
        self._duration_s = 0.0
        self._last_success: float | None = None
        self._last_success_monotonic: float | None = None
        self._generation = 0

    def refresh(self) -> bool:
        """Collect once; on failure keep the last numbers and remember why. True when it succeeded."""
        started = time.perf_counter()
        try:
            snapshot = self.source.collect()
            findings = tuple(self._findings_fn(snapshot)) if self._findings_fn else None
            families = snapshot_families(snapshot, self.node, findings)
        except Exception as err:  # any failure of the source is reported in the metrics, not raised
            with self._lock:
                self._ok, self._error = False, redact_shown(f"{type(err).__name__}: {err}")
                self._duration_s = time.perf_counter() - started
                self._generation += 1
            print(f"kvtop export: collection failed: {self._error}", file=sys.stderr)
            return False
        with self._lock:
            self._families, self._ok, self._error = families, True, None
            self._duration_s = time.perf_counter() - started
            self._last_success = self._clock()
            self._last_success_monotonic = self._monotonic()
            self._generation += 1
        return True

    @property
    def last_error(self) -> str | None:
        return self._error

    @property
    def generation(self) -> int:
        """Counts refreshes: the page changes only when this does."""
        return self._generation

    def health(self, stale_after_s: float) -> Health:
        with self._lock:
            last, ok = self._last_success_monotonic, self._ok
        age = None if last is None else max(0.0, self._monotonic() - last)
        return Health(age, stale_after_s, ok, self.source.label, self.demo)

    def collect(self) -> Iterator[Metric]:
        for family in self._own_families():
            yield labelled(family, self._constant_labels)

    def _own_families(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            families, ok, duration, last = (
                list(self._families),
                self._ok,
                self._duration_s,
                self._last_success,
            )
        yield from families
        yield GaugeMetricFamily(
            "kvtop_exporter_collect_success", "1 when the last collection succeeded", value=int(ok)
        )
        yield GaugeMetricFamily(
            "kvtop_exporter_collect_duration_seconds", "How long the last collection took", value=duration
        )
        if last is not None:
            yield GaugeMetricFamily(
                "kvtop_exporter_last_success_timestamp_seconds",
                "When a collection last succeeded (epoch)",
                value=last,
            )


class MetricsPages:
    """The /metrics page in each format a scraper asks for, rendered once per collection."""

    def __init__(self, collector: SnapshotCollector) -> None:
        self._collector = collector
        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(collector)
        self._generation = -1
        self._pages: dict[tuple[str, bool], bytes] = {}

    def response(self, request: Request) -> Response:
        try:
            encoder, content_type = choose_encoder(request.headers.get("accept", ""))
        except ValueError:  # an unreadable version in Accept: the classic text format
            encoder, content_type = generate_latest, CONTENT_TYPE_LATEST
        gzipped = gzip_accepted(request.headers.get("accept-encoding", ""))
        generation = self._collector.generation
        if generation != self._generation or len(self._pages) >= MAX_CACHED_PAGES:
            self._pages.clear()
            self._generation = generation
        key = (content_type, gzipped)
        page = self._pages.get(key)
        if page is None:
            page = encoder(self._registry)
            page = self._pages[key] = gzip.compress(page) if gzipped else page
        headers = [("Content-Type", content_type)] + ([("Content-Encoding", "gzip")] if gzipped else [])
        return Response(HTTPStatus.OK, page, tuple(headers))


class Exporter:
    """The collector, its refresh thread and the HTTP server; `close()` stops both.

    `stale_after_s` (default `STALE_AFTER_PERIODS` × `interval_s`) is the age past which /healthz
    answers 503; `limits` bound what connections may ask (see `exporter_http.ServerLimits`).
    """

    def __init__(
        self,
        collector: SnapshotCollector,
        address: ListenAddress,
        interval_s: float,
        *,
        stale_after_s: float | None = None,
        limits: ServerLimits | None = None,
    ) -> None:
        if not 0 < interval_s < math.inf:
            raise InputError(f"must be a positive number of seconds (got {interval_s})", field="--interval")
        stale_after_s = STALE_AFTER_PERIODS * interval_s if stale_after_s is None else stale_after_s
        if not interval_s < stale_after_s < math.inf:
            raise InputError(
                f"must be longer than --interval ({interval_s:g} s; got {stale_after_s:g})",
                field="--stale-after",
            )
        self.collector = collector
        self.interval_s = interval_s
        self.stale_after_s = stale_after_s
        self._pages = MetricsPages(collector)
        self._stop = threading.Event()
        self._closed = False
        collector.refresh()  # the first scrape already has numbers
        self._server = HttpServer(self.route, limits)
        self._server.start(address.host, address.port)
        self.port: int = self._server.port
        self._refresher = threading.Thread(
            target=self._refresh_loop, name="kvtop-export-refresh", daemon=True
        )
        self._refresher.start()

    @property
    def limits(self) -> ServerLimits:
        return self._server.limits

    @property
    def open_connections(self) -> int:
        """Connections the HTTP server holds now (each a socket, none a thread)."""
        return self._server.open_connections

    def route(self, request: Request) -> Response:
        """/metrics and /healthz by GET or HEAD; 404 for any other path, 405 for any other method."""
        if request.path not in (METRICS_PATH, HEALTH_PATH):
            return plain(
                HTTPStatus.NOT_FOUND, f"not found: kvtop export serves {METRICS_PATH} and {HEALTH_PATH}"
            )
        if request.method not in ALLOWED_METHODS:
            allowed = ", ".join(ALLOWED_METHODS)
            return plain(
                HTTPStatus.METHOD_NOT_ALLOWED, f"method not allowed: use {allowed}", ("Allow", allowed)
            )
        if request.path == HEALTH_PATH:
            return self.collector.health(self.stale_after_s).response()
        return self._pages.response(request)

    def _refresh_loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.collector.refresh()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until `close()` (or the timeout); True when stopped."""
        return self._stop.wait(timeout_s)

    def stop(self) -> None:
        """Ask `wait()` to return (safe from a signal handler)."""
        self._stop.set()

    def close(self) -> None:
        """Stop the refresh thread and the HTTP server (idempotent)."""
        self._stop.set()
        if self._closed:
            return
        self._closed = True
        self._server.close()
        self._refresher.join(timeout=5)
