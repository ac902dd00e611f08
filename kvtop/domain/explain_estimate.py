"""Rebuild a logged capacity when the log lacks one input and the operator named the GPU: estimate it.

`kvtop explain --gpu H100` on a log without the free memory (an SGLang excerpt without its `Load weight`
lines, TurboMind before v0.15, a TensorRT-LLM log at WARNING) estimates the missing input the way
`plan` does: the terms of the launch (`preload_estimate`), calibrated or assumed, and their errors
(`kvtop.domain.calibration.ranges`): the free memory before the load is always plan's CUDA total less plan's
context term, so both commands give one figure and one interval for it; a runtime term no fit reaches is the
engine's stated assumption (vLLM's 2 GiB of non-KV memory). Every other term the rebuild charges and the log does not
state (TensorRT-LLM's runtime, the weights with what the load holds beside the book, CUDA's total) is plan's figure for
the same start (`EstimateRun.with_plans_terms`), its error in the interval. The interval is plan's for the launch
(`plans_ends`: the function plan's ends come from, over the terms the log does not measure, so it is plan's or
narrower); an input assumed beside plan's terms (a folded worker's, a hidden stage's bound) is solved at its own ends,
the others' errors beside it (`with_other_errors`). The logged capacity is judged against that interval.
It also solves the other way: the value of the input that rebuilds the logged capacity ("free memory ≈
23.25 GiB implied"). A match says "with an estimated input", never more.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from kvtop.domain.calibration.estimate import preload_estimate
from kvtop.domain.calibration.host_memory import DESKTOP_NOTE
from kvtop.domain.calibration.interval_ends import interval_ends
from kvtop.domain.calibration.ranges import InputRange, free_before_load_range, runtime_range, weights_range
from kvtop.domain.calibration.terms import (
    RUNTIME_TERMS,
    CalibratedFigures,
    PreloadEstimate,
    Term,
    TermEstimate,
    TermSource,
)
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import KvtopError, UnsupportedModelError
from kvtop.domain.explanation import (
    EstimatedField,
    EstimatedInput,
    EstimateOrigin,
    Explanation,
    Logged,
    judge,
)
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, total_origin
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import MIB as _MIB
from kvtop.domain.wording import gib, gib_range


@dataclass(frozen=True)
class EstimateRun:
    """What the engine's budget is solved for: the model, its settings, the GPU the operator named."""

    model: ModelSpec
    settings: LaunchSettings
    gpu_total_bytes: int
    gpu_name: str | None
    load_mtp: bool
    desktop: bool = False  # a desktop shares the card (`MeasuredInputs.desktop`): the estimate's low end takes it
    # where `gpu_total_bytes` came from (`ExplainRequest.solved_total`); None: what its origin makes it (`total_source`)
    gpu_total_source: TermSource | None = None
    gpu_total_origin: GpuTotalOrigin | None = None  # and who chose it (`ExplainRequest.gpu_total_origin`)

    @property
    def total_source(self) -> TermSource:
        """Where the run's total came from: as its caller said (`ExplainRequest.solved_total`), else by the one rule
        of its origin (`gpu_total_origin.total_origin`, `_total_given`): measured where it is the engine's own total, assumed
        where it is a table's or a larger variant's nvidia-smi figure (never 'measured' by default)."""
        if self.gpu_total_source is not None:
            return self.gpu_total_source
        return "measured" if _total_given(self) else "assumed"

    def solve(self, measured: MeasuredInputs) -> Ledger:
        """The engine's budget for `measured`, every term it leaves unsaid at the figure `plan` charges for this start
        (`with_plans_terms`): the runtime, the weights the load holds beyond the book, CUDA's total, the context."""
        return self._predict(self.with_plans_terms(measured))

    def with_plans_terms(self, measured: MeasuredInputs) -> MeasuredInputs:
        """`measured` with plan's central figures (`PreloadEstimate.figures`) under it: what the log, the operator or
        the estimated input states wins (a `MeasuredInputs` field over its calibrated one; a calibrated figure
        `measured` sets itself over plan's), the rest is plan's, so both commands charge one figure per term."""
        plan = self._plan
        if not isinstance(plan, PreloadEstimate):
            return measured
        figures = plan.figures("central")
        own = measured.calibrated
        if own is not None:
            figures = figures.model_copy(update={name: getattr(own, name) for name in own.model_fields_set})
        return measured.model_copy(update={"calibrated": figures})

    @cached_property
    def _plan(self) -> PreloadEstimate | KvtopError:
        """The pre-load terms `plan` estimates for this launch, once per run; the refusal where it cannot be planned
        (`planned_preload` raises it, as `plan` does)."""
        given = self.gpu_total_bytes if _total_given(self) else None
        try:
            return preload_estimate(self._predict(MeasuredInputs(gpu_total_bytes=given, desktop=self.desktop)))
        except KvtopError as refused:
            return refused

    def _predict(self, measured: MeasuredInputs) -> Ledger:
        if measured.gpu_total_bytes == self.gpu_total_bytes:  # the GPU named, labelled as its total came
            measured = measured.with_estimated("gpu_total_bytes", self.total_source)
        if measured.gpu_total_origin is None and self.gpu_total_origin is not None:
            measured = measured.model_copy(update={"gpu_total_origin": self.gpu_total_origin})
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
    printed: Callable[[Ledger], int] | None = None,
) -> Explanation:
    """The logged capacity against the capacities at the estimate's ends (`measured_at(value)`: the engine's
    measured inputs with the estimated one at `value`), with the value the logged capacity implies. `printed`: the
    figure the engine prints from a ledger where it is not the token capacity (a pool sized before a refusal)."""
    settings, gpu_total_bytes = run.settings, run.gpu_total_bytes
    figure = printed or (lambda ledger: ledger.token_capacity)

    def solve(value: int) -> Ledger:  # the estimated figure named as such: its budget step is never "measured"
        return run.solve(measured_at(value).with_estimated(estimate.field, estimate.source))

    central = solve(estimate.value_bytes)
    others = other_estimates(central, calibrated_preload(run))
    planned = plans_ends(run, estimate, central, others[0], measured_at, figure)
    if planned is not None:
        low, high = planned
    else:  # an assumed bound beside plan's terms (a folded worker's, a stage's): its own ends, the others' errors beside
        ends = (figure(solve(estimate.low_bytes)), figure(solve(estimate.high_bytes)))
        low, high = with_other_errors(figure(central), ends, others, central.measured, lambda m: figure(run.solve(m)))
    result = judge(
        engine, logged, central, low, high, settings, None, gpu_total_bytes, kv_memory_logged=False,
        predicted_tokens=figure(central) if printed else None,
    )  # fmt: skip
    implied = _implied(lambda value: figure(solve(value)), logged.token_capacity, gpu_total_bytes)
    said = estimate.model_copy(update={"implied_bytes": implied, "others": others[0]})
    if result.verdict == "mismatch":
        needs = (
            "no value of it gives the logged capacity: the model, KV dtype or layout differ from what kvtop was told"
            if implied is None
            else f"the logged capacity needs {gib(implied)} of it, outside that range: the estimate is what "
            f"differs most likely (pass the measured figure to settle it)"
        )
        cause = (
            f"{estimate.label} estimated at {gib(estimate.value_bytes)} "
            f"({gib_range(estimate.low_bytes, estimate.high_bytes)} {estimate.source}); {needs}"
        )
        result = result.model_copy(update={"cause": cause})
    # a desktop sharing the card: said as `plan --desktop` says it (a printed or given free memory holds its share)
    preload = calibrated_preload(run) if run.desktop else None
    host = tuple(note for note in preload.host_notes if note.startswith(DESKTOP_NOTE)) if preload else ()
    return result.model_copy(update={"estimated": said, "notes": (*notes, *result.notes, *host)})


