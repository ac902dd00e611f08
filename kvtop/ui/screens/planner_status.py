"""What the planner's status and flags lines say for one solved edit, free of widgets: the first of the edit's
problems (an engine refusal, a layout past the node, a host tier the host cannot hold, a bad field, a model not
loaded) or its verdict (valid, at risk, with a note), the fields to mark, and the engine flags as `c` copies them.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content

from kvtop.domain.engines.registry import display_name
from kvtop.domain.host_tier_fit import HostTierFit, HostTierState
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.refusals import Refusal
from kvtop.domain.wording import flags_said
from kvtop.ui.plan_errors import field_of_flag
from kvtop.ui.plan_nodes import copied_words
from kvtop.ui.planning import PlanOutcome, engine_flags, launch_beside
from kvtop.ui.screens.planner_lines import edit_notes, errors_text
from kvtop.ui.widgets.plan_result import reserve_short, shortfall

#: The fields whose product is the GPUs a layout needs (marked when it needs more than the node has).
LAYOUT_FIELDS = ("tp", "pp", "dp")
HOST_FIELD = "host_kv_gib"  # the field a host KV tier the host cannot hold is marked on


@dataclass(frozen=True)
class EditProblems:
    """What is wrong with a solved edit beside its field errors (each None or empty where nothing is)."""

    # what the engine refuses at start in the edit and not in the live launch
    refused: tuple[Refusal, ...] = ()
    too_large: str | None = None  # 'needs 16 GPUs, the node has 8'
    host: HostTierFit | None = None  # the edit's host KV tier against this node's host memory
    pending_model: str | None = None  # a model typed and not loaded yet (Enter loads it)
    model_error: str | None = None  # why the typed model did not load


@dataclass(frozen=True)
class PlanStatus:
    """The status line: its words, their style, and the keys of the fields it marks invalid."""

    text: str
    style: str
    marked: tuple[str, ...] = ()


def plan_status(outcome: PlanOutcome, problems: EditProblems, model_ref: str) -> PlanStatus:
    """The first problem of the edit, else its verdict ('✓ valid …', at risk, with a note)."""
    refused, host = problems.refused, problems.host
    valid = outcome.error is None
    if valid and problems.too_large is None and refused:
        engine = outcome.after.settings.engine if outcome.after is not None else None
        marked = tuple(key for r in refused if (key := field_of_flag(r.field, engine)) is not None)
        return PlanStatus("✗ " + "; ".join(r.brief() for r in refused), "bold $error", marked)
    if valid and problems.too_large is not None:
        return PlanStatus(f"✗ {problems.too_large}: not copyable", "bold $error", LAYOUT_FIELDS)
    if valid and host is not None and host.refused:
        return PlanStatus(f"✗ host KV tier: {host.reason}", "bold $error", (HOST_FIELD,))
    if outcome.errors:
        marked = tuple(each.key for each in outcome.errors if each.key is not None)
        return PlanStatus(errors_text(outcome.errors), "bold $error", marked)
    if problems.pending_model is not None and problems.model_error:
        return PlanStatus(f"✗ {problems.model_error} (still planning with {model_ref!r})", "bold $error")
    if problems.pending_model is not None:
        return PlanStatus(f"model: press Enter to load {problems.pending_model!r}", "$warning")
    after = outcome.after
    if after is not None and (refusal := after.engine.count_refusal) is not None:
        return PlanStatus(f"✓ valid input, but it does not start: {refusal}", "$warning")
    if after is not None and not after.engine.fits:
        return PlanStatus(f"✓ valid input, but it does not fit: {shortfall(after)} short per rank (no KV pool: "
                          "the engine would not start)", "$warning")  # fmt: skip
    if after is not None and (risk := reserve_short(after)) is not None:
        # the per-rank rows' ✗ line is scrolled out of sight on a short terminal: the status says it too
        return PlanStatus(f"✓ valid input, but at risk: {risk}", "$warning")
    if host is not None and host.state is HostTierState.OVER_AVAILABLE:
        return PlanStatus(f"✓ valid input, but at risk: {host.reason}", "$warning")
    if added := edit_notes(outcome):  # e.g. EP on a model without experts, planned as EP off
        return PlanStatus("✓ valid, planned with a note: " + "; ".join(added), "$warning")
    nodes = outcome.nodes
    over = f" over {nodes.nodes} nodes (each node's launch below)" if nodes is not None else ""
    return PlanStatus(f"✓ valid{over}: edit any field, every keystroke re-solves", "$success")


def flags_line(outcome: PlanOutcome, problems: EditProblems, live: LaunchSettings) -> Content:
    """'engine flags: …' as `c` copies them (and each node's own flags under them), or why they are not copyable."""
    settings = outcome.settings
    if settings is None:
        return Content.styled("engine flags: — (fix the edit above first)", "$text-muted")
    node = outcome.nodes
    shown = engine_flags(settings, with_model=settings.model != live.model, launch=node)
    host_refused = problems.host is not None and problems.host.refused
    if problems.too_large is not None or problems.refused or host_refused:
        why = problems.too_large or (f"{display_name(live.engine)} refuses them" if problems.refused
                                     else "the host cannot hold its KV tier")  # fmt: skip
        return Content.styled(f"engine flags (not copyable, {why}): {shown}", "$error")
    beside = launch_beside(settings)
    return Content.assemble(
        ("engine flags: ", "bold"),
        flags_said(shown),
        (f"\n{beside}" if beside else "", "$text-muted"),
        (f"\n{node.said}" if node else "", "$text-muted"),
        (f" · c copies {words}" if node is not None and (words := copied_words(node)) else "", "$text-muted"),
    )
