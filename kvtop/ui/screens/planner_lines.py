"""The planner's status lines, free of widgets: every bad field's reason, the engine's notes on the edit, and the
measured free memory the plan starts from."""

from __future__ import annotations

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.ui.plan_fields import FieldError
from kvtop.ui.planning import PlanOutcome
from kvtop.units import fmt_gib

#: The most field errors the planner lists one per line; the rest are counted ("and 2 more", each field marked).
ERRORS_SHOWN = 3


def edit_notes(outcome: PlanOutcome) -> tuple[str, ...]:
    """The ledger's notes on the edit that the live launch has not (`Ledger.notes`: `kvtop plan` prints them as
    'note:'), so a planned change the engine takes otherwise than typed is said where the edit is made."""
    if outcome.after is None:
        return ()
    before = outcome.before.notes if outcome.before is not None else ()
    return tuple(note for note in outcome.after.notes if note not in before)


def errors_text(errors: tuple[FieldError, ...]) -> str:
    """'✗ TP: …' one line per bad field, the fourth on counted: every field's reason, not only the first's."""
    lines = [f"✗ {error.message}" for error in errors[:ERRORS_SHOWN]]
    if len(errors) > ERRORS_SHOWN:
        lines.append(f"  and {len(errors) - ERRORS_SHOWN} more (the fields marked red)")
    return "\n".join(lines)


def measured_note(measured: MeasuredInputs, outcome: PlanOutcome | None = None) -> str:
    """' · free before load 78,004,617,216 B (72.65 GiB), least over its GPUs, measured at the live TP8' when planning
    on measured memory: the exact bytes, which `kvtop plan --free-memory 78004617216B` takes to agree to the token.
    Both sides plan on it (`planning.plan`), so its CUDA context and NCCL are the live layout's: an edit to another
    layout says it keeps them (session 72: nothing said which layout the figure was measured at)."""
    free = measured.free_before_load_bytes
    if free is None:
        return ""
    said = f" · free before load {free:,} B ({fmt_gib(free)}), least over its GPUs"
    before = outcome.before if outcome is not None else None
    if before is None:
        return said
    live = before.layout.describe()
    said += f", measured at the live {live}"
    after = outcome.after if outcome is not None else None
    if after is not None and after.layout.describe() != live:
        said += f" (the edit's {after.layout.describe()} keeps its CUDA context and NCCL: not re-solved for it)"
    return said
