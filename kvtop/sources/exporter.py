"""`kvtop export`: the node's ledgers as Prometheus metrics (prometheus-client).

A background thread collects a `NodeSnapshot` every `interval_s` seconds; a scrape only turns
the LAST snapshot into metric families, so it never waits on NVML or an engine endpoint. A
failed collection keeps the previous numbers and says so in `kvtop_exporter_collect_success`.
Every metric is a gauge named `kvtop_…` with its unit as suffix (`_bytes`, `_seconds`,
`_ratio`); the names and labels are documented in docs/metrics.md.
"""

from __future__ import annotations

import ipaddress
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kvtop.domain.errors import InputError
from kvtop.domain.node import EngineView, NodeSnapshot, RankView
from kvtop.domain.ports import SnapshotSource
from kvtop.domain.redact import redact_text

DEFAULT_LISTEN = "127.0.0.1:9401"
GPU_LABELS = ("gpu", "uuid", "name")
RANK_LABELS = ("engine", "rank", "gpu")
LOGGED_CAPACITY_NOTE = "token capacity from the engine log"  # what sources/live.py notes

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


def rank_label(rank: RankView) -> str:
    """`dp0-tp3-pp0` (`-ep3` appended when the engine names an expert rank)."""
    r = rank.rank
    return f"dp{r.dp}-tp{r.tp}-pp{r.pp}" + (f"-ep{r.ep}" if r.ep is not None else "")


