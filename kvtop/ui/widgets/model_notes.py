"""How the planned model's config was read, under the planner's model field: the notes `kvtop plan` prints for the
model, from the same facts (`ModelSpec.reading_notes`: a class read through an entry that does not list it, another
config format, parts read from elsewhere; `ModelSpec.not_modelled`: a generic reading and what it assumed, the parts
kvtop leaves out), so an operator sees in the TUI what the plan says about the reading (#26); for a model the live
engine does not run, also what `plan` says of its class at the engine's release (served otherwise, or not checked;
a refusal is the planner's ✗ line)."""

from __future__ import annotations

from textual.content import Content

from kvtop.domain.engine_architectures import ArchitectureCheck
from kvtop.domain.model import ModelSpec


def model_notes(model: ModelSpec) -> tuple[str, ...]:
    """The model's notes as `plan` words them: the reading notes, then each 'not modelled: …'."""
    return (*model.reading_notes, *(f"not modelled: {note}" for note in model.not_modelled))


def model_notes_text(model: ModelSpec | None, check: ArchitectureCheck | None = None) -> Content:
    """One 'note: …' line a note ('' where the model has none, or none is loaded); `check`'s words after them
    where the engine's release is not known to register the class and does not refuse it."""
    notes = model_notes(model) if model is not None else ()
    if check is not None and check.state not in ("registered", "refused"):
        notes = (*notes, check.message)
    return Content("\n").join(Content.styled(f"note: {note}", "$warning") for note in notes)
