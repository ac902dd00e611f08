"""One line of an engine's budget arithmetic (`BudgetStep`) and what a caller finds it by (`StepRole`); split from
`engines.base`, which re-exports both."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from kvtop.domain.calibration.terms import TermSource

# what a budget step is, for the callers that find one (explain says the GPU total as a stand-in or as the log's,
# and where the memory fraction came from): typed, so that no caller reads meaning from the label the operator
# reads, whose wording is each engine's own ("total (cudaMemGetInfo), …", "− reserve: pre-load × (1 − f)").
# gpu_total: the GPU memory given (the operator's, NVML's, the table's, a stand-in, a log's); cuda_total: CUDA's own
# total an engine sizes from in its place (`MeasuredInputs.engine_total_is_cuda`: NVML v2's, or calibrated per model)
StepRole = Literal["gpu_total", "cuda_total", "memory_fraction", "slot_context"]


class BudgetStep(BaseModel):
    """One line of the engine's own arithmetic, shown to the operator in order."""

    model_config = ConfigDict(frozen=True)

    label: str
    bytes: int | None = None
    value: float | None = None
    note: str = ""
    measured: bool = False
    source: TermSource | None = None  # where an input figure came from (None: the engine's arithmetic)
    # the step a caller finds by what it is (the GPU total, the memory fraction), set where the budget builds it
    role: StepRole | None = None

    @model_validator(mode="after")
    def _has_a_figure(self) -> BudgetStep:
        """Every step carries its figure, bytes or a value (a fraction, a count): a view never prints a step of none."""
        if self.bytes is None and self.value is None:
            raise ValueError(f"budget step {self.label!r} has no figure (bytes or a value)")
        return self
