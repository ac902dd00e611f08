"""How the planned model's config was read, under the planner's model field: the notes `kvtop plan` prints for the
model, from the same facts (`ModelSpec.reading_notes`: a class read through an entry that does not list it, another
config format, parts read from elsewhere), so an operator sees in the TUI what the plan says about the reading (#26);
for a model the live engine does not run, also what `plan` says of its class at the engine's release (served
otherwise, or not checked; a refusal is the planner's ✗ line). What kvtop leaves out (`ModelSpec.not_modelled`: a
generic reading and what it assumed) is the plan's one list (`Ledger.not_modelled`, the table's 'not modelled: …'
lines); only where no plan of the model solved do its own parts show here, so none is lost."""

from __future__ import annotations

from textual.content import Content

from kvtop.domain.engine_architectures import ArchitectureCheck
from kvtop.domain.model import ModelSpec


def model_notes(model: ModelSpec, planned: bool) -> tuple[str, ...]:
    """The model's notes as `plan` words them: the reading notes, then, where no plan of it solved (`planned`
    False: its `Ledger.not_modelled` is not in the table), each 'not modelled: …' of the model's own."""
    unmodelled = () if planned else model.not_modelled
    return (*model.reading_notes, *(f"not modelled: {note}" for note in unmodelled))


def model_notes_text(
    model: ModelSpec | None, check: ArchitectureCheck | None = None, planned: bool = False
) -> Content:
    """One 'note: …' line a note ('' where the model has none, or none is loaded); `check`'s words after them
    where the engine's release is not known to register the class and does not refuse it; `planned`: a plan of
    `model` solved, its table says what it leaves out."""
    notes = model_notes(model, planned) if model is not None else ()
    if check is not None and check.state not in ("registered", "refused"):
        notes = (*notes, check.message)
    return Content("\n").join(Content.styled(f"note: {note}", "$warning") for note in notes)
