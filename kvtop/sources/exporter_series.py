"""A `NodeSnapshot` as Prometheus metric families: the one place that turns a snapshot into series.

Every family is a gauge named `kvtop_…` with its unit as suffix (`_bytes`, `_seconds`, `_ratio`);
names and labels are documented in docs/metrics.md. A new family is a function of the snapshot
added to `SNAPSHOT_FAMILIES`. `labelled` adds labels every series of a page carries (`demo="1"`
on a simulated node), so no builder has to remember them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kvtop.domain.capacity import CapacitySource
from kvtop.domain.deployment import Charge
from kvtop.domain.ledger import layout_from_settings
from kvtop.domain.node import EngineView, NodeSnapshot, RankView
from kvtop.domain.placement import span_of
from kvtop.domain.span import ranks_label

GPU_LABELS = ("gpu", "uuid", "name")
RANK_LABELS = ("engine", "rank", "gpu")
DEMO_SOURCE_PREFIX = "demo:"  # SnapshotSource.label and NodeSnapshot.source of a simulated node
DEMO_LABELS = {"demo": "1"}

FamilyBuilder = Callable[[NodeSnapshot], list[GaugeMetricFamily]]


def is_demo_source(source_label: str) -> bool:
    """True for a simulated node (`demo:<scenario>`): its series must never pass for a real one."""
    return source_label.startswith(DEMO_SOURCE_PREFIX)


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
    """(component, bytes) of the predicted ledger, additive: their sum is the predicted worker as NVML counts it
    (`RankView.worker_prediction`, the TUI ledger's "= worker" row).

    `reserve` is the runtime reserve less `req_to_token` (which the engine carves out of it); the deployment's
    resident terms (a draft's weights, redundant experts, LoRA slots) are one row per feature, named by it.
    `context` is the worker's (the ledger's "context, NCCL"): the driver's reserved bytes are the GPU's
    (`kvtop_gpu_memory_reserved_bytes`), never counted here too.
    """
    p, worker = rank.predicted, rank.worker_prediction
    if p is None or worker is None:
        return []
    rows = [(row.component, row.bytes) for row in p.weights.rows]
    features: dict[str, int] = {}
    for term in p.terms:
        if term.charge is Charge.RESIDENT and term.modelled and term.bytes:
            features[term.feature.value] = features.get(term.feature.value, 0) + term.bytes
    rows += sorted(features.items())
    rows += [
        ("kv_pool", p.kv_pool_bytes),
        ("req_to_token", p.req_to_token_bytes),
        ("reserve", max(p.reserve_bytes - p.req_to_token_bytes, 0)),
        ("context", worker.context_bytes),
    ]
    return rows


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
    change = _gauge(
        "kvtop_rank_capacity_change_tokens",
        "Tokens each cause adds to (or, negative, takes from) the clean capacity; clean + sum == actual",
        (*RANK_LABELS, "cause"),
    )
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
            waterfall = rank.capacity
            if rank.predicted is not None:
                # "predicted" is what every view calls predicted: the explained ledger's rank (RankView.predicted)
                capacity.add_metric([*labels, "predicted"], rank.predicted.token_capacity)
                per_token.add_metric(labels, rank.predicted.kv_bytes_per_token)
            if waterfall is not None:
                capacity.add_metric([*labels, "clean"], waterfall.clean_tokens)
                capacity.add_metric([*labels, "explained"], waterfall.explained_tokens)
                if waterfall.actual_source is not CapacitySource.PREDICTED:
                    capacity.add_metric([*labels, waterfall.actual_source.value], waterfall.actual_tokens)
                for term in waterfall.terms:
                    change.add_metric([*labels, term.cause.value], term.tokens)
            elif seen.token_capacity is not None:
                capacity.add_metric([*labels, CapacitySource.LIVE.value], seen.token_capacity)
            if rank.unexplained_bytes is not None:
                unexplained.add_metric(labels, rank.unexplained_bytes)
            if seen.kv_usage_fraction is not None:
                usage.add_metric(labels, seen.kv_usage_fraction)
    return [predicted, observed, capacity, change, unexplained, per_token, usage]


ENGINE_INFO_LABELS = (
    "engine", "kind", "model", "rendezvous", "nnodes", "node_rank", "serves_api", "role", "transfer",
    "layout", "ranks_here", "ranks", "context_length", "pools", "not_joined", "tightest_gpu", "tightest_rank",
    "release", "release_source",
)  # fmt: skip


def engine_info_labels(view: EngineView) -> list[str]:
    """`kvtop_engine_info`'s label values: the engine this node's part belongs to, by its launch's own flags
    (`kvtop.domain.span`), which of its ranks run here, and the release whose rules solved it with how kvtop knows
    it (the ledger's `version`: its label and source, 'log', 'endpoint', 'flag' …; empty where nothing was solved)."""
    engine, ledger = view.engine, view.ledger
    span = span_of(engine.kind, engine.settings)
    layout = ledger.layout if ledger else (layout_from_settings(engine.settings) if engine.settings else None)
    positions = [(r.rank.dp, r.rank.pp, r.rank.tp) for r in view.ranks]
    ranks = ranks_label(positions, show_dp=bool(layout and layout.dp > 1), show_pp=bool(layout and layout.pp > 1))
    return [
        engine.engine_id, engine.kind, span.served_model or "", span.rendezvous or "", str(span.nnodes),
        str(span.node_rank), "1" if span.serves_api else "0", span.role.value, span.transfer or "",
        layout.describe() if layout else "", str(len(view.ranks)), ranks if view.ranks else "",
        str(ledger.context_length) if ledger else "", str(layout.replicas * layout.attn_dp) if layout else "",
        span.not_modelled or "",
        str(tight.gpu_index) if (tight := view.tightest_rank) else "", rank_label(tight) if tight else "",
        ledger.version.label if ledger else "", ledger.version.source.value if ledger else "",
    ]  # fmt: skip


def _engine_families(snapshot: NodeSnapshot) -> list[GaugeMetricFamily]:
    info = _gauge("kvtop_engine_info", "One per engine: the engine its ranks here belong to, across nodes",
                  ENGINE_INFO_LABELS)  # fmt: skip
    for view in snapshot.engines:
        info.add_metric(engine_info_labels(view), 1)
    return [info]


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


# The snapshot's families after kvtop_node_info and kvtop_snapshot_timestamp_seconds, in page order.
SNAPSHOT_FAMILIES: tuple[FamilyBuilder, ...] = (_gpu_families, _engine_families, _rank_families)


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
    families = [info, taken, *(family for build in SNAPSHOT_FAMILIES for family in build(snapshot))]
    if findings is not None:
        families.append(findings_family(findings))
    return families


def labelled(family: Metric, labels: Mapping[str, str]) -> Metric:
    """`family` with `labels` added to every sample (the family itself when there are none)."""
    if not labels:
        return family
    copy = Metric(family.name, family.documentation, family.type, family.unit)
    for sample in family.samples:
        copy.add_sample(
            sample.name, {**sample.labels, **labels}, sample.value, sample.timestamp, sample.exemplar
        )
    return copy
