"""A field config.json leaves out and the value kvtop read for it instead (`ConfigDefault`).

The reader (`architectures/reader.py`) builds one per field it read that the file did not state: the config
class's own default (transformers and the engines build the same), or kvtop's own nominal figure where that
class has no such field (a state-only model's head). Every reader reads the fields; `said` is the one wording
the ledger's notes and its JSON print.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict


class DefaultKind(str, Enum):
    CLASS_DEFAULT = "class_default"  # the config class's default: what transformers and the engines read too
    KVTOP_NOMINAL = "kvtop_nominal"  # kvtop's own figure: the config class has no such field
    # what the engines do with a field the file leaves out, assumed (a missing torch_dtype: served in 16 bit)
    ENGINE_ASSUMED = "engine_assumed"


class ConfigDefault(BaseModel):
    """One field the file left out: its name, the value read for it, what that value is, whose it is."""

    model_config = ConfigDict(frozen=True)

    field: str  # the config field's name (a dotted path for a nested section)
    value: int | float | str | bool | None
    what: str  # where the value comes from (the class, or kvtop's reason for its own figure)
    kind: DefaultKind

    @property
    def said(self) -> str:
        """`field=value` for a class default, '(assumed)' after it for the engines' handling kvtop assumes (its
        reason in `what`, which the notes print); with what it is for kvtop's own figure (no class says it)."""
        stated = f"{self.field}={self.value}"
        if self.kind is DefaultKind.ENGINE_ASSUMED:
            return f"{stated} (assumed)"
        return stated if self.kind is DefaultKind.CLASS_DEFAULT else f"{stated}: {self.what}"


__all__ = ["ConfigDefault", "DefaultKind"]
