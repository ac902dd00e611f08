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
# a wrapper model_type's text section: always one model_type (nesting.FIXED_TEXT) or one by default (AUTO_TEXT)
SectionRule = Literal["always", "defaults_to"]


class ChosenBy(BaseModel):
    """The config field and value that chose the entry (`text_config.model_type` = 'qwen3_vl_text'), and, where a
    wrapper's model_type chose it, the text section that model_type always has or defaults to."""

    model_config = ConfigDict(frozen=True)

    by: ReadBy
    field: str  # the config field: 'model_type', 'text_config.model_type'
    value: str  # the model_type it holds
    section_rule: SectionRule | None = None
    section_type: str | None = None  # the text section's model_type that rule gives

    def words(self) -> str:
        """"text_config.model_type 'bar'", "model_type 'foo', whose text section is always bar"."""
        chosen = f"{self.field} {self.value!r}"
        if self.section_rule == "always":
            return f"{chosen}, whose text section is always {self.section_type}"
        if self.section_rule == "defaults_to":
            return f"{chosen}, whose text section defaults to {self.section_type}"
        return chosen


class UncheckedClass(BaseModel):
    """The class, the entry that read it, and the config field and value that led there."""

    model_config = ConfigDict(frozen=True)

    architecture: str  # config.json's architectures[0]
    read_as: str  # the entry's model_type
    config_class: str  # the entry's config class (transformers' or the engine's)
    chosen_by: ChosenBy

    @property
    def said(self) -> str:
        """The plan's note (its one wording): the class, what it was read as and by what, and that it was not
        checked."""
        return (
            f"class {self.architecture} has no architecture entry of its own: read as {self.read_as} "
            f"({self.config_class}) by its {self.chosen_by.words()}; not checked against the engines' model code"
        )


__all__ = ["ChosenBy", "ReadBy", "SectionRule", "UncheckedClass"]
