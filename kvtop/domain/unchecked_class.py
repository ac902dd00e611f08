"""A config's class that kvtop has no entry of its own for, read through another entry: said, never silent.

The engines build a model by the class config.json's `architectures` names; kvtop reads it by an entry it finds
through the config's `model_type` (or its text section's). Where that class is neither an entry's own (its
`architectures`) nor a class kvtop names as read through one (a wrapper's text section, a class fixed to a
language model), nobody compared the reading with that class's build: the plan says so (#26 item 5).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

# how the entry was found: the config's own model_type, or its language model's section (a nested model_type, or a
# wrapper model_type's fixed or default text class)
ReadBy = Literal["model_type", "text_section"]


class UncheckedClass(BaseModel):
    """The class, the entry that read it, and the config field that led there."""

    model_config = ConfigDict(frozen=True)

    architecture: str  # config.json's architectures[0]
    read_as: str  # the entry's model_type
    config_class: str  # the entry's config class (transformers' or the engine's)
    by: ReadBy
    field: str  # the field and value that chose the entry: "model_type 'foo'", "text_config.model_type 'bar'"

    @property
    def said(self) -> str:
        """The plan's note: the class, what it was read as and by what, and that it was not checked."""
        return (
            f"class {self.architecture} has no architecture entry of its own: read as {self.read_as} "
            f"({self.config_class}) by its {self.field}; not checked against the engines' model code"
        )


__all__ = ["ReadBy", "UncheckedClass"]
