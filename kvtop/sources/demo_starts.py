"""What the demo's engines measured when they started: a table of real starts, as data.

`examples/measured/starts.json` states, for each GPU model the demo runs, CUDA's total, and for each engine shape
(engine, model preset, GPU model, TP, PP, DP) what a rank had free before its weights (or what it held then) and
the runtime memory its profile charged (vLLM, TensorRT-LLM). Each figure names the corpus records
(tests/data/calibration/*.jsonl) it was taken from, or says it is the scenario's own choice; where a record's start
is of another release than the scenario's engine, a figure also names the terms the engine's code sizes differently
between the two (`sized`: FlashInfer's fusion workspace in vLLM's non-torch memory held 1.5 GiB a rank from v0.18
to v0.21 and tens of MiB from v0.22), so a demo node shows no gap its release would not. The demo's engines size
their caches from these figures, never from kvtop's fits: a refit moves kvtop's prediction of a demo node, not what
its engines measured, and the gap between the two is what the demo shows.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kvtop.bundled import bundled_dir
from kvtop.domain.errors import InputError
from kvtop.domain.wording import GIB
from kvtop.sources.json_file import read_json_object

STARTS_FILE = ("examples", "measured", "starts.json")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StartFigure(_Strict):
    """One figure, GiB as printed, and where it comes from: corpus records (`of`) or the scenario's choice."""

    gib: str = Field(pattern=r"^\d+(\.\d+)?$")
    of: tuple[str, ...] = ()  # "+record-id:field" / "-record-id:field", summed
    # what the engine's code sizes for a named record's start, "-record-id:term", or for that start at the scenario's
    # release, "+record-id:term@version"; summed with `of` (a record's figure moved to another release's rule)
    sized: tuple[str, ...] = ()
    choice: str | None = None  # why the figure is the scenario's own (no record fits)
    note: str = ""

    @model_validator(mode="after")
    def _sourced(self) -> StartFigure:
        if bool(self.of) == bool(self.choice):
            raise ValueError(
                "a figure names its records (`of`) or says it is the scenario's `choice`, not both"
            )
        if self.sized and not self.of:
            raise ValueError("a figure's `sized` terms move its records' figures (`of`): name them")
        return self

    @property
    def bytes(self) -> int:
        return round(Decimal(self.gib) * GIB)


class GpuStart(_Strict):
    gpu: str  # a GPU model kvtop knows (kvtop.domain.gpus)
    cuda_total: StartFigure


class EngineStart(_Strict):
    """What one engine shape measured: its free memory before the weights (or its context), its runtime."""

    engine: str
    model: str  # the scenario's model preset
    gpu: str
    tp: int = 1
    pp: int = 1
    dp: int = 1
    free_before_load: StartFigure | None = None  # logged on this GPU model
    context: StartFigure | None = None  # what a rank held before its weights (a start on another GPU model)
    # runtime memory besides the weights (vLLM's non-KV, TensorRT-LLM's reserve)
    non_kv: StartFigure | None = None

    @model_validator(mode="after")
    def _one_pre_load_figure(self) -> EngineStart:
        if (self.free_before_load is None) == (self.context is None):
            raise ValueError(f"{self.engine} {self.model}: give free_before_load or context, one of them")
        return self

    def context_bytes(self, cuda_total_bytes: int) -> int:
        """What a rank holds before its weights on a GPU of `cuda_total_bytes` (CUDA's total)."""
        if self.context is not None:
            return self.context.bytes
        assert self.free_before_load is not None
        return max(cuda_total_bytes - self.free_before_load.bytes, 0)


class StartTable(_Strict):
    about: str = ""
    gpus: tuple[GpuStart, ...]
    starts: tuple[EngineStart, ...]

    def cuda_total(self, gpu: str) -> StartFigure | None:
        return next((row.cuda_total for row in self.gpus if row.gpu.upper() == gpu.upper()), None)

    def start(self, engine: str, model: str, gpu: str, *, tp: int, pp: int, dp: int) -> EngineStart | None:
        """The row of this shape; None where the table holds none (its ranks then hold the context kvtop's
        clean prediction expects)."""
        return next(
            (
                row for row in self.starts
                if (row.engine, row.model, row.gpu.upper(), row.tp, row.pp, row.dp) == (engine, model, gpu.upper(), tp, pp, dp)
            ),
            None,
        )  # fmt: skip


@cache
def start_table() -> StartTable:
    """The shipped table (read once); a broken file is an InputError naming it."""
    path = bundled_dir(*STARTS_FILE)
    data = read_json_object(path, "demo starts", field="--demo")
    try:
        return StartTable.model_validate(data)
    except ValidationError as error:
        raise InputError(
            f"not a table of demo starts: {error.errors()[0]['msg']}", field="--demo", source=str(path), value_is_file=True
        ) from None