def _gauge(name: str, doc: str, labels: Iterable[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=list(labels))


def _gpu_families(snapshot: NodeSnapshot) -> list[GaugeMetricFamily]:
    info = _gauge("kvtop_gpu_info", "One per GPU; state is ok, lost, error, mig, …", (*GPU_LABELS, "state"))
    memory = {
        kind: _gauge(
            f"kvtop_gpu_memory_{kind}_bytes",
            f"GPU memory {kind} (NVML v2: used excludes reserved)",
            GPU_LABELS,
        )
        for kind in ("total", "used", "reserved", "free")
    }
    for gpu in snapshot.observation.gpus:
        labels = [str(gpu.index), gpu.uuid or "", gpu.name or ""]
        info.add_metric([*labels, gpu.state.value], 1)
        values = {
            "total": gpu.total_bytes,
            "used": gpu.used_bytes,
            "reserved": gpu.reserved_bytes,
            "free": gpu.free_bytes,
        }
        for kind, value in values.items():
            if value is not None:  # unread is absent, never a zero
                memory[kind].add_metric(labels, value)
    return [info, *memory.values()]


def predicted_rows(rank: RankView) -> list[tuple[str, int]]:
    """(component, bytes) of the predicted ledger, additive: their sum is the predicted resident bytes.

    `reserve` is the runtime reserve less `req_to_token` (which the engine carves out of it).
    """
    p = rank.predicted
    if p is None:
        return []
    rows = [(row.component, row.bytes) for row in p.weights.rows]
    rows += [
        ("kv_pool", p.kv_pool_bytes),
        ("req_to_token", p.req_to_token_bytes),
        ("reserve", max(p.reserve_bytes - p.req_to_token_bytes, 0)),
        ("context", p.context_bytes),
    ]
    return rows


def _capacity_source(engine: EngineView) -> str:
    """`logged` when the live source took the number from the engine's startup log, else `live`."""
    notes = engine.engine.live.notes
    return "logged" if any(note.startswith(LOGGED_CAPACITY_NOTE) for note in notes) else "live"


def _rank_families(snapshot: NodeSnapshot) -> list[GaugeMetricFamily]:
    predicted = _gauge(
        "kvtop_rank_predicted_bytes", "Predicted resident bytes per ledger row", (*RANK_LABELS, "component")
    )
    observed = _gauge(
        "kvtop_rank_observed_bytes", "Observed bytes on the rank's GPU by owner", (*RANK_LABELS, "kind")
    )
    capacity = _gauge(
        "kvtop_rank_token_capacity", "KV-cache token capacity by source", (*RANK_LABELS, "source")
    )
    unexplained = _gauge(
        "kvtop_rank_unexplained_bytes", "Worker bytes the prediction does not account for", RANK_LABELS
    )
    per_token = _gauge(
        "kvtop_rank_kv_bytes_per_token", "Predicted KV bytes per token on the rank", RANK_LABELS
    )
    usage = _gauge("kvtop_rank_kv_usage_ratio", "KV-cache usage the engine reports (0-1)", RANK_LABELS)
    for engine in snapshot.engines:
        for rank in engine.ranks:
            labels = [engine.engine.engine_id, rank_label(rank), str(rank.gpu_index)]
            for component, value in predicted_rows(rank):
                predicted.add_metric([*labels, component], value)
            seen = rank.observed
            if seen.process_bytes is not None:
                observed.add_metric([*labels, "process"], seen.process_bytes)
            for kind, value in (
                ("foreign", seen.foreign_bytes),
                ("orphan", seen.orphan_bytes),
                ("unattributed", seen.unattributed_bytes),
            ):
                observed.add_metric([*labels, kind], value)
            if rank.predicted is not None:
                capacity.add_metric([*labels, "predicted"], rank.predicted.token_capacity)
                per_token.add_metric(labels, rank.predicted.kv_bytes_per_token)
            if seen.token_capacity is not None:
                capacity.add_metric([*labels, _capacity_source(engine)], seen.token_capacity)
            if rank.unexplained_bytes is not None:
                unexplained.add_metric(labels, rank.unexplained_bytes)
            if seen.kv_usage_fraction is not None:
                usage.add_metric(labels, seen.kv_usage_fraction)
    return [predicted, observed, capacity, unexplained, per_token, usage]


def _text(value: Any) -> str:
    return str(getattr(value, "value", value))


def findings_family(findings: Iterable[Any]) -> GaugeMetricFamily:
    """`kvtop_findings{rule, severity}`: how many findings of each rule are open now."""
    counts: dict[tuple[str, str], int] = {}
    for finding in findings:
        key = (_text(finding.rule), _text(finding.severity))
        counts[key] = counts.get(key, 0) + 1
    family = _gauge("kvtop_findings", "Open findings by rule and severity", ("rule", "severity"))
    for (rule, severity), count in sorted(counts.items()):
        family.add_metric([rule, severity], count)
    return family


def snapshot_families(
    snapshot: NodeSnapshot, node: str, findings: Iterable[Any] | None
) -> list[GaugeMetricFamily]:
    """Every kvtop_* family for one snapshot (`findings` None: diagnose is not available)."""
    info = _gauge(
        "kvtop_node_info",
        "The node this exporter describes",
        ("node", "source", "driver_version", "nvml_state"),
    )
    obs = snapshot.observation
    info.add_metric([node, snapshot.source, obs.driver_version or "", obs.nvml_state.value], 1)
    taken = GaugeMetricFamily(
        "kvtop_snapshot_timestamp_seconds", "When the served snapshot was taken (epoch)", value=obs.taken_at
    )
    families = [info, taken, *_gpu_families(snapshot), *_rank_families(snapshot)]
    if findings is not None:
        families.append(findings_family(findings))
    return families


def default_findings() -> FindingsFn | None:
    """`kvtop.domain.diagnose.diagnose` when that module exists (it is optional for the exporter)."""
    try:
        from kvtop.domain import diagnose as diagnose_module
    except ImportError:
        return None
    found = getattr(diagnose_module, "diagnose", None)
    return found if callable(found) else None


class SnapshotCollector(Collector):
    """Holds the last snapshot; `refresh()` collects a new one, `collect()` serves the held one."""

    def __init__(self, source: SnapshotSource, *, node: str, findings: FindingsFn | None = None,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.source = source
        self.node = node
        self._findings_fn = findings
        self._clock = clock
        self._lock = threading.Lock()
        self._families: list[GaugeMetricFamily] = []
        self._ok = False
        self._error: str | None = None
        self._duration_s = 0.0
        self._last_success: float | None = None

    def refresh(self) -> bool:
        """Collect once; on failure keep the last numbers and remember why. True when it succeeded."""
        started = time.perf_counter()
        try:
            snapshot = self.source.collect()
            findings = tuple(self._findings_fn(snapshot)) if self._findings_fn else None
            families = snapshot_families(snapshot, self.node, findings)
        except Exception as err:  # any failure of the source is reported in the metrics, not raised
            with self._lock:
                self._ok, self._error = False, redact_text(f"{type(err).__name__}: {err}")
                self._duration_s = time.perf_counter() - started
            print(f"kvtop export: collection failed: {self._error}", file=sys.stderr)
            return False
        with self._lock:
            self._families, self._ok, self._error = families, True, None
            self._duration_s = time.perf_counter() - started
            self._last_success = self._clock()
        return True

    @property
    def last_error(self) -> str | None:
        return self._error

    def collect(self) -> Iterator[GaugeMetricFamily]:
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


class Exporter:
    """The collector, its refresh thread and the HTTP server; `close()` stops both."""

    def __init__(self, collector: SnapshotCollector, address: ListenAddress, interval_s: float) -> None:
        if interval_s <= 0:
            raise InputError(f"must be positive (got {interval_s})", field="--interval")
        self.collector = collector
        self.interval_s = interval_s
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)
        self._stop = threading.Event()
        self._closed = False
        collector.refresh()  # the first scrape already has numbers
        try:
            self._server, self._server_thread = start_http_server(
                address.port, addr=address.host, registry=self.registry
            )
        except OSError as err:
            raise InputError(
                f"cannot listen on {address.host}:{address.port}: {err.strerror or err}", field="--listen"
            ) from err
        self.port: int = self._server.server_port
        self._refresher = threading.Thread(
            target=self._refresh_loop, name="kvtop-export-refresh", daemon=True
        )
        self._refresher.start()

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
        self._server.shutdown()
        self._server.server_close()
        self._refresher.join(timeout=5)
