"""Each node's part of every engine, from kvtop's exporter series in Prometheus: `EnginePiece`s to join.

`kvtop_engine_info` says which engine a node's ranks belong to (its launch's own identity: rendezvous,
node rank, served model, prefill or decode); `bottomk(1, kvtop_rank_token_capacity)` per engine and
source names the tightest rank of each node's part with its GPU; `kvtop_rank_capacity_change_tokens` of
that rank gives its waterfall. Labels are read at the door: a count that is no number is unknown
(None), a role or cause kvtop does not know is left out, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from kvtop.domain.capacity import CapacityCause
from kvtop.domain.cluster_engines import EXPLAINED, PREDICTED, EnginePiece
from kvtop.domain.cluster_metrics import MetricsSample
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.span import EngineSpan, EngineSpanRule, MetricsRank, ServingRole

Series = list[tuple[dict[str, str], float]]

#: the queries this module reads besides the cluster reader's `capacity` (the tightest rank per engine, node
#: and source: `bottomk by (instance, engine, source) (1, kvtop_rank_token_capacity)`)
ENGINE_QUERIES = {
    "engine_info": "kvtop_engine_info",
    "terms": (
        "kvtop_rank_capacity_change_tokens and on (instance, engine, rank) "
        'bottomk by (instance, engine) (1, kvtop_rank_token_capacity{source="explained"})'
    ),
    "usage": "max by (instance, engine) (kvtop_rank_kv_usage_ratio)",
}
# an exporter before the one name (cause="unexplained") still says the engine's figure against the prediction
_CAUSES = {cause.value: cause for cause in CapacityCause} | {"unexplained": CapacityCause.ENGINE_VS_PREDICTION}
_ROLES = {role.value: role for role in ServingRole}


def _count(text: str | None, least: int) -> int | None:
    return int(text) if text and text.isdigit() and len(text) <= 9 and int(text) >= least else None


def served_model(labels: Mapping[str, str]) -> str | None:
    """The model a `kvtop_engine_info` series names (its `model` label; empty: none named) — the one reader, for
    the cluster's rows and a node's engines alike."""
    return labels.get("model") or None


def _span(labels: Mapping[str, str]) -> EngineSpan:
    nnodes, node_rank = _count(labels.get("nnodes"), 1), _count(labels.get("node_rank"), 0)
    return EngineSpan(
        kind=labels.get("kind") or "?", served_model=served_model(labels),
        rendezvous=labels.get("rendezvous") or None, nnodes=nnodes or 1, node_rank=node_rank or 0,
        serves_api=labels.get("serves_api", "1") != "0", role=_ROLES.get(labels.get("role", ""), ServingRole.WHOLE),
        transfer=labels.get("transfer") or None,
        not_modelled=labels.get("not_joined") or (None if nnodes is not None and node_rank is not None
                                                  else "its exporter's node labels are no numbers"),
    )  # fmt: skip


def engine_pieces(answers: Mapping[str, Series], node_of: Callable[[str], str]) -> list[EnginePiece]:
    """One piece per `kvtop_engine_info` series, with its tightest rank, capacities, terms and usage."""
    parts: dict[tuple[str, str], dict[str, Any]] = {}
    for labels, _ in answers.get("engine_info", []):
        instance, engine = labels.get("instance", ""), labels.get("engine", "?")
        parts[(instance, engine)] = {
            "node": node_of(instance), "instance": instance, "engine_id": engine, "span": _span(labels),
            "layout": labels.get("layout") or None, "ranks_here": _count(labels.get("ranks_here"), 0),
            "ranks_label": labels.get("ranks") or None, "context_length": _count(labels.get("context_length"), 1),
            "pools": _count(labels.get("pools"), 1) or 1, "capacity": {}, "terms": {},
        }  # fmt: skip
    tightest_of: dict[tuple[str, str], tuple[str, str, str]] = {}  # (rank, gpu, source) of the tightest rank
    for labels, value in answers.get("capacity", []):
        part = parts.get((labels.get("instance", ""), labels.get("engine", "?")))
        source = labels.get("source", "")
        if part is None or not source:
            continue
        part["capacity"][source] = int(value)
        key = (part["instance"], part["engine_id"])
        if source == EXPLAINED or (source == PREDICTED and key not in tightest_of):
            tightest_of[key] = (labels.get("rank", ""), labels.get("gpu", ""), source)
    for key, (rank, gpu, _) in tightest_of.items():
        parts[key].update(tightest_rank=rank or None, tightest_gpu=gpu or None)
    for labels, _ in answers.get("engine_info", []):  # the node's own clearly least free GPU wins (EngineView)
        part = parts[(labels.get("instance", ""), labels.get("engine", "?"))]
        if labels.get("tightest_gpu"):
            part.update(tightest_gpu=labels["tightest_gpu"], tightest_rank=labels.get("tightest_rank") or None,
                        tightest_clear=True)
    for labels, value in answers.get("terms", []):
        part = parts.get((labels.get("instance", ""), labels.get("engine", "?")))
        cause = _CAUSES.get(labels.get("cause", ""))
        if part is not None and cause is not None:
            part["terms"][cause] = int(value)
    for labels, value in answers.get("usage", []):
        part = parts.get((labels.get("instance", ""), labels.get("engine", "?")))
        if part is not None and 0 <= value <= 1:
            part["kv_usage_fraction"] = value
    return [EnginePiece(**part) for part in parts.values()]


def metric_samples(
    series: Series, node_of: Callable[[str], str], metrics: Mapping[str, tuple[str, bool]],
    reported: set[tuple[str, str]],
) -> list[MetricsSample]:
    """The engines' own KV gauges (`metrics`: name → engine, states tokens) with the rank each speaks for,
    by the engine's rule (`span_rule.metrics_rank`); a node whose kvtop exporter reports an engine of that
    kind (`reported`: (node, kind)) is left to it, and a series whose labels name no rank is not joined."""
    samples = []
    for labels, value in series:
        kind, states_capacity = metrics.get(labels.get("__name__", ""), ("", False))
        instance = labels.get("instance", "")
        node = node_of(instance)
        if not kind or (node, kind) in reported:
            continue
        rank = _metrics_rank(kind, tuple(labels.items()))
        if rank is None:
            continue
        if states_capacity:  # the engine's own reading: a value (SGLang) or an info gauge's labels (vLLM)
            tokens = metrics_tokens(kind, labels, value)
            if tokens is None:
                continue
            value = float(tokens)
        samples.append(MetricsSample(node, instance, rank, value, states_capacity))
    return samples


def metrics_tokens(kind: str, labels: Mapping[str, str], value: float) -> int | None:
    """The tokens per rank one of the engine's capacity series states, by its own rule (`metrics_tokens`)."""
    return engine_rules(kind).metrics_tokens(labels.get("__name__", ""), labels, value)


@lru_cache(maxsize=1 << 16)
def _metrics_rank(kind: str, labels: tuple[tuple[str, str], ...]) -> MetricsRank | None:
    """The engine's rule, remembered per label set (a refresh reads the same series again)."""
    rule: EngineSpanRule = engine_rules(kind).span_rule
    return rule.metrics_rank(dict(labels))