# the terms an input's rebuild may still estimate besides it, and how each reaches the budget: the weights book's
# (as the plan's ends move it, `CalibratedFigures.weights_extra_bytes`), CUDA's total where the budget reads the
# calibrated one (vLLM's share of it) and the runtime where the budget charges plan's (TensorRT-LLM's reserve,
# `CalibratedFigures.non_kv_bytes`). The others (context, a host's share) are the estimated input's own.
_MOVABLE = (Term.WEIGHTS, Term.CUDA_TOTAL, *RUNTIME_TERMS)


def other_estimates(central: Ledger, planned: PreloadEstimate | None = None) -> tuple[tuple[TermEstimate, ...], float]:
    """The terms the rebuild at the estimate's centre still rests on besides the estimated input, and the engine's
    interval scale: the plan's terms for the log's inputs (`preload_estimate`, which zeroes what the log and the
    estimated input fix) that carry an error and reach the budget, each as `planned` (the launch's plan) states it."""
    try:
        plan = preload_estimate(central)
    except KvtopError:
        return (), 1.0
    figures, measured = central.measured.calibrated, central.measured
    reads_total = figures is not None and figures.cuda_total_bytes is not None and measured.gpu_total_bytes is None
    reads_runtime = figures is not None and figures.non_kv_bytes is not None and measured.non_kv_bytes is None
    reaches = {Term.WEIGHTS: True, Term.CUDA_TOTAL: reads_total} | dict.fromkeys(RUNTIME_TERMS, reads_runtime)
    # the plan's own figure of each (the centre's book already holds what plan charges beside it: not twice)
    as_planned = {term.term: term for term in planned.terms} if planned is not None else {}
    others = tuple(
        as_planned.get(term.term, term) for term in plan.terms
        if max(term.error_bytes, term.error_below_bytes) > 0 and term.within is None and reaches.get(term.term, False)
    )  # fmt: skip
    return others, plan.interval_scale


