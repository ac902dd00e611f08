"""How TensorRT-LLM spreads over nodes (docs/engines/trtllm.md §13).

A multi-node TensorRT-LLM engine is one MPI world (`mpirun`/`srun … trtllm-llmapi-launch trtllm-serve`):
`Mapping` numbers its ranks pipeline stage by stage, TP fastest, and MPI fills each host's slots with
consecutive ranks, so the planner lays it out like the others. Its launch command names no rendezvous
kvtop could read (the MPI world is in the environment), so kvtop does not join its nodes: each node's
ranks show as an engine of that node, and the span says why.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.span import EngineSpan, MetricsRank, NodeLaunch, ranks_per_node

FLAGS: frozenset[str] = frozenset()
node_flags = FLAGS  # the MPI world is in the environment, not in flags (EngineSpanRule.node_flags)
layout_flags = FLAGS  # no flag says the node count: the MPI launcher does


def per_node(settings: LaunchSettings, nodes: int) -> NodeLaunch | None:
    """trtllm-serve has no node flag: the nodes are one MPI world its launcher starts (NVIDIA Dynamo's "Multinode
    Examples": `srun`/`mpirun … trtllm-llmapi-launch trtllm-serve …`, the nodes "launched together in the same MPI
    world"), one task per GPU."""
    if nodes <= 1:
        return None
    world = ParallelLayout(tp=settings.tp, pp=settings.pp)  # the MPI world: tp × pp ranks
    said = (f"trtllm-serve takes no node count: launch the line once as one MPI world of {world.gpus} ranks over"
            f" {nodes} nodes, e.g. srun -N {nodes} --ntasks-per-node {ranks_per_node(world, nodes)} trtllm-llmapi-launch"
            " trtllm-serve …")
    return NodeLaunch(nodes=nodes, said=said)  # one launch starts every node: no node's own flags


def span(settings: LaunchSettings) -> EngineSpan:
    return EngineSpan(kind="trtllm", served_model=settings.model)


def metrics_rank(labels: Mapping[str, str]) -> MetricsRank | None:
    """trtllm-serve's `/prometheus/metrics` (`trtllm_kv_cache_utilization{engine_type, model_name}`) name no rank:
    each node's series stay that node's engine (not joined)."""
    return None


def check_nodes(layout: ParallelLayout, nodes: int) -> None:
    """MPI ranks fill each node's slots in order: every node the same number of consecutive ranks."""
    ranks_per_node(layout, nodes)
