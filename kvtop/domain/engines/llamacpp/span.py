"""llama-server runs on one node (its RPC backend across machines is not modelled)."""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.span import EngineSpan, MetricsRank, NodeLaunch

FLAGS = frozenset({"--rpc"})
node_flags = FLAGS  # its RPC servers are other machines (EngineSpanRule.node_flags)
layout_flags: frozenset[str] = frozenset()  # `--rpc` names hosts: never written back


def per_node(settings: LaunchSettings, nodes: int) -> NodeLaunch | None:
    """llama-server runs on one node (`check_nodes` refuses more): nothing to say per node."""
    return None


def span(settings: LaunchSettings) -> EngineSpan:
    note = "llama.cpp over RPC servers (--rpc) is not modelled" if "rpc" in settings.flags else None
    return EngineSpan(kind="llamacpp", served_model=settings.model, nnodes=1, node_rank=0, not_modelled=note)


def metrics_rank(labels: Mapping[str, str]) -> MetricsRank | None:
    """llama-server runs on one node: its `llamacpp:` series are that node's engine (not joined)."""
    return None


def check_nodes(layout: ParallelLayout, nodes: int) -> None:
    if nodes > 1:
        raise LayoutError("llama.cpp across nodes (--rpc) is not modelled", field="--nodes")
