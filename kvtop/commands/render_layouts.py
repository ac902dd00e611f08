"""Placements over nodes and multi-node layout comparisons, as text and JSON (units formatted here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kvtop.commands.render_launch import engine_config_json, launch_text
from kvtop.commands.render_ledger import flags_not_read_json, gpu_shown
from kvtop.domain.engines.registry import display_name, engine_rules
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layouts import LayoutPlan
from kvtop.domain.ledger import Ledger
from kvtop.domain.placement import Placement
from kvtop.domain.wording import flags_said
from kvtop.units import fmt_both


def placement_json(placement: Placement | None) -> dict[str, Any] | None:
    if placement is None:
        return None
    return {
        "nodes": placement.nodes, "gpus_per_node": placement.gpus_per_node,
        "ranks_per_node": placement.ranks_per_node,
        "by_node": [{"node": n.node, "ranks": list(n.ranks), "label": n.label} for n in placement.by_node],
    }  # fmt: skip


def _sizing_line(ledger: Ledger, nodes: int) -> str:
    """How the engine sizes ranks on different nodes (its rules' own fact, in words): over the nodes of one
    replica, each DP replica being an engine of its own."""
    replicas = ledger.layout.replicas
    span = ledger.layout.nodes_per_replica(nodes)
    where = f"its {span} nodes" if span > 1 else "its node"
    each = "each replica: " if replicas > 1 else ""
    if engine_rules(ledger.settings.engine).sizes_every_rank_from_least_free:
        return f"{each}every rank is sized from the least free GPU of {where}"
    return f"{each}each worker sizes its pool from its own GPU; the engine takes the least over {where}"


def placement_text(ledger: Ledger, placement: Placement) -> str:
    """'Nodes: 2 × 8 GPUs — node 0: ranks 0–7 (TP0–TP7) · node 1: …' and how ranks on different nodes size."""
    def ranks(n: tuple[int, ...]) -> str:
        return f"rank {n[0]}" if len(n) == 1 else f"ranks {n[0]}–{n[-1]}"

    nodes = " · ".join(f"node {n.node}: {ranks(n.ranks)} ({n.label})" for n in placement.by_node)
    text = f"Nodes: {placement.describe()} — {nodes}\n  {_sizing_line(ledger, placement.nodes)}"
    each = node_launch(ledger, placement)
    return f"{text}\n  {each}" if each else text


def node_launch(ledger: Ledger, placement: Placement | None) -> str | None:
    """What each node's launch adds to the engine-flags line (its rank, the head's address), as the engine's span
    rule says it; None on one node."""
    if placement is None:
        return None
    launch = engine_rules(ledger.settings.engine).span_rule.per_node(ledger.settings, placement.nodes)
    return launch.said if launch is not None else None


def _layout_row(plan: LayoutPlan) -> dict[str, Any]:
    ledger = plan.ledger
    row: dict[str, Any] = {
        "layout": plan.spec.text, "nodes": plan.spec.nodes, "gpus_per_node": plan.spec.gpus_per_node,
        "error": plan.error,
    }  # fmt: skip
    if ledger is None:
        return row
    config = engine_config_json(ledger.settings.engine_launch())  # TensorRT-LLM's YAML and build flags; absent for the others
    return row | ({"engine_config": config} if config is not None else {}) | {
        "parallel": ledger.layout.describe(), "gpus": ledger.layout.gpus, "gpus_idle": plan.gpus_idle,
        "weights_bytes": ledger.weights_bytes, "kv_bytes_per_token": ledger.kv_bytes_per_token,
        "kv_pool_bytes": ledger.engine.kv_pool_bytes, "token_capacity": ledger.token_capacity, "pools": plan.pools,
        "deployment_tokens": plan.deployment_tokens, "full_context_requests": plan.full_context_requests,
        "fits": ledger.engine.fits, "shortfall_bytes": ledger.engine.shortfall_bytes,
        "engine_flags": list(ledger.settings.engine_launch().line), "engine_env": dict(ledger.settings.engine_launch().env),
        "placement": placement_json(plan.placement),
    }  # fmt: skip


def layouts_json(plans: Sequence[LayoutPlan], launch: LaunchSettings) -> dict[str, Any]:
    """Each layout's row, and the flags of the `launch` (as typed) that kvtop did not read, as `plan --json`."""
    solved = next((p.ledger for p in plans if p.ledger is not None), None)
    return {
        "engine": solved.settings.engine if solved else None, "model": solved.model.name if solved else None,
        "gpu": {"name": solved.gpu_name, "total_bytes": solved.gpu_total_bytes} if solved else None,
        "context_length": solved.context_length if solved else None,
        "layouts": [_layout_row(plan) for plan in plans],
        "flags_not_read": flags_not_read_json(launch, solved.engine.inputs_not_read if solved else ()),
    }  # fmt: skip


def layouts_text(plans: Sequence[LayoutPlan]) -> str:
    solved = next((p.ledger for p in plans if p.ledger is not None), None)
    lines = []
    if solved is not None:
        lines += [
            f"{solved.model.name}  ·  {display_name(solved.settings.engine)} {solved.version.label}  ·  "
            f"{gpu_shown(solved.gpu_name, solved.gpu_total_bytes, solved.shown_total_origin)}  ·  KV {solved.kv_format}  ·  "
            f"context {solved.context_length:,}",
            "",
        ]
    lines.append(f"  {'layout':<18}{'parallel':<26}{'weights per rank':>24}{'KV/token':>12}{'tokens per pool':>17}"
                 f"{'pools':>7}{'tokens, all pools':>19}{'full-context reqs':>19}  fits")  # fmt: skip
    for plan in plans:
        ledger = plan.ledger
        if ledger is None:
            lines.append(f"  {plan.spec.text:<18}{plan.error}")
            continue
        fits = "yes" if ledger.engine.fits else "NO (too few blocks for one request)" if ledger.engine.count_refusal else (
            f"NO (short {fmt_both(ledger.engine.shortfall_bytes)} per rank)")  # fmt: skip
        idle = f", {plan.gpus_idle} GPUs idle" if plan.gpus_idle else ""
        lines.append(
            f"  {plan.spec.text:<18}{ledger.layout.describe() + idle:<26}{fmt_both(ledger.weights_bytes):>24}"
            f"{ledger.kv_bytes_per_token:>10,} B{ledger.token_capacity:>17,}{plan.pools:>7}"
            f"{plan.deployment_tokens:>19,}{plan.full_context_requests:>19,.2f}  {fits}"
        )
    lines += ["", "Where each layout's ranks run:"]
    for plan in plans:
        if plan.ledger is not None and plan.placement is not None:
            lines.append(f"  {plan.spec.text:<18}{placement_text(plan.ledger, plan.placement).replace(chr(10), chr(10) + ' ' * 20)}")
            # none: said in `plan`'s words (DEFAULTS_SAID), not a bare 'flags: '
            lines.append(f"  {'':<18}flags: {flags_said(launch_text(plan.ledger.settings))}")
    return "\n".join(lines)
