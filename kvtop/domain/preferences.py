"""What an operator chose in the terminal UI and keeps between runs: theme, order, columns, interval.

A frozen value; `kvtop/sources/preferences_file.py` reads and writes it as TOML in the XDG config
directory (or `--config PATH`); the app only asks its store to save one. Command-line flags win over
the file for the run they are given (`--theme`, `--interval`); what the operator changes in the UI
(`t`, `s`, `S`, `V`, `H`) is saved.
"""

from __future__ import annotations

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StrictBool, field_validator
from pydantic_core import PydanticCustomError

from kvtop.domain.refresh import REFRESH_FLOOR, below_refresh_floor

#: Parts of a GPU row the operator may hide (`V`, `H`): NVML's vitals, the history sparklines.
OPTIONAL_COLUMNS = ("vitals", "history")


class Preferences(BaseModel):
    """Unset (None) fields take kvtop's defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    theme: str | None = Field(default=None, max_length=64)
    sort: str | None = Field(default=None, max_length=64)  # a sort's name as the legend says it
    reverse_sort: StrictBool = False
    # at least MIN_REFRESH_SECONDS; `interval` (the name --interval and --help use) is read as it too
    interval_s: float | None = Field(default=None, le=3600, validation_alias=AliasChoices("interval_s", "interval"))
    hidden_columns: tuple[str, ...] = ()  # of OPTIONAL_COLUMNS

    @field_validator("interval_s")
    @classmethod
    def _refresh_floor(cls, value: float | None) -> float | None:
        if value is not None and below_refresh_floor(value):
            raise PydanticCustomError("refresh_floor", f"{REFRESH_FLOOR} (got {value!r})")
        return value

    def shows(self, column: str) -> bool:
        return column not in self.hidden_columns

    def toggled(self, column: str) -> Preferences:
        """The same preferences with `column` shown if it was hidden, else hidden."""
        hidden = set(self.hidden_columns) ^ {column}
        return self.model_copy(update={"hidden_columns": tuple(c for c in OPTIONAL_COLUMNS if c in hidden)})
