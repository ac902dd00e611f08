"""How LMDeploy spreads over nodes: not modelled (docs/engines/lmdeploy.md §11).

LMDeploy's multi-node serving (the PyTorch engine over a Ray cluster, `--nnodes`/`--node-rank`) places
its workers through Ray; kvtop neither joins such an engine's nodes nor plans it across nodes, and says
so rather than guessing a placement.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.span import EngineSpan, MetricsRank, NodeLaunch, flag_count

FLAGS = frozenset({"--nnodes", "--node-rank"})
node_flags = FLAGS  # every one says a node of several (EngineSpanRule.node_flags)
layout_flags = frozenset({"--nnodes"})  # alike on every node ("PyTorchEngine Multi-Node Deployment Guide")


def per_node(settings: LaunchSettings, nodes: int) -> NodeLaunch | None:
    """LMDeploy over nodes is not modelled (`check_nodes` refuses it): nothing to say per node."""
    return None


def span(settings: LaunchSettings) -> EngineSpan:
    nnodes = flag_count(settings, "nnodes", 1, least=1)
    note = f"LMDeploy over {nnodes} nodes (Ray places its workers) is not modelled" if nnodes > 1 else None
    return EngineSpan(kind="lmdeploy", served_model=settings.model, nnodes=nnodes,
                      node_rank=flag_count(settings, "node-rank", 0, least=0), not_modelled=note)  # fmt: skip


def metrics_rank(labels: Mapping[str, str]) -> MetricsRank | None:
    """LMDeploy across nodes (Ray places its workers) is not modelled: its `lmdeploy:` series stay
    each node's engine (not joined)."""
    return None


def check_nodes(layout: ParallelLayout, nodes: int) -> None:
    if nodes > 1:
        raise LayoutError("LMDeploy across nodes (Ray places its workers) is not modelled", field="--nodes")
