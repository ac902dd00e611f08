"""Rebuild a logged capacity when the log lacks one input and the operator named the GPU: estimate it.

`kvtop explain --gpu H100` on a log without the free memory (an SGLang excerpt without its `Load weight`
lines, TurboMind before v0.15, a TensorRT-LLM log at WARNING) estimates the missing input the way
`plan` does (the same domain function: `MeasuredInputs.free_before_load_range`, vLLM's non-KV estimate),
solves the engine's budget at the estimate's low, central and high ends, and judges the logged capacity
against that interval. It also solves the other way: the value of the input that rebuilds the logged
capacity ("free memory ≈ 23.25 GiB implied"). A match says "with an estimated input", never more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvtop.domain.engines.base import CONTEXT_BYTES_RANGE, DEFAULT_CONTEXT_BYTES, GIB, MeasuredInputs
from kvtop.domain.errors import KvtopError
from kvtop.domain.explanation import EstimatedInput, Explanation, Logged, judge
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec

_MIB = 1 << 20


@dataclass(frozen=True)
class EstimateRun:
    """What the engine's budget is solved for: the model, its settings, the GPU the operator named."""

    model: ModelSpec
    settings: LaunchSettings
    gpu_total_bytes: int
    gpu_name: str | None
    load_mtp: bool

    def solve(self, measured: MeasuredInputs) -> Ledger:
        return predict(
            self.model, self.settings, gpu_total_bytes=self.gpu_total_bytes, gpu_name=self.gpu_name,
            measured=measured, load_mtp=self.load_mtp,
        )  # fmt: skip


def rebuild_with_estimate(
    engine: str,
    logged: Logged,
    run: EstimateRun,
    estimate: EstimatedInput,
    measured_at: Callable[[int], MeasuredInputs],
    notes: tuple[str, ...] = (),
) -> Explanation:
    """The logged capacity against the capacities at the estimate's ends (`measured_at(value)`: the engine's
    measured inputs with the estimated one at `value`), with the value the logged capacity implies."""
    settings, gpu_total_bytes = run.settings, run.gpu_total_bytes

    def solve(value: int) -> Ledger:
        return run.solve(measured_at(value))

    central = solve(estimate.value_bytes)
    ends = (solve(estimate.low_bytes).token_capacity, solve(estimate.high_bytes).token_capacity)
    low, high = min(ends), max(ends)
    result = judge(engine, logged, central, low, high, settings, None, gpu_total_bytes, kv_memory_logged=False)
    implied = _implied(solve, logged.token_capacity, gpu_total_bytes)
    said = estimate.model_copy(update={"implied_bytes": implied})
    if result.verdict == "mismatch":
        needs = (
            "no value of it gives the logged capacity: the model, KV dtype or layout differ from what kvtop was told"
            if implied is None
            else f"the logged capacity needs {implied / GIB:.2f} GiB of it, outside that range: the estimate is what "
            f"differs most likely (pass the measured figure to settle it)"
        )
        cause = (
            f"{estimate.label} estimated at {estimate.value_bytes / GIB:.2f} GiB ({estimate.low_bytes / GIB:.2f}–"
            f"{estimate.high_bytes / GIB:.2f} GiB assumed); {needs}"
        )
        result = result.model_copy(update={"cause": cause})
    return result.model_copy(update={"estimated": said, "notes": (*notes, *result.notes)})


def _implied(solve: Callable[[int], Ledger], tokens: int | None, ceiling: int) -> int | None:
    """The value (to 1 MiB) in [0, `ceiling`] at which the capacity reaches the logged one, where the capacity
    rises or falls steadily with the input; None when no value in the range gives it. A value the budget
    refuses (less memory than the weights) holds no tokens."""
    if not tokens:
        return None

    def capacity(value: int) -> int:
        try:
            return solve(value).token_capacity
        except KvtopError:
            return 0

    at_low, at_high = capacity(0), capacity(ceiling)
    rising = at_high >= at_low
    if not min(at_low, at_high) <= tokens <= max(at_low, at_high):
        return None
    low, high = 0, ceiling // _MIB
    while low < high:  # the first MiB whose capacity has reached (rising) or fallen to (falling) the logged one
        middle = (low + high) // 2
        reached = capacity(middle * _MIB)
        if (reached >= tokens) if rising else (reached <= tokens):
            high = middle
        else:
            low = middle + 1
    return low * _MIB  # where the capacity crosses the logged figure, to the MiB


def free_before_load_estimate(gpu_total_bytes: int) -> EstimatedInput:
    """The memory free before the weights load, estimated as `plan` does (`MeasuredInputs.free_before_load`)."""
    low, value, high = MeasuredInputs().free_before_load_range(gpu_total_bytes)
    least, most = CONTEXT_BYTES_RANGE
    return EstimatedInput(
        field="free_before_load_bytes",
        label="free memory before the weights load",
        low_bytes=low,
        value_bytes=value,
        high_bytes=high,
        basis=f"GPU total − {DEFAULT_CONTEXT_BYTES / GIB:g} GiB of CUDA context and NCCL, the estimate plan uses "
        f"({least / GIB:g}–{most / GIB:g} GiB assumed)",
    )
