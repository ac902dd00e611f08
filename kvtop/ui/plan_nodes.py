"""The planner's layout over nodes, free of widgets: the nodes an edit runs on, whether a node's GPUs hold its share,
and the flags each node's launch takes, read from the engine's span rule (`per_node`, the one `kvtop plan` prints and
its JSON `per_node` holds: never derived here)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import layout_from_settings
from kvtop.domain.model import ModelSpec
from kvtop.domain.placement import check_placement
from kvtop.domain.span import NodeLaunch, ranks_per_node


def node_launch(settings: LaunchSettings) -> NodeLaunch | None:
    """What each node's launch adds to the engine flags over the launch's nodes (its rank, the head's address), as its
    engine's span rule says it; None on one node, or where the node flags are wrong (its error says)."""
    rule = engine_rules(settings.engine).span_rule
    try:
        return rule.per_node(settings, rule.span(settings).nnodes)
    except KvtopError:
        return None


def on_its_nodes(
    base: LaunchSettings, edited: LaunchSettings, node_gpus: int | None = None, model: ModelSpec | None = None
) -> LaunchSettings:
    """The edit's multi-node flags follow its layout, a node holding `node_gpus` GPUs (None: the ranks the base runs
    on each of its nodes): a layout that fits one node drops the engine's node flags (its span's `node_flags`); one
    over more nodes says their count in `--nnodes` where the engine's shared line carries it (its span's
    `layout_flags`): a launch over nodes already, or one engine (no DP replicas, whose nodes take other flags) grown
    past a node, where the engine can lay it over them (`check_nodes`). Both layouts are read with the `model` the
    planner plans with, as the ledger and `kvtop plan` read them (LMDeploy's DP world is its backend's, the model's)."""
    rule = engine_rules(base.engine).span_rule
    try:
        nodes = rule.span(base).nnodes
        capacity = node_gpus or ranks_per_node(layout_from_settings(base, model), nodes)
        layout = layout_from_settings(edited, model)
        wanted = layout.nodes_needed(capacity)
    except KvtopError:
        return edited  # the launch's own message says what is wrong
    if wanted == nodes:
        return edited
    if wanted == 1:
        kept = {key: value for key, value in edited.flags.items() if f"--{key}" not in rule.node_flags}
        return edited.model_copy(update={"flags": kept})
    grows = nodes <= 1 and "--nnodes" in rule.layout_flags and layout.replicas == 1
    if not (grows or "nnodes" in edited.flags) or not _lays_over(base, layout, wanted):
        return edited
    return edited.model_copy(update={"flags": {**edited.flags, "nnodes": str(wanted)}})


def _lays_over(base: LaunchSettings, layout: ParallelLayout, nodes: int) -> bool:
    try:
        check_placement(base.engine, layout, nodes)
    except KvtopError:
        return False
    return True


def node_shortfall(settings: LaunchSettings, layout: ParallelLayout, node_gpus: int | None) -> str | None:
    """'needs 16 GPUs, the node has 8' (or 'needs 8 GPUs on each of 2 nodes, a node has 4', or the engine's own reason
    it cannot lay the layout over its nodes) where the layout cannot run on its nodes of `node_gpus` GPUs; None: it
    can (its ranks over the launch's `--nnodes`, each node holding its share)."""
    if node_gpus is None:
        return None
    rule = engine_rules(settings.engine).span_rule
    try:
        nodes = rule.span(settings).nnodes
    except KvtopError:
        nodes = 1
    if nodes <= 1:
        return None if layout.gpus <= node_gpus else f"needs {layout.gpus} GPUs, the node has {node_gpus}"
    try:
        _, per_node = check_placement(settings.engine, layout, nodes)
    except KvtopError as error:
        return str(error)
    if per_node <= node_gpus:
        return None
    return f"needs {per_node} GPUs on each of {nodes} nodes, a node has {node_gpus}"


def copied_lines(shared: Sequence[str], launch: NodeLaunch | None) -> str:
    """What `c` copies: the engine-flags line, or over nodes one whole line per node (node rank 0 first), each node's
    own flags after the shared ones; one line where one launch starts every node (its flags are none)."""
    if launch is None or not launch.by_node:
        return shlex.join(shared)
    return "\n".join(shlex.join([*shared, *own]) for own in launch.by_node)


def copied_words(launch: NodeLaunch | None) -> str:
    """What `c` copies over nodes, in words: '2 lines, one per node, node rank 0 first; fill in HEAD'
    ('' on one node, or where one launch starts every node)."""
    if launch is None or not launch.by_node:
        return ""
    fill = f"; fill in {', '.join(launch.placeholders)}" if launch.placeholders else ""
    return f"{launch.nodes} lines, one per node, node rank 0 first{fill}"
