"""Prometheus's answers joined into the cluster (pure: no I/O): one `ClusterNode` per host, from kvtop's
exporter, DCGM and each engine's own series, and the engines joined across nodes (split out of prometheus.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kvtop.domain.cluster import (
    ClusterEngine,
    ClusterGpu,
    ClusterNode,
    ClusterTarget,
    ClusterView,
    GpuSource,
    IgnoredSample,
    TargetHealth,
    rank_nodes,
)
from kvtop.domain.cluster_engines import group_disaggregated, join_engines
from kvtop.domain.cluster_metrics import join_metric_samples
from kvtop.sources.prometheus_engines import engine_pieces, metric_samples, metrics_tokens
from kvtop.sources.prometheus_gpus import NodeGpuReport, dcgm_host, gpu_lists, gpu_summaries
from kvtop.sources.prometheus_parse import Series, typed_answers
from kvtop.sources.prometheus_queries import CAPACITY_KEYS, DEMO_ENGINE_PAGE, ENGINE_METRICS, ENGINE_REPORTED


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
    node_names = set(names.values())
    nodes: dict[str, _NodeParts] = {}

    def node_of(instance: str) -> str:
        known = names.get(instance)
        if known is None:  # remembered: 1,000 nodes' answers ask it ~13,000 times of ~2,000 instances
            host = _host(instance)
            # no exporter scraped at this host, but a node is named it (DCGM scraped by address, its
            # `Hostname` the name an engine is scraped by): the engine is on that node
            aliases = by_host.get(host) or ({host} if host in node_names else set())
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
        key = CAPACITY_KEYS.get(source or "") or ("live_token_capacity" if source in ENGINE_REPORTED else None)
        if key is None:
            continue  # explained: the same figure as predicted
        engine[key] = min(int(value), engine.get(key, int(value)))
    for labels, value in answers.get("usage", []):  # the exporter's highest rank's usage is the engine's here
        instance = labels.get("instance", "")
        used = parts(node_of(instance), instance).engines.get((instance, labels.get("engine", "?")))
        if used is not None and 0 <= value <= 1:
            used["kv_usage_fraction"] = value
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
