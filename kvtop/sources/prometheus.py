"""A whole cluster through a Prometheus server's HTTP API (`/api/v1/query`), with httpx.

Reads DCGM-exporter framebuffer series (MiB; host label `Hostname` or `hostname`), each engine's own
KV gauges (the names its package declares: `usage_metrics`, `capacity_metrics`), and kvtop's own exporter series (aggregated server-side per instance), and
joins them into one `ClusterNode` per host. Every failure is a `PrometheusError` with a named
`PrometheusState`; a bearer token is sent but never shown, and TLS is always verified.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import httpx

from kvtop.domain.capacity import CapacitySource
from kvtop.domain.cluster import (
    ClusterEngine,
    ClusterGpu,
    ClusterNode,
    ClusterTarget,
    ClusterView,
    GpuSource,
    IgnoredSample,
    PrometheusState,
    SampleLie,
    TargetHealth,
    rank_nodes,
)
from kvtop.domain.cluster_engines import group_disaggregated, join_engines
from kvtop.domain.cluster_metrics import join_metric_samples
from kvtop.domain.engines.registry import engine_metrics
from kvtop.domain.errors import InputError, KvtopError
from kvtop.domain.redact import redact_mapping
from kvtop.gc_pause import collector_paused
from kvtop.sources.bounded_http import (
    AnswerTooLarge,
    Deadline,
    DeadlineExpired,
    UnreadableEncoding,
    read_bounded,
)
from kvtop.sources.prometheus_access import TOKEN_ENV, redact_url, tls_context
from kvtop.sources.prometheus_engines import ENGINE_QUERIES, engine_pieces, metric_samples, metrics_tokens
from kvtop.sources.prometheus_gpus import (
    GPU_LIST_QUERIES,
    GPU_SUMMARY_QUERIES,
    NodeGpuReport,
    dcgm_host,
    gpu_lists,
    gpu_summaries,
)
from kvtop.sources.prometheus_memory import AnswerMemory

_MAX_SAMPLE = 2.0**63  # bytes, tokens, ages: a sample beyond int64 is an overflow, never a figure
DEFAULT_STALE_AFTER_S = 120.0
MAX_ANSWER_BYTES = 64 << 20  # one query's JSON, inflated: a 1,000-node cluster's answer is a few MiB
#: `kvtop_rank_token_capacity{source}` values that are the engine's own figure (not kvtop's prediction)
ENGINE_REPORTED = (CapacitySource.LIVE.value, CapacitySource.LOGGED.value)

#: the demo scenario of a node seen only through a demo engine's own page (its series carry demo="1")
DEMO_ENGINE_PAGE = "engine metrics page"
ENGINE_METRICS = engine_metrics()  # name -> (engine, states the token capacity; else the KV usage share)

QUERIES = {
    "up": "up",
    "age": "time() - timestamp(up)",
    "snapshot_age": "time() - max by (instance) (kvtop_snapshot_timestamp_seconds)",
    "node": "kvtop_node_info",
    **GPU_SUMMARY_QUERIES,  # each node's GPUs summed by the server (prometheus_gpus.py)
    "unexplained": "sum by (instance) (kvtop_rank_unexplained_bytes)",
    "findings": "sum by (instance, severity) (kvtop_findings)",
    # the tightest rank of each engine on each node, per source, with its rank and GPU labels
    "capacity": "bottomk by (instance, engine, source) (1, kvtop_rank_token_capacity)",
    "engine": '{__name__=~"' + "|".join(ENGINE_METRICS) + '"}',  # every engine's own KV gauges
}
QUERIES |= ENGINE_QUERIES  # each node's part of every engine (prometheus_engines.py)
#: every query kvtop may send: the refresh's, and every GPU's series for `kvtop cluster --gpus`
ALL_QUERIES = QUERIES | GPU_LIST_QUERIES
#: kvtop's own capacity sources, by the `ClusterEngine` field each fills
_CAPACITY_KEYS = {"clean": "clean_token_capacity", "predicted": "predicted_token_capacity"}


class PrometheusError(KvtopError):
    """Prometheus could not answer; `state` names why (the message never holds the token)."""

    def __init__(self, state: PrometheusState, message: str) -> None:
        self.state = state
        super().__init__(f"prometheus {state.value}: {message}")


Series = list[tuple[dict[str, str], float]]


def _all_text(labels: dict[Any, Any]) -> bool:
    """Every label value is text: `str.join` refuses any other type (a 1,000-node answer holds 70,000 series)."""
    try:
        "".join(labels.values())
    except TypeError:
        return False
    return True


def _vector(payload: Any, expr: str, *, keep_nan: bool = False) -> Series:
    """The (labels, value) pairs of an instant-vector answer, typed at the door: labels are text, values
    numbers below 2^63 (NaN samples dropped, or kept with `keep_nan` for the caller to name); anything
    else is a BAD_PAYLOAD naming the query."""
    if not isinstance(payload, dict) or "status" not in payload:
        raise PrometheusError(PrometheusState.BAD_PAYLOAD, f"not a Prometheus API answer for {expr!r}")
    if payload["status"] != "success":
        kind, message = str(payload.get("errorType", "error"))[:40], str(payload.get("error", "no message"))
        raise PrometheusError(PrometheusState.QUERY_ERROR, f"{kind}: {message[:200]} (query {expr!r})")
    data = payload.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("resultType") != "vector" or not isinstance(result, list):
        got = str(data.get("resultType"))[:40] if isinstance(data, dict) else type(data).__name__
        raise PrometheusError(PrometheusState.BAD_PAYLOAD, f"expected a vector for {expr!r}, got {got!r}")
    series: Series = []
    for item in result:
        labels = item.get("metric") if isinstance(item, dict) else None
        pair = item.get("value") if isinstance(item, dict) else None
        if not (
            isinstance(labels, dict)
            and _all_text(labels)
            and isinstance(pair, list)
            and len(pair) == 2
            and isinstance(pair[1], str)
        ):
            raise PrometheusError(PrometheusState.BAD_PAYLOAD, f"malformed sample in {expr!r}: {str(item)[:80]}")
        try:
            number = float(pair[1])
        except ValueError:
            number = math.inf
        if number != number and not keep_nan:  # NaN samples say nothing
            continue
        if number == number and not abs(number) < _MAX_SAMPLE:
            raise PrometheusError(
                PrometheusState.BAD_PAYLOAD, f"sample {pair[1][:40]!r} in {expr!r} is no figure kvtop reads"
            )
        series.append((_shown_labels(labels), number))
    return series


#: a label longer than this (name and value) is redacted every time rather than remembered
_REMEMBERED_LABEL_CHARS = 256


@lru_cache(maxsize=1 << 16)
def _shown_label(name: str, value: str) -> tuple[str, str]:
    """One label as `redact_mapping` shows it (it treats each pair on its own), remembered: a refresh reads
    the same labels again, and a 1,000-node answer holds about 50,000 of them."""
    ((shown_name, shown_value),) = redact_mapping({name: value}).items()
    return shown_name, str(shown_value)


def _shown_labels(labels: dict[str, str]) -> dict[str, str]:
    """Label names and values as kvtop may show them: a value under a secret's name masked, any secret
    of a known shape masked, and each one terminal-safe line (a peer chooses its labels)."""
    shown = {}
    for name, value in labels.items():
        if len(name) + len(value) <= _REMEMBERED_LABEL_CHARS:
            name, value = _shown_label(name, value)
        else:
            name, value = _shown_label.__wrapped__(name, value)
        shown[name] = value
    return shown


def _decoded(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


class PrometheusClient:
    """Instant queries against one Prometheus server (bearer token optional, TLS verified)."""

    def __init__(self, url: str, *, token: str | None = None, timeout_s: float = 5.0,
                 ca_file: str | None = None, transport: httpx.BaseTransport | None = None) -> None:  # fmt: skip
        if urlsplit(url).scheme not in ("http", "https"):
            raise InputError(
                f"expected an http:// or https:// URL, got {redact_url(url)!r}", field="--prometheus"
            )
        self.url = url.rstrip("/")
        self.shown_url = redact_url(self.url)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(
            headers=headers, timeout=timeout_s, transport=transport,
            verify=tls_context(ca_file) if ca_file else True,
        )
        self.timeout_s = timeout_s
        self._memory = AnswerMemory()

    def close(self) -> None:
        self._http.close()

    def query(self, expr: str, deadline: Deadline | None = None, *, keep_nan: bool = False) -> Series:
        """One instant query, read within the per-request timeout, `deadline` and MAX_ANSWER_BYTES
        (NaN samples dropped, or kept with `keep_nan`)."""
        url = f"{self.url}/api/v1/query"
        try:
            answer = read_bounded(
                self._http, url, timeout_s=self.timeout_s, deadline=deadline,
                max_bytes=MAX_ANSWER_BYTES, params={"query": expr},
            )  # fmt: skip
        except DeadlineExpired as err:
            seconds = deadline.seconds if deadline is not None else self.timeout_s
            raise PrometheusError(
                PrometheusState.TIMEOUT,
                f"{self.shown_url} gave no whole answer within --timeout {seconds:g} s",
            ) from err
        except httpx.TimeoutException as err:
            raise PrometheusError(
                PrometheusState.TIMEOUT, f"{self.shown_url} did not answer within {self.timeout_s:g} s"
            ) from err
        except (AnswerTooLarge, UnreadableEncoding) as err:
            raise PrometheusError(PrometheusState.BAD_PAYLOAD, f"{self.shown_url}: {err}") from err
        except httpx.HTTPError as err:
            raise PrometheusError(
                PrometheusState.UNREACHABLE, f"cannot reach {self.shown_url} ({type(err).__name__})"
            ) from err
        if answer.status_code in (401, 403):
            raise PrometheusError(PrometheusState.UNAUTHORIZED, f"{self.shown_url} refused the request (HTTP {answer.status_code}); "
                                  f"give a token with --token-file or ${TOKEN_ENV}")  # fmt: skip
        if answer.status_code < 400:  # the series typed last time when only the evaluation stamp moved
            return self._memory.typed((expr, keep_nan), answer.content,
                                      lambda: _vector(_decoded(answer.content), expr, keep_nan=keep_nan))  # fmt: skip
        payload = _decoded(answer.content)
        if answer.status_code >= 400 and not (isinstance(payload, dict) and payload.get("status") == "error"):
            raise PrometheusError(
                PrometheusState.HTTP_ERROR, f"{self.shown_url} answered HTTP {answer.status_code}"
            )
        return _vector(payload, expr, keep_nan=keep_nan)


def _host(instance: str) -> str:
    return instance.rsplit(":", 1)[0] if instance.count(":") == 1 or instance.startswith("[") else instance


@dataclass
class _NodeParts:
    """What accumulates for one node while the answers are joined."""

    instances: set[str] = field(default_factory=set)
    engines: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    unexplained: int | None = None
    findings: dict[str, int] = field(default_factory=dict)
    has_kvtop: bool = False
    demo_scenario: str | None = None  # kvtop export there serves a --demo scenario
    gpus: NodeGpuReport | None = None
    gpu_list: list[ClusterGpu] | None = None  # every GPU, when asked for


class ClusterReader:
    """Reads the cluster: `read()` runs the queries in QUERIES (and GPU_LIST_QUERIES with `gpus`) and joins
    them per node."""

    def __init__(self, client: PrometheusClient, *, stale_after_s: float = DEFAULT_STALE_AFTER_S,
                 clock: Callable[[], float] = time.time, deadline_s: float | None = None, gpus: bool = False) -> None:  # fmt: skip
        self.client = client
        self.deadline_s = deadline_s
        self.stale_after_s = stale_after_s
        self.gpus = gpus  # also read every GPU's series (`ClusterNode.gpus`); the node list needs only the sums
        self._clock = clock

    def read(self) -> ClusterView:
        """Every query's answer within one deadline (`deadline_s`; None: each query its own timeout).

        When the deadline runs out after some answers came, the view is built from those and names
        the missing ones (`missing`); with no answer at all it is a TIMEOUT error."""
        with collector_paused():  # ~100,000 acyclic objects per refresh at 1,000 nodes (kvtop/gc_pause.py)
            return self._read()

    def _read(self) -> ClusterView:
        deadline = Deadline(self.deadline_s) if self.deadline_s is not None else None
        queries = ALL_QUERIES if self.gpus else QUERIES
        answers: dict[str, Series] = {}
        missing: list[str] = []
        for key, expr in queries.items():
            if missing:  # the deadline has passed: the rest cannot be asked
                missing.append(key)
                continue
            try:
                answers[key] = self.client.query(expr, deadline, keep_nan=True)
            except PrometheusError as err:
                if err.state is not PrometheusState.TIMEOUT or deadline is None or not deadline.expired:
                    raise
                if not answers:
                    raise
                missing.append(key)
        view = join_answers(
            {key: answers.get(key, []) for key in queries}, url=self.client.shown_url, taken_at=self._clock(),
            stale_after_s=self.stale_after_s, gpus=self.gpus,
        )  # fmt: skip
        if not missing:
            return view
        return view.model_copy(update={"missing": tuple(missing), "deadline_s": self.deadline_s})


def _node_names(answers: Mapping[str, Series]) -> tuple[dict[str, str], dict[str, set[str]]]:
    """instance → node name (kvtop's node label, DCGM's host label), and host → node names."""
    names: dict[str, str] = {}
    for labels, _ in answers["node"]:
        if labels.get("instance") and labels.get("node"):
            names[labels["instance"]] = labels["node"]
    for labels, _ in answers["dcgm_gpus"]:
        host = dcgm_host(labels)
        if labels.get("instance") and host:
            names.setdefault(labels["instance"], host)
    by_host: dict[str, set[str]] = {}
    for instance, name in names.items():
        by_host.setdefault(_host(instance), set()).add(name)
    return names, by_host


def join_answers(
    answers: Mapping[str, Series], *, url: str, taken_at: float, stale_after_s: float, gpus: bool = False
) -> ClusterView:
    """Join the answers of QUERIES (and, with `gpus`, GPU_LIST_QUERIES) into nodes, worst-first (pure: no
    I/O). Samples that cannot be true (NaN, negative bytes or ages, `up` neither 0 nor 1) are named in
    `ignored` and not used."""
    answers, ignored = typed_answers(answers)
    names, by_host = _node_names(answers)
    nodes: dict[str, _NodeParts] = {}

    def node_of(instance: str) -> str:
        known = names.get(instance)
        if known is None:  # remembered: 1,000 nodes' answers ask it ~13,000 times of ~2,000 instances
            aliases = by_host.get(_host(instance), set())
            known = names[instance] = next(iter(aliases)) if len(aliases) == 1 else instance
        return known

    def parts(name: str, instance: str) -> _NodeParts:
        node = nodes.get(name)
        if node is None:
            node = nodes[name] = _NodeParts()
        if instance:
            node.instances.add(instance)
        return node

    for name, report in gpu_summaries(answers, node_of).items():
        node = parts(name, "")
        node.instances.update(report.instances)
        node.gpus = report
        node.has_kvtop = node.has_kvtop or (report.summary is not None and report.summary.source is GpuSource.KVTOP)
    if gpus:
        for name, (instances, listed) in gpu_lists(answers, node_of).items():
            node = parts(name, "")
            node.instances.update(instances)
            node.gpu_list = listed
    for labels, _ in answers["node"]:
        node = parts(node_of(labels.get("instance", "")), labels.get("instance", ""))
        node.has_kvtop = True
        node.demo_scenario = _demo_scenario(labels) or node.demo_scenario
    for labels, value in answers["unexplained"]:
        node = parts(node_of(labels.get("instance", "")), labels.get("instance", ""))
        node.unexplained = (node.unexplained or 0) + int(value)
    for labels, value in answers["findings"]:
        node = parts(node_of(labels.get("instance", "")), labels.get("instance", ""))
        severity = labels.get("severity", "unknown")
        node.findings[severity] = node.findings.get(severity, 0) + int(value)
    for labels, value in answers["capacity"]:
        instance = labels.get("instance", "")
        engine = parts(node_of(instance), instance).engines.setdefault(
            (instance, labels.get("engine", "?")), {"source": "kvtop"}
        )
        source = labels.get("source")
        key = _CAPACITY_KEYS.get(source or "") or ("live_token_capacity" if source in ENGINE_REPORTED else None)
        if key is None:
            continue  # explained: the same figure as predicted
        engine[key] = min(int(value), engine.get(key, int(value)))
    for labels, value in answers["engine"]:
        instance = labels.get("instance", "")
        kind, states_capacity = ENGINE_METRICS.get(labels.get("__name__", ""), ("?", False))
        node_parts = parts(node_of(instance), instance)
        if labels.get("demo") == "1" and node_parts.demo_scenario is None:  # a demo engine's own page
            node_parts.demo_scenario = DEMO_ENGINE_PAGE
        on_node = node_parts.engines
        engine = on_node.get((instance, kind)) or on_node.setdefault((instance, kind), {"source": kind})
        if states_capacity:  # the engine's own reading (vLLM's is in its info gauge's labels)
            tokens = metrics_tokens(kind, labels, value)
            if tokens is not None:
                engine["live_token_capacity"] = min(tokens, engine.get("live_token_capacity", tokens))
        else:  # the highest rank's usage is the engine's
            engine["kv_usage_fraction"] = max(value, engine.get("kv_usage_fraction", value))
    pieces = engine_pieces(answers, node_of)
    reported = {(piece.node, piece.span.kind) for piece in pieces}
    pieces += join_metric_samples(metric_samples(answers["engine"], node_of, ENGINE_METRICS, reported))
    engines = join_engines(pieces)
    return ClusterView(prometheus_url=url, taken_at=taken_at, ignored=ignored,
                       nodes=rank_nodes(_build_nodes(nodes, answers, node_of, stale_after_s, ignored)),
                       engines=engines, disaggregated=group_disaggregated(engines))  # fmt: skip


# Queries whose samples are bytes, counts, tokens or ages (never below zero), and fractions (0–1).
_NON_NEGATIVE = ("dcgm", "gpu", "findings", "capacity", *GPU_SUMMARY_QUERIES)
_AGES = ("age", "snapshot_age")


def typed_answers(answers: Mapping[str, Series]) -> tuple[dict[str, Series], tuple[IgnoredSample, ...]]:
    """The answers with every sample that cannot be true taken out (an `up` neither 0 nor 1 is kept:
    its target is INVALID), and each such sample named."""
    kept: dict[str, Series] = {}
    ignored: list[IgnoredSample] = []
    for key, series in answers.items():
        kept[key] = []
        for labels, value in series:
            lie = _lie(key, labels, value)
            if lie is not None:
                ignored.append(IgnoredSample(query=key, instance=labels.get("instance", ""), lie=lie, value=f"{value:g}"))
            if lie is None or lie is SampleLie.NOT_UP_OR_DOWN:
                kept[key].append((labels, value))
    return kept, tuple(ignored)


def _lie(key: str, labels: Mapping[str, str], value: float) -> SampleLie | None:
    if value != value:
        return SampleLie.NOT_A_NUMBER
    if key == "up":
        return None if value in (0.0, 1.0) else SampleLie.NOT_UP_OR_DOWN
    if key in _AGES:
        return SampleLie.FUTURE if value < 0 else None
    if key == "engine" and ENGINE_METRICS.get(labels.get("__name__", ""), ("", True))[1] is False:
        return None if 0.0 <= value <= 1.0 else SampleLie.OUT_OF_RANGE
    if key in _NON_NEGATIVE or key == "engine":
        return SampleLie.NEGATIVE if value < 0 else None
    return None


def _demo_scenario(labels: Mapping[str, str]) -> str | None:
    """The scenario of a kvtop exporter serving a demo node (`source="demo:<scenario>"` or
    `demo="1"` on kvtop_node_info), else None."""
    source = labels.get("source", "")
    if source.startswith("demo:"):
        return source.removeprefix("demo:")
    return "unnamed" if labels.get("demo") == "1" else None


def _targets(answers: Mapping[str, Series], stale_after_s: float) -> list[ClusterTarget]:
    """`up` per target; its age is the older of the last scrape and, for kvtop, the served snapshot."""
    ages = {(labels.get("job", ""), labels.get("instance", "")): value for labels, value in answers["age"]}
    snapshot_ages = {labels.get("instance", ""): value for labels, value in answers["snapshot_age"]}
    targets = []
    for labels, value in answers["up"]:
        key = (labels.get("job", ""), labels.get("instance", ""))
        known = [a for a in (ages.get(key), snapshot_ages.get(key[1])) if a is not None]
        age = max(known) if known else None
        health = (
            TargetHealth.DOWN
            if value == 0
            else TargetHealth.INVALID
            if value != 1
            else TargetHealth.STALE
            if age is not None and age > stale_after_s
            else TargetHealth.UP
        )
        targets.append(ClusterTarget(job=key[0], instance=key[1], health=health, age_seconds=age))
    return targets


def _build_nodes(nodes: dict[str, _NodeParts], answers: Mapping[str, Series], node_of: Callable[[str], str],
                 stale_after_s: float, ignored: tuple[IgnoredSample, ...] = ()) -> list[ClusterNode]:  # fmt: skip
    by_node: dict[str, list[ClusterTarget]] = {}
    for target in _targets(answers, stale_after_s):
        name = node_of(target.instance)
        if (
            name in nodes or target.health is not TargetHealth.UP
        ):  # a down target with no data is still listed
            nodes.setdefault(name, _NodeParts()).instances.add(target.instance)
            by_node.setdefault(name, []).append(target)
    built = []
    for name, node in nodes.items():
        notes = [] if node.has_kvtop else ["no kvtop exporter: predictions and findings unavailable"]
        if node.demo_scenario == DEMO_ENGINE_PAGE:
            notes.append("simulated: a demo engine's own /metrics page (series demo=\"1\"), not a real engine")
        elif node.demo_scenario is not None:
            notes.append(
                f"simulated: kvtop export serves the demo scenario '{node.demo_scenario}', not this host's GPUs"
            )
        notes += [f"target {t.instance} ({t.job}) {t.health.value}" + (f", last sample {t.age_seconds:.0f} s ago" if t.age_seconds is not None else "")
                  for t in by_node.get(name, []) if t.health is not TargetHealth.UP]  # fmt: skip
        if node.gpus is not None and node.gpus.note:
            notes.append(node.gpus.note)
        notes += [sample.text for sample in ignored if sample.instance and sample.instance in node.instances]
        built.append(ClusterNode(
            name=name, targets=tuple(sorted(by_node.get(name, []), key=lambda t: t.instance)),
            gpu_summary=node.gpus.summary if node.gpus is not None else None,
            gpus=tuple(node.gpu_list) if node.gpu_list is not None else None,
            engines=tuple(ClusterEngine(instance=i, engine=e, **v) for (i, e), v in sorted(node.engines.items())),
            unexplained_bytes=node.unexplained, findings=dict(sorted(node.findings.items())), notes=tuple(notes),
            demo_scenario=node.demo_scenario,
        ))  # fmt: skip
    return built
