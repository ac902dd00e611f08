"""The cluster's engines (every node's part joined) and disaggregated pairs, as text and JSON."""

from __future__ import annotations

from typing import Any

from kvtop.domain.cluster import ClusterView
from kvtop.domain.cluster_engines import DisaggregatedGroup, EnginePiece, JoinedEngine
from kvtop.domain.engines.registry import display_name


def _piece_json(piece: EnginePiece) -> dict[str, Any]:
    return {
        "node": piece.node, "instance": piece.instance, "engine_id": piece.engine_id,
        "node_rank": piece.span.node_rank, "serves_api": piece.span.serves_api, "ranks_here": piece.ranks_here,
        "ranks": piece.ranks_label, "tightest_rank": piece.tightest_rank, "tightest_gpu": piece.tightest_gpu,
        "capacity": dict(piece.capacity), "terms": {cause.value: tokens for cause, tokens in piece.terms.items()},
        "kv_usage_fraction": piece.kv_usage_fraction,
    }  # fmt: skip


def engine_json(engine: JoinedEngine) -> dict[str, Any]:
    span, actual, tightest = engine.span, engine.actual, engine.tightest
    return {
        "name": engine.name, "kind": span.kind, "served_model": span.served_model, "rendezvous": span.rendezvous,
        "nnodes": span.nnodes, "layout": engine.pieces[0].layout, "role": span.role.value, "transfer": span.transfer,
        "not_joined": span.not_modelled, "nodes": [_piece_json(p) for p in engine.pieces],
        "missing_node_ranks": list(engine.missing_node_ranks),
        "tightest": tightest.model_dump() if tightest else None, "clean_tokens": engine.clean_tokens,
        "terms": [term.model_dump(mode="json") for term in engine.terms],
        "actual_tokens": actual[0] if actual else None, "actual_source": actual[1].value if actual else None,
        "engine_metrics_only": engine.engine_metrics_only,
        "kv_usage_fraction": engine.kv_usage_fraction, "full_context_requests": engine.full_context_requests,
    }  # fmt: skip


def group_json(group: DisaggregatedGroup) -> dict[str, Any]:
    finding = group.finding
    return {
        "served_model": group.served_model, "transfer": list(group.transfer),
        "prefill": [e.name for e in group.prefill], "decode": [e.name for e in group.decode],
        "finding": finding.model_dump() if finding else None,
    }  # fmt: skip


def cluster_json(view: ClusterView) -> dict[str, Any]:
    data: dict[str, Any] = view.model_dump(mode="json", exclude={"engines", "disaggregated"})
    data["engines"] = [engine_json(e) for e in view.engines]
    data["disaggregated"] = [group_json(g) for g in view.disaggregated]
    return data


def _where(piece: EnginePiece) -> str:
    api = ", API" if piece.span.serves_api and piece.span.nnodes > 1 else ""
    return f"{piece.node} {piece.ranks_label or '?'}{api}"


def engine_lines(engine: JoinedEngine) -> list[str]:
    """An engine's row: who it is, where its ranks run, its tightest rank and its waterfall."""
    span, first = engine.span, engine.pieces[0]
    role = f" · {span.role.value}" if span.role.value != "whole" else ""
    over = f" over {span.nnodes} nodes" if span.spans_nodes else ""
    head = f"{display_name(span.kind)} {span.served_model or first.engine_id}"
    head += f" @{span.rendezvous}" if span.spans_nodes else f" ({first.engine_id})"
    lines = [f"{head} · {first.layout or '?'}{over}{role}: " + " · ".join(_where(p) for p in engine.pieces)]
    if engine.missing_node_ranks:
        lines.append(f"    no exporter reports node rank{'s' if len(engine.missing_node_ranks) > 1 else ''} "
                     f"{', '.join(map(str, engine.missing_node_ranks))}: its ranks there are unknown")  # fmt: skip
    if span.not_modelled:
        lines.append(f"    not joined across nodes: {span.not_modelled}")
    tightest, actual = engine.tightest, engine.actual
    if tightest is not None and actual is not None:
        gpu = f" GPU {tightest.gpu}" if tightest.gpu else ""
        rank = f" ({tightest.rank})" if tightest.rank else ""
        where = f"{tightest.node}{gpu}{rank}" if tightest.clear else "none clearly (its ranks hold alike)"
        lines.append(f"    tightest rank: {where} · engine holds {actual[0]:,} tokens per rank ({engine.actual_source})")
    elif engine.tightest_unknown:
        lines.append(f"    tightest rank: {engine.tightest_unknown}")
    lines.append(f"    {engine.describe_waterfall()}")
    return lines


def group_lines(group: DisaggregatedGroup) -> list[str]:
    def side(engines: tuple[JoinedEngine, ...]) -> str:
        return ", ".join(f"{e.pieces[0].engine_id} on {'+'.join(e.nodes)}" for e in engines) or "none seen"

    transfer = " / ".join(group.transfer) or "no transfer path named"
    lines = [f"{group.served_model}: prefill {side(group.prefill)} → KV over {transfer} → decode {side(group.decode)}"]
    finding = group.finding
    if finding is not None:
        lines.append(f"    WARNING decode_pool_limits_concurrency: {finding.message}")
    return lines


def engines_text(view: ClusterView) -> list[str]:
    if not view.engines:
        return []
    lines = ["", f"Engines ({len(view.engines)}, every node's part joined by the engine's own identity):"]
    for engine in view.engines:
        lines += [f"  {line}" for line in engine_lines(engine)]
    if view.disaggregated:
        lines += ["", "Disaggregated serving (prefill and decode by the model they serve):"]
        for group in view.disaggregated:
            lines += [f"  {line}" for line in group_lines(group)]
    return lines
