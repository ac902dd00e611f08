"""Which measured inputs an engine's rule reads: a figure the operator (or a log, NVML) gave that the rule does not
read is named in the plan, never dropped in silence (`--non-kv-memory` to SGLang, whose pool is free memory less a
share of the total, not total less what a profile measured; `--compile-cache` to SGLang, whose pool is sized before
anything compiles).

Each engine package declares what its rule leaves unread (`EngineBase.measured_not_read`, with why and source);
this module holds no list of engines, only the flag each measured figure is given by."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

# the figures of `MeasuredInputs` that a log, NVML or the operator may give, or an explanation may estimate; and
# torch.compile's cache as the operator says it (`--compile-cache`), a state, never estimated
MeasuredField = Literal[
    "gpu_total_bytes", "free_before_load_bytes", "free_after_load_bytes", "weights_bytes", "non_kv_bytes",
    "available_kv_bytes", "compile_cache",
]

class MeasuredFigures(Protocol):
    """What `measured_not_read` asks of `MeasuredInputs` (engines/base.py, which imports this module): the figures
    an operator may state (`MEASURED_FLAGS`), bytes or None, and which of them were estimated, not measured."""

    @property
    def free_before_load_bytes(self) -> int | None: ...

    @property
    def free_after_load_bytes(self) -> int | None: ...

    @property
    def weights_bytes(self) -> int | None: ...

    @property
    def non_kv_bytes(self) -> int | None: ...

    @property
    def compile_cache(self) -> str | None: ...

    @property
    def estimated(self) -> Sequence[tuple[str, object]]: ...


# each measured figure (or said state) an operator may state: the `plan` flag that gives it (commands/common.py
# defines them) and its typed field
_GIVEN_BY: tuple[tuple[MeasuredField, str, Callable[[MeasuredFigures], object | None]], ...] = (
    ("free_before_load_bytes", "--free-memory", lambda measured: measured.free_before_load_bytes),
    ("free_after_load_bytes", "--free-after-load", lambda measured: measured.free_after_load_bytes),
    ("weights_bytes", "--weights-memory", lambda measured: measured.weights_bytes),
    ("non_kv_bytes", "--non-kv-memory", lambda measured: measured.non_kv_bytes),
    ("compile_cache", "--compile-cache", lambda measured: measured.compile_cache),
)
MEASURED_FLAGS: Mapping[MeasuredField, str] = {field: flag for field, flag, _ in _GIVEN_BY}


class MeasuredNotRead(BaseModel):
    """One measured figure given to a plan whose engine's rule does not read it, and why (the rule's mechanism)."""

    model_config = ConfigDict(frozen=True)

    field: MeasuredField
    flag: str  # the flag that gives it (`MEASURED_FLAGS`)
    engine: str  # the engine's display name
    why: str  # what the rule sizes from instead, with its source

    @property
    def said(self) -> str:
        """The plan's note: '--non-kv-memory not read by SGLang's rule: …'."""
        return f"{self.flag} not read by {self.engine}'s rule: {self.why}"


def measured_not_read(
    measured: MeasuredFigures, unread: Mapping[MeasuredField, str], engine: str
) -> tuple[MeasuredNotRead, ...]:
    """The figures set in `measured` (not estimated: a calibrated stand-in is the plan's own) that `unread` (an
    engine's declaration, field → why) says its rule does not read, in the flags' order."""
    estimated = {name for name, _ in measured.estimated}
    return tuple(
        MeasuredNotRead(field=field, flag=flag, engine=engine, why=unread[field])
        for field, flag, figure in _GIVEN_BY
        if field in unread and figure(measured) is not None and field not in estimated
    )