# the plan's terms an estimated input is made of (`ranges.py`: free_before_load_range, runtime_range, weights_range)
_MADE_OF: dict[EstimatedField, tuple[Term, ...]] = {
    "free_before_load_bytes": (Term.CUDA_TOTAL, Term.CONTEXT, Term.HOST),
    "non_kv_bytes": RUNTIME_TERMS,
    "free_after_load_bytes": (Term.WEIGHTS,),
}


def plans_ends(
    run: EstimateRun, estimate: EstimatedInput, central: Ledger, others: tuple[TermEstimate, ...],
    measured_at: Callable[[int], MeasuredInputs], figure: Callable[[Ledger], int],
) -> tuple[int, int] | None:  # fmt: skip
    """The interval's ends as `plan` makes them for this launch (`PreloadEstimate.figures`: the errors of every term
    together, shared among the terms, `interval_ends.interval_ends`), over the terms the rebuild still estimates: the
    estimated input's own (`_MADE_OF`) and the others that reach its budget (`other_estimates`); a term the log
    measures carries no error, so the interval is plan's or narrower, never wider. None where the input is not plan's
    figure (an assumption beside plan's terms: `EstimateOrigin.ASSUMPTION`) or the launch cannot be planned."""
    planned, made_of = calibrated_preload(run), _MADE_OF.get(estimate.field)
    if planned is None or made_of is None or estimate.origin is not EstimateOrigin.PLAN_TERMS:
        return None
    kept = {term.term: term for term in planned.terms if term.term in made_of} | {term.term: term for term in others}
    order = [term.term for term in planned.terms]
    terms = tuple(sorted(kept.values(), key=lambda term: order.index(term.term) if term.term in order else len(order)))
    interval = planned.model_copy(update={"terms": terms})
    centre = interval.figures("central")

    def at(side: Literal["low", "high"]) -> int:
        moved = interval.figures(side)
        measured = measured_at(_input_at(estimate, centre, moved)).with_estimated(estimate.field, estimate.source)
        figures = _others_at(central.measured.calibrated or CalibratedFigures(), centre, moved, set(kept))
        try:
            return figure(run.solve(measured.model_copy(update={"calibrated": figures})))
        except KvtopError:  # more weights than the budget holds: no tokens
            return 0

    uncertain = any(max(term.error_bytes, term.error_below_bytes) > 0 for term in terms)
    uncertain = uncertain and not central.engine.capacity_fixed_by  # a flag's count is widened by no corpus gap
    return interval_ends([figure(central), at("low"), at("high")], planned.extrapolation if uncertain else None)


def _delta(centre: int | None, moved: int | None) -> int:
    return moved - centre if centre is not None and moved is not None else 0


def _input_at(estimate: EstimatedInput, centre: CalibratedFigures, moved: CalibratedFigures) -> int:
    """The estimated input at an end of the plan's interval: its centre moved as its terms move there (the free
    memory before the load as CUDA's total less the context, the runtime memory as its terms, the free memory after
    the load against the weights)."""
    if estimate.field == "free_before_load_bytes":
        return max(estimate.value_bytes + _delta(centre.free_before_load_bytes, moved.free_before_load_bytes), 0)
    if estimate.field == "non_kv_bytes":  # as plan's: below 0 only where a desktop gave back more (`_runtime_at`)
        return estimate.value_bytes + _delta(centre.non_kv_bytes, moved.non_kv_bytes)
    return max(estimate.value_bytes - (moved.weights_extra_bytes - centre.weights_extra_bytes), 0)


