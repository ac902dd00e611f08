"""The engines the cluster join places on a node, added to that node's snapshot read through Prometheus.

Which engines run on a node is answered once, by the cluster join (`ClusterView.engines`, each node's part
an `EnginePiece`); the node screen reads the same answer. A node's own source (kvtop's exporter, or DCGM
alone) knows the engines kvtop's exporter reports; an engine seen only through its own /metrics there
(`EnginePiece.engine_metrics_only`) is added here with the figures its series state (KV usage, tokens
per rank when it states them) and, named, what it lacks: no launch settings to predict from, no GPU map.
"""

from __future__ import annotations

from kvtop.domain.capacity import CapacitySource
from kvtop.domain.cluster import ClusterView
from kvtop.domain.cluster_engines import EnginePiece
from kvtop.domain.engines.registry import display_name
from kvtop.domain.node import EngineView, NodeSnapshot
from kvtop.domain.observe import EngineInstance, EngineLive

#: why an engine seen only through its own metrics has no prediction and no ranks on the node screen
NOT_MODELLED = "not modelled: seen only through its own metrics (no launch settings, no GPU map)"


def _host_port(instance: str) -> tuple[str, int]:
    """'gpu1-wl8sg:30000' → ('gpu1-wl8sg', 30000); a port that is no number is 0 (not known)."""
    host, sep, port = instance.rpartition(":")
    if not sep or not port.isdigit() or host.count(":") and not host.endswith("]"):
        return instance, 0
    return host, int(port)


def metrics_engine_view(piece: EnginePiece) -> EngineView:
    """One engine's part on a node as its own metrics give it: usage and stated tokens, no ledger, no ranks."""
    kind = piece.span.kind
    tokens = piece.capacity.get(CapacitySource.LIVE.value)
    lacking = [] if tokens is not None else ["its series state no tokens per rank"]
    if piece.kv_usage_fraction is None:
        lacking.append("no KV usage")
    note = f"figures of {display_name(kind)}'s own /metrics at {piece.instance}, through Prometheus"
    host, port = _host_port(piece.instance)
    live = EngineLive(
        token_capacity=tokens, kv_usage_fraction=piece.kv_usage_fraction,
        notes=(note + (f" ({'; '.join(lacking)})" if lacking else ""),),
    )  # fmt: skip
    engine = EngineInstance(
        engine_id=f"{kind}@{piece.instance}", kind=kind, server_pid=0, model=piece.span.served_model,
        host=host, port=port, live=live,
    )  # fmt: skip
    return EngineView(engine=engine, ledger=None, ledger_error=NOT_MODELLED)


def with_cluster_engines(snapshot: NodeSnapshot, view: ClusterView | None, node: str) -> NodeSnapshot:
    """`snapshot` of `node` with the engines the cluster join places there and its own source does not
    report (those seen only through their own metrics), its notice saying so; unchanged when there are none."""
    if view is None:
        return snapshot
    pieces = [p for engine in view.engines for p in engine.pieces if p.node == node and p.engine_metrics_only]
    known = {e.engine.engine_id for e in snapshot.engines}
    added = tuple(v for v in map(metrics_engine_view, pieces) if v.engine.engine_id not in known)
    if not added:
        return snapshot
    said = f"{len(added)} engine{'' if len(added) == 1 else 's'} from {'its' if len(added) == 1 else 'their'} own metrics"
    notice = f"{snapshot.notice} · {said}" if snapshot.notice else said
    return NodeSnapshot(observation=snapshot.observation, engines=snapshot.engines + added,
                        source=snapshot.source, notice=notice)  # fmt: skip