def _others_at(
    figures: CalibratedFigures, centre: CalibratedFigures, moved: CalibratedFigures, terms: set[Term]
) -> CalibratedFigures:  # fmt: skip
    """The centre's figures (`figures`) with each of the interval's `terms` moved as plan moves it at that end
    (`moved` less `centre`): the weights book's extra, the runtime memory, CUDA's total."""
    update: dict[str, int | None] = {}
    if Term.WEIGHTS in terms:
        update["weights_extra_bytes"] = figures.weights_extra_bytes + moved.weights_extra_bytes - centre.weights_extra_bytes
    if terms & set(RUNTIME_TERMS) and figures.non_kv_bytes is not None:
        update["non_kv_bytes"] = figures.non_kv_bytes + _delta(centre.non_kv_bytes, moved.non_kv_bytes)
        if figures.activation_bytes is not None:
            update["activation_bytes"] = figures.activation_bytes + _delta(centre.activation_bytes, moved.activation_bytes)
    if Term.CUDA_TOTAL in terms and figures.cuda_total_bytes is not None:
        update["cuda_total_bytes"] = figures.cuda_total_bytes + _delta(centre.cuda_total_bytes, moved.cuda_total_bytes)
    return figures.model_copy(update=update)


def _moved(measured: MeasuredInputs, term: TermEstimate, towards_kv: int, scale: float) -> MeasuredInputs:
    """`measured` with one other term moved by its error × the interval scale towards more KV (+1) or less (−1): its
    error towards that end (`TermEstimate.error_towards`: a part that only raises the term moves it towards less KV,
    one that only lowers it towards more)."""
    figures = measured.calibrated or CalibratedFigures()
    move = round(towards_kv * term.error_towards("high" if towards_kv > 0 else "low") * scale)
    if term.term is Term.WEIGHTS:
        update = {"weights_extra_bytes": figures.weights_extra_bytes - move}
    elif term.term in RUNTIME_TERMS:
        update = {"non_kv_bytes": max((figures.non_kv_bytes or 0) - move, 0)}
    else:
        update = {"cuda_total_bytes": (figures.cuda_total_bytes or term.bytes) + move}
    return measured.model_copy(update={"calibrated": figures.model_copy(update=update)})


def with_other_errors(
    central: int, ends: tuple[int, int], others: tuple[tuple[TermEstimate, ...], float], measured: MeasuredInputs,
    capacity: Callable[[MeasuredInputs], int],
) -> tuple[int, int]:  # fmt: skip
    """The interval's ends where the estimated input is an assumed bound, not plan's figure (`plans_ends` is None):
    its own ends (`ends`) and each other term moved by its error both ways, their moves in tokens added as
    independent errors add (the root of their squares) on each side. Without other terms, its ends as they are."""

    def solved(moved: MeasuredInputs) -> int:
        try:
            return capacity(moved)
        except KvtopError:  # more weights than the budget holds: no tokens
            return 0

    terms, scale = others
    moves = [ends] + [(solved(_moved(measured, term, -1, scale)), solved(_moved(measured, term, 1, scale)))
                      for term in terms]  # fmt: skip
    below = math.sqrt(sum(max(central - min(pair), 0) ** 2 for pair in moves))
    above = math.sqrt(sum(max(max(pair) - central, 0) ** 2 for pair in moves))
    if not terms:
        return min(ends), max(ends)
    return max(round(central - below), 0), round(central + above)


def _implied(solve: Callable[[int], int], tokens: int | None, ceiling: int) -> int | None:
    """The value (to 1 MiB) in [0, `ceiling`] at which the capacity reaches the logged one, where the capacity
    rises or falls steadily with the input; None when no value in the range gives it. A value the budget
    refuses (less memory than the weights) holds no tokens."""
    if not tokens:
        return None

    def capacity(value: int) -> int:
        try:
            return solve(value)
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
    if low and capacity((low - 1) * _MIB) == 0 and capacity(low * _MIB) > tokens:
        return None  # the budget jumps from a refusal past the logged figure (a pool under one request's worth)
    return low * _MIB  # where the capacity crosses the logged figure, to the MiB


def planned_preload(run: EstimateRun) -> PreloadEstimate:
    """The pre-load terms `plan` estimates for this launch (a launch the engine's rules refuse raises, as `plan`
    does). A total from --gpu-memory is the engine's total as measured, as `plan --gpu-memory` takes it; --gpu's
    table total is nvidia-smi's, for which the calibration's CUDA total stands. Which it is, is the origin its chooser
    said (`EstimateRun.gpu_total_origin`); only a run that says none is read from its bytes (not the named GPU's
    listed total: given)."""
    plan = run._plan
    if isinstance(plan, KvtopError):
        raise plan
    return plan


def calibrated_preload(run: EstimateRun) -> PreloadEstimate | None:
    """`planned_preload`, None where the launch cannot be planned (the engine's rules refuse it)."""
    try:
        return planned_preload(run)
    except KvtopError:
        return None


def _total_given(run: EstimateRun) -> bool:
    """Whether the run's total stands as the engine's own, not a table's or a larger memory variant's nvidia-smi
    total for the model named (`GpuTotalOrigin.is_engines_total`): the operator's --gpu-memory, or a live node's
    (NVML: the engine-visible total where the driver's reserved was read, `gpu_total_origin.engine_visible_total`), as
    `MeasuredInputs.engine_total_given` takes a measured total; a run whose path does not carry the origin (an
    engine's that does not pass it) as `gpu_total_origin.total_origin` infers it."""
    return total_origin(run.gpu_name, run.gpu_total_bytes, run.gpu_total_origin).is_engines_total


def engine_total(run: EstimateRun) -> CalibratedFigures | None:
    """CUDA's total of the GPU named, as the calibration gives it (the total an engine multiplies its share
    by: below nvidia-smi's); None where it cannot be planned."""
    estimate = calibrated_preload(run)
    total = estimate.term(Term.CUDA_TOTAL) if estimate is not None else None
    if total is None:
        return None
    return CalibratedFigures(cuda_total_bytes=total.bytes, cuda_total_source=total.source)


def _estimated(field: EstimatedField, label: str, found: InputRange) -> EstimatedInput:
    return EstimatedInput(
        field=field, label=label, low_bytes=found.low_bytes, value_bytes=found.value_bytes,
        high_bytes=found.high_bytes, source=found.source, basis=found.basis, origin=EstimateOrigin.PLAN_TERMS,
    )  # fmt: skip


def free_before_load_estimate(run: EstimateRun) -> EstimatedInput:
    """The memory free before the weights load, estimated by the one function `plan`'s figure is read from
    (`free_before_load_range`): CUDA's total less the engine's context term for this era, GPU and TP, calibrated or
    assumed (saying why, `TermEstimate.assumed_because`, in its basis), within their errors × the interval scale.
    A launch the engine's rules refuse raises here as it does in `plan`; an engine whose plan reads no free memory
    before load has nothing to estimate it from, said by its name (never a number of explain's own)."""
    found = free_before_load_range(planned_preload(run))
    if found is None:
        raise UnsupportedModelError(
            f"{run.settings.engine}'s plan has no CUDA total and context terms to estimate the free memory before the "
            "weights load from: pass the measured free memory instead",
            field="--gpu",
        )
    return _estimated("free_before_load_bytes", "free memory before the weights load", found)


def runtime_estimate(run: EstimateRun, label: str, assumed: tuple[int, int, int], assumed_basis: str) -> EstimatedInput:
    """The runtime memory charged besides the weights (the engine's non-KV memory), estimated as `plan` does:
    its calibrated terms within their held-out errors; where none is fitted, the engine's stated assumption
    (`assumed`: low, central, high; `assumed_basis`: the assumption in words)."""
    estimate = calibrated_preload(run)
    found = runtime_range(estimate) if estimate is not None else None
    if found is not None:
        return _estimated("non_kv_bytes", label, found)
    low, value, high = assumed
    return EstimatedInput(
        field="non_kv_bytes", label=label, low_bytes=low, value_bytes=value, high_bytes=high, source="assumed",
        basis=assumed_basis,
    )  # fmt: skip


def free_after_load_estimate(run: EstimateRun, before_bytes: int) -> EstimatedInput | None:
    """The memory free after the weights load where a log states only the memory before it: that less the weights
    `plan` charges for this start (`weights_range`: its weights term, calibrated or assumed, within its error × the
    interval scale), so both commands charge one weights figure; None where the launch cannot be planned."""
    estimate = calibrated_preload(run)
    found = weights_range(estimate) if estimate is not None else None
    if found is None:
        return None
    return EstimatedInput(
        field="free_after_load_bytes", label="free memory after the weights load",
        low_bytes=max(before_bytes - found.high_bytes, 0), value_bytes=max(before_bytes - found.value_bytes, 0),
        high_bytes=max(before_bytes - found.low_bytes, 0), source=found.source, origin=EstimateOrigin.PLAN_TERMS,
        basis=f"the logged free memory before the load less the weights plan charges: {found.basis}",
    )  # fmt: skip
