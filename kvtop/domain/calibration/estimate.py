"""THE pre-load estimate: every figure a plan needs before the engine starts, and the interval it gives.

`preload_estimate` is the one entry point: the engine's calibration estimates each term; what was
measured (the operator's flags, a log, NVML) replaces its term with zero error; this node's own earlier
start of the same launch replaces the terms it measured; a fitted term outside its fit's records (no start
at this GPU model or release) takes the error measured outside them (`support.widened`); on a unified-memory
host, what the host holds is an assumed term where the engine sizes from the free memory, the context within it
(the share's readings hold it), and said either way (`host_memory.py`). On it rest, and nowhere else:

- `calibrated_ledger`: the clean prediction (the dashboard's, the planner's, the demo's, `plan`'s centre);
- `planned_capacity`: that ledger and the capacity at both ends of the interval (`interval_ends`: the least and
  the most of the centre and the two solves; the dominant term names what to measure first; requests too);
- `start_overhead.start_overhead`: what a (re)start finds taken before its weights, its own module.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.extrapolation import Extrapolation
from kvtop.domain.calibration.host_estimate import HostStart
from kvtop.domain.calibration.host_memory import (
    HOST_AND_CONTEXT_MEASURED,
    context_within_share,
    desktop_host,
    host_in_node,
    host_measured_in,
    host_term,
    unified_host,
)
from kvtop.domain.calibration.host_start import host_start
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.interval_ends import interval_ends
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.node import NODE_REPEAT_ERROR_BYTES, NodeMeasure, latest_match
from kvtop.domain.calibration.plan_fits import (
    committed_fits,
    desktop_given_back_bytes,
    desktop_held_bytes,
    desktop_profile_bytes,
    plan_fits,
)
from kvtop.domain.calibration.support import widened
from kvtop.domain.calibration.terms import RUNTIME_TERMS, PreloadEstimate, Term, TermEstimate
from kvtop.domain.calibration.weights import with_fitted_error
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpus import is_unified
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.request_capacity import RequestInterval, request_interval
from kvtop.domain.stage_weights import beyond_stage_book


def calibration_inputs(ledger: Ledger) -> CalibrationInputs:
    """The launch a ledger solved, as the term models read it."""
    return CalibrationInputs(
        model=ledger.model, settings=ledger.settings, layout=ledger.layout, gpu_name=ledger.gpu_name,
        gpu_total_bytes=ledger.gpu_total_bytes, version=ledger.version, weights_bytes=ledger.weights_bytes,
        context_length=ledger.context_length, wsl2=ledger.measured.wsl2,
        compile_cache_warm=ledger.measured.compile_cache == "warm",
        compile_cache_cold=ledger.measured.compile_cache == "cold",
        draft_weights_known=ledger.draft is not None or ledger.measured.draft_weights_bytes is not None,
        draft=ledger.draft if ledger.measured.draft_weights_bytes is None else None,
    )  # fmt: skip


def _measured(estimate: TermEstimate, value: int, what: str) -> TermEstimate:
    return estimate.with_error(0, 0, 0, bytes=value, source="measured", basis=f"measured: {what}", beyond=None,
                               origin="input", first_stage_only_bytes=0, within=None)  # fmt: skip


def _with_measured(
    estimates: tuple[TermEstimate, ...], measured: MeasuredInputs, reads_free_after_load: bool = True
) -> tuple[TermEstimate, ...]:
    """The estimates with what `measured` fixes put in their place, at the figures measured. The free memory after
    load measures the weights with it only where the engine's budget reads it (`reads_free_after_load`; vLLM's
    does not: its weights stay the calibrated term)."""
    by_term = {estimate.term: estimate for estimate in estimates}
    total, context = by_term.get(Term.CUDA_TOTAL), by_term.get(Term.CONTEXT)
    given = measured.engine_total_given()
    if total is not None and given is not None:
        by_term[Term.CUDA_TOTAL] = total = _measured(total, *given)
    if total is not None and context is not None and measured.free_before_load_bytes is not None:
        by_term[Term.CUDA_TOTAL] = _measured(total, total.bytes, "the free memory before load (the total with it)")
        by_term[Term.CONTEXT] = _measured(context, total.bytes - measured.free_before_load_bytes,
                                          "the free memory before load")  # fmt: skip
    host = by_term.get(Term.HOST)
    if host is not None and measured.free_before_load_bytes is not None:  # the host's share is in what was measured
        by_term[Term.HOST] = _measured(host, 0, "in the free memory before load")
        if Term.CONTEXT in by_term:  # and so the 'context' measured holds it: named as both
            by_term[Term.CONTEXT] = by_term[Term.CONTEXT].model_copy(update={"label": HOST_AND_CONTEXT_MEASURED})
    weights = by_term.get(Term.WEIGHTS)
    if weights is not None and measured.weights_bytes is not None:
        by_term[Term.WEIGHTS] = _measured(weights, measured.weights_bytes, "the resident weights")
    after = measured.free_after_load_bytes is not None and reads_free_after_load
    if after and weights is not None and measured.weights_bytes is None and measured.free_before_load_bytes is not None:
        # both free figures measured: the weights are their difference, still predicted here, and read by no budget
        by_term[Term.WEIGHTS] = weights.with_error(0, 0, 0, beside_error_bytes=0, beyond=None,
                                                   within="the free memory before and after load (measured)")
    if after and measured.free_before_load_bytes is None:
        # only the free memory after the load was measured: what it holds besides the weights (CUDA's total, the
        # context, a host's share) moves no budget any more; the weights stay predicted, with their error (SGLang's
        # reserve reads the free memory before load as the one after it + the weights)
        held = "the free memory after load (measured: --free-after-load)"
        for term in (Term.CUDA_TOTAL, Term.CONTEXT, Term.HOST):
            if term in by_term and by_term[term].source != "measured":
                by_term[term] = by_term[term].with_error(0, 0, 0, beside_error_bytes=0, beyond=None, within=held)
    runtime = [by_term.pop(term) for term in RUNTIME_TERMS if term in by_term] if measured.non_kv_bytes is not None else []
    if runtime:
        by_term[Term.ACTIVATION] = _measured(
            runtime[0].model_copy(update={"label": "runtime memory besides the weights", "term": Term.ACTIVATION}),
            measured.non_kv_bytes or 0, "the runtime memory",
        )
    if measured.available_kv_bytes is not None or measured.available_kv_bytes_by_stage:
        by_term = {term: _measured(estimate, estimate.bytes, "the KV memory") for term, estimate in by_term.items()}
    order = [estimate.term for estimate in estimates]
    return tuple(sorted(by_term.values(), key=lambda estimate: order.index(estimate.term)))


def _from_node(estimate: TermEstimate, node: NodeMeasure, settings: LaunchSettings, model: ModelSpec) -> TermEstimate:
    """A term this node measured at an earlier start of the same launch, else the estimate."""
    value = node.terms.get(estimate.term)
    runtime_applies = node.terms.get(Term.ACTIVATION, -1) >= 0 and node.same_runtime(settings, model)
    if value is None or (estimate.term in RUNTIME_TERMS and not runtime_applies):
        return estimate
    if estimate.term is Term.CUDA_TOTAL and Term.CONTEXT not in node.terms and not runtime_applies:
        return estimate  # the total was kept only as the one the runtime charge was solved against
    if estimate.term is Term.WEIGHTS and node.together and not runtime_applies:
        return estimate  # weights kept with the runtime charge in them (their split not determined): not alone
    if estimate.term is Term.WEIGHTS:  # the node's weights stand beside the book's, whatever its version
        value = value if value > 0 else estimate.bytes
    if value < 0:  # a store line written before negative terms were refused: nothing measured it
        return estimate
    said = " (weights and runtime charge together)" if node.together and estimate.term is Term.WEIGHTS else ""
    if estimate.term is Term.WEIGHTS and node.weights_stage is not None:  # one stage's load: the others derived
        said += (f" (stage {node.weights_stage}'s load; each other stage's derived from it + its book beyond "
                     f"stage {node.weights_stage}'s)")
    return estimate.with_error(NODE_REPEAT_ERROR_BYTES, 0, 0, bytes=value, source="measured", beyond=None,
                               first_stage_only_bytes=0, within=None,
                               basis=f"measured on this node at a start on {node.date}{said}", origin="node")  # fmt: skip


def _stage_books(ledger: Ledger) -> list[int]:
    """Each pipeline stage's weights book (its largest rank's), in stage order."""
    stages = range(max((rank.pp_rank for rank in ledger.ranks), default=-1) + 1)
    return [max(r.weights_bytes for r in ledger.ranks if r.pp_rank == pp) for pp in stages]


def engine_fits(engine: str, fits: dict[str, LinearTerm] | None = None) -> dict[str, LinearTerm]:
    """The fits a plan of `engine` reads (`plan_fits`): out of `fits` (one corpus's, e.g. refitted without a judged
    source), else out of the committed blocks. The product's plans and the corpus's judgement both come here."""
    calibration = engine_rules(engine).calibration
    return plan_fits(committed_fits(calibration.FITS) if fits is None else fits, calibration.FIT_TERMS)


def preload_estimate(
    ledger: Ledger,
    *,
    fits: dict[str, LinearTerm] | None = None,
    scale: IntervalScale | None = None,
    node_measures: tuple[NodeMeasure, ...] = (),
    extrapolation: Extrapolation | None = None,
) -> PreloadEstimate:
    """Every term `ledger`'s launch rests on: fitted (of `fits`, default the committed ones, what `engine_fits` keeps
    for the engine: a judgement's plan reads what the product's reads), replaced by
    what `ledger.measured` fixes and by this node's latest start of the same launch. The interval scale is the
    committed one with the committed fits, else `scale` (None: unscaled), the one measured beside `fits`; so is what
    the corpus covers and the widening outside it (`extrapolation`, None: none)."""
    rules = engine_rules(ledger.settings.engine)
    inputs = calibration_inputs(ledger)
    support = engine_fits(ledger.settings.engine, fits)
    built = rules.calibration.weights_built_ahead(inputs)  # an engine built ahead of its start
    estimates = tuple(with_fitted_error(widened(estimate, support, inputs), support, built)
                      for estimate in rules.calibration.terms(inputs, support))  # fmt: skip
    # a unified-memory host's share, where the engine sizes from the free memory before the load (a context term)
    from_free = {Term.CONTEXT, Term.CUDA_TOTAL} <= {estimate.term for estimate in estimates}
    given = ledger.measured.engine_total_given()
    total = given[0] if given is not None else next(
        (estimate.bytes for estimate in estimates if estimate.term is Term.CUDA_TOTAL), ledger.gpu_total_bytes
    )
    available = rules.reads_available_memory(ledger.version)  # the page cache free (vLLM v0.11.1, SGLang 0.5.4 on)
    host = host_term(ledger.gpu_name, total, available=available) if from_free else None
    if host is not None:  # the share's readings hold the engine's own context (read after it): the context within it
        estimates = (*(context_within_share(e) if e.term is Term.CONTEXT else e for e in estimates), host)
    calibrated = next((estimate for estimate in estimates if estimate.term is Term.WEIGHTS), None)
    node = latest_match(node_measures, ledger.settings.engine, ledger.settings.engine_version, ledger.gpu_name,
                        ledger.model, ledger.settings)  # fmt: skip
    node_used = False  # whether a term is the node's: a start of another profiled batch may give none
    node_weights: TermEstimate | None = None
    if node is not None:
        from_node = host_in_node(tuple(_from_node(estimate, node, ledger.settings, ledger.model)
                                       for estimate in estimates), node.date)  # fmt: skip
        node_used = any(estimate.origin == "node" for estimate in from_node)
        node_weights = next((e for e in from_node if e.term is Term.WEIGHTS and e.origin == "node"), None)
        estimates = from_node
    estimates = _with_measured(estimates, ledger.measured, rules.calibration.READS_FREE_AFTER_LOAD)
    weights = next((estimate for estimate in estimates if estimate.term is Term.WEIGHTS), None)
    predicted = weights is not None and weights.source != "measured" and weights.within is None
    beside = calibrated.bytes - inputs.weights_bytes if calibrated and predicted else 0
    weights_stage: int | None = None  # the stage whose load the node's stored weights are, where that rule applied
    if node_weights is not None and weights is not None and weights.within is None and ledger.measured.weights_bytes is None:
        beside = node_weights.bytes - inputs.weights_bytes  # the node's weights reach the budget as the book's + this
        books = _stage_books(ledger)
        stage = node.weights_stage if node is not None else None
        if stage is not None and len(books) > 1 and 0 <= stage < len(books):
            # one stage's stored load: each stage its own book + that load beyond that stage's book (stage_weights)
            beside, weights_stage = beyond_stage_book(node_weights.bytes, stage, books), stage
    # a budget without a context term (vLLM's) still has ranks that hold one: the engine's own fit
    context = None if any(e.term is Term.CONTEXT for e in estimates) else rules.calibration.context(inputs, support)
    if context is not None and node is not None:
        context = _from_node(context, node, ledger.settings, ledger.model)
        node_used = node_used or context.origin == "node"
    scale = rules.calibration.INTERVAL_SCALE if fits is None else scale
    covered = rules.calibration.EXTRAPOLATION if fits is None else extrapolation
    uncertain = any(estimate.error_bytes for estimate in estimates)  # every term measured: nothing to widen
    by_gpu = any(estimate.error_bytes for estimate in estimates if estimate.term is not Term.WEIGHTS)
    # an attention-free model's interval is in requests, which no judged start of the corpus measured (groups.py
    # judges tokens and KV memory): no widening of a measure the share was not taken on
    outside = (covered.widening(ledger.model, ledger.gpu_name, ledger.version, gpu_terms_open=by_gpu)
               if covered and uncertain and not ledger.model.attention_free else None)  # fmt: skip
    fraction = ledger.engine.memory_fraction
    free_measured = ledger.measured.free_before_load_bytes is not None or ledger.measured.free_after_load_bytes is not None
    return PreloadEstimate(
        engine=ledger.settings.engine,
        scale=scale,
        terms=estimates,
        extrapolation=outside,
        node_note=f"calibrated on this node, {node.date}" if node is not None and node_used else None,
        weights_beside_book_bytes=beside,
        weights_stage=weights_stage,
        context=context,
        unified_host=unified_host(total, charged=from_free, fraction=fraction,
                                  needs_bytes=rules.start_needs_bytes(total, fraction), available=available,
                                  measured_in=host_measured_in(estimates, node.date if node else None))
        if is_unified(ledger.gpu_name) else None,
        # a desktop's share is in a free memory given (before or after the load): the low end takes nothing more
        desktop=desktop_host(charged=from_free, free_measured=free_measured, held_bytes=desktop_held_bytes(support),
                             seen=ledger.measured.desktop_seen, profile_bytes=desktop_profile_bytes(support),
                             given_back_bytes=desktop_given_back_bytes(support), total_bytes=total,
                             needs_bytes=rules.start_needs_bytes(total, fraction) if fraction else None,
                             context_bytes=context.bytes if context is not None else 0,
                             runtime_measured=all(estimate.source == "measured" for estimate in estimates
                                                  if estimate.term in RUNTIME_TERMS))  # fmt: skip
        if ledger.measured.desktop else None,
    )


class IntervalKind(str, Enum):
    """What a plan's interval is, the one case every view words in its own way (`CapacityPlan.interval_kind`), in
    the order they are told apart."""

    EXACT = "exact"  # every input measured: the interval is the capacity itself
    REQUESTS = "requests"  # an attention-free model: the interval is in requests (`CapacityPlan.requests`)
    REFUSED_ACROSS_SPAN = "refused_across_span"  # the start is refused wherever the host holds its assumed share
    FITS_NOWHERE = "fits_nowhere"  # 0 at both ends: it does not fit even where the estimated inputs are kindest
    # the engine sizes its cache by a flag, not from memory (llama.cpp's -c): memory decides only whether it fits
    FIXED_BY_FLAG = "fixed_by_flag"
    ZERO_WIDE = "zero_wide"  # no estimated input moves the budget (± 0)
    # the start may not pass where the host holds its assumed centre, and passes at the share's low end: an assumed
    # share is no refusal, so the headline is the capacity, the low end 0 ('may not start')
    REFUSED_AT_CENTRE = "refused_at_centre"
    REFUSED_AT_HIGH_END = "refused_at_high_end"  # starts at the centre, may not at the span's high end: low end 0
    SPREAD = "spread"  # a capacity at both ends (± the wider side)


class CapacityPlan(BaseModel):
    """A plan's ledger at the estimate's centre, and the capacity at both ends of its interval."""

    model_config = ConfigDict(frozen=True)

    ledger: Ledger
    estimate: PreloadEstimate
    token_capacity_min: int
    token_capacity_max: int
    kv_budget_min_bytes: int
    kv_budget_max_bytes: int
    # whether it starts on a unified-memory host holding its assumed share (None: no share of the total is asked
    # free at its start, or the GPU is its own): where refused in the span, the interval's low end is 0
    start: HostStart | None = None
    # an attention-free model's requests at both ends (None: the model plans KV tokens)
    requests: RequestInterval | None = None

    @property
    def start_refused(self) -> bool:
        """The launch is refused even where the host holds its assumed share's low end: the headline is the refusal.
        Refused only at the centre (or its high end) of an assumed share, the start may pass: the headline is the
        capacity and the start verdict says 'may not start' (`HostStart.reason`)."""
        return self.start is not None and self.start.refused_across_span

    @property
    def zero_wide(self) -> bool:
        """No estimated term moves the KV budget (what was measured fixes it) and the start is never refused."""
        refused = self.start is not None and self.start.refused_in_span
        same = self.kv_budget_min_bytes == self.kv_budget_max_bytes and self.token_capacity_min == self.token_capacity_max
        return same and not refused

    @property
    def fixed_by(self) -> str | None:
        """The flag that sizes the cache where it fits at both ends with the same capacity (memory moves only
        whether it fits, and not here): llama.cpp's -c; None where memory sizes it or the fit is in doubt."""
        flag = self.ledger.engine.capacity_fixed_by
        refused = self.start is not None and self.start.refused_in_span
        same = self.token_capacity_min == self.token_capacity_max > 0
        return flag if flag is not None and same and not refused else None

    @property
    def interval_kind(self) -> IntervalKind:
        """Which case the interval is: the one branch `plan`'s Interval line and the planner's fresh-start line read."""
        start = self.start
        if self.exact:
            return IntervalKind.EXACT
        if self.requests is not None and not (start is not None and start.refused_in_span):
            return IntervalKind.REQUESTS  # a refused start is the refusal's case, worded in requests by the views
        if start is not None and start.refused_across_span:
            return IntervalKind.REFUSED_ACROSS_SPAN
        if self.token_capacity_max == 0:
            return IntervalKind.FITS_NOWHERE
        if self.fixed_by is not None:
            return IntervalKind.FIXED_BY_FLAG
        if self.zero_wide:
            return IntervalKind.ZERO_WIDE
        if start is not None and start.refused_in_span:
            return IntervalKind.REFUSED_AT_HIGH_END if start.starts_at_centre else IntervalKind.REFUSED_AT_CENTRE
        return IntervalKind.SPREAD

    @property
    def dominant(self) -> TermEstimate | None:
        """The term whose error widens the interval most: the one to measure first (a term's error × the interval
        scale, the widening outside the corpus, or what the low end takes for a desktop); the host's assumed share
        where part of it refuses the start; None where no term widens it."""
        if self.start is not None and self.start.refused_in_span:
            unified = self.estimate.unified_host
            return (host_term(self.ledger.gpu_name, unified.total_bytes, available=unified.page_cache_free)
                    if unified is not None else None)  # fmt: skip
        if self.zero_wide or self.fixed_by is not None or self.ledger.engine.count_refusal:
            return None  # a block count's refusal is no memory term's
        largest = self.estimate.dominant
        widths = [(largest.error_bytes * self.estimate.interval_scale, largest)] if largest is not None else []
        # a plan that fits nowhere, even with what a desktop may give back at its kindest end, does not blame it
        desktop = self.estimate.desktop_term if self.token_capacity_max > 0 else None
        widths += [(own.error_bytes, own) for own in (self.extrapolation_term, desktop) if own]
        return max(widths, key=lambda width: width[0])[1] if widths else None

    @property
    def extrapolation_bytes(self) -> int:
        """The KV budget's half-width the plan's ends took for lying outside the engine's corpus (0: inside)."""
        widening = None if self.ledger.engine.capacity_fixed_by else self.estimate.extrapolation  # a count: not widened
        return widening.bytes_for(self.ledger.engine.kv_budget_bytes) if widening is not None else 0

    @property
    def extrapolation_term(self) -> TermEstimate | None:
        """The widening for lying outside the engine's corpus as a term of the plan (its KV budget's half-width,
        calibrated), named as the plan names it: 'no record on a B300; interval widened by ± 6.1 %'; None: inside."""
        widening = self.estimate.extrapolation
        if widening is None or not self.extrapolation_bytes:
            return None
        return TermEstimate(term=Term.EXTRAPOLATION, label=widening.words, bytes=0, error_bytes=self.extrapolation_bytes,
                            source="calibrated", basis=widening.basis, beyond="; ".join(widening.reasons))  # fmt: skip

    @property
    def beyond_support(self) -> tuple[str, ...]:
        """Each widening for extrapolation, where the interval has a width for it to widen."""
        return () if self.zero_wide or self.fixed_by is not None else self.estimate.beyond_support

    @property
    def spread_tokens(self) -> int:
        """The interval's half-width in tokens (the wider side: the budget's arithmetic is not symmetric)."""
        return max(self.spread_ends_tokens)

    @property
    def spread_ends_tokens(self) -> tuple[int, int]:
        """How far the interval's ends lie below and above the capacity, in tokens (each ≥ 0): the budget's
        arithmetic is not symmetric, so a plan says both where they differ (`units.fmt_spread`)."""
        central = self.ledger.token_capacity
        return central - self.token_capacity_min, self.token_capacity_max - central

    @property
    def start_notes(self) -> tuple[str, ...]:
        """What the plan says beside its terms, each view the same words: the host's share (`host_notes`), then what a
        cold start may charge beyond the plan by a cache not known before it (`EngineResult.start_cache`: vLLM's
        torch.compile cache), its median in this plan's tokens as the engine counts them (`Ledger.tokens_in`)."""
        cache = self.ledger.engine.start_cache
        said = () if cache is None or self.exact else (cache.words(self.ledger.tokens_in(cache.median_bytes)),)
        return (*self.estimate.host_notes, *said)

    @property
    def exact(self) -> bool:
        """Every term measured (none carries an error): the interval is the capacity itself. Equal ends alone
        do not say it: a launch that fits at neither end has 0 at both, its inputs still estimated."""
        return not any(term.error_bytes for term in self.estimate.terms)


def _estimate_of(
    model: ModelSpec, settings: LaunchSettings, gpu_total_bytes: int, gpu_name: str | None,
    measured: MeasuredInputs, load_mtp: bool, fits: dict[str, LinearTerm] | None, scale: IntervalScale | None,
    node_measures: tuple[NodeMeasure, ...], draft: ModelSpec | None, extrapolation: Extrapolation | None = None,
    version: ResolvedVersion | None = None,
) -> PreloadEstimate:  # fmt: skip
    first = predict(model, settings, gpu_total_bytes=gpu_total_bytes, gpu_name=gpu_name, measured=measured,
                    load_mtp=load_mtp, draft=draft, version=version)  # fmt: skip
    return preload_estimate(first, fits=fits, scale=scale, node_measures=node_measures, extrapolation=extrapolation)


def _solved(
    model: ModelSpec, settings: LaunchSettings, gpu_total_bytes: int, gpu_name: str | None,
    measured: MeasuredInputs, load_mtp: bool, estimate: PreloadEstimate, side: Literal["central", "low", "high"],
    draft: ModelSpec | None, version: ResolvedVersion | None = None,
) -> Ledger:  # fmt: skip
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes, gpu_name=gpu_name,
                   measured=measured.model_copy(update={"calibrated": estimate.figures(side)}), load_mtp=load_mtp,
                   draft=draft, version=version)  # fmt: skip


def calibrated_ledger(
    model: ModelSpec,
    settings: LaunchSettings,
    *,
    gpu_total_bytes: int,
    gpu_name: str | None = None,
    measured: MeasuredInputs | None = None,
    load_mtp: bool = False,
    draft: ModelSpec | None = None,
    fits: dict[str, LinearTerm] | None = None,
    node_measures: tuple[NodeMeasure, ...] = (),
    version: ResolvedVersion | None = None,
) -> Ledger:
    """The clean prediction: the ledger with what `measured` holds at the figures measured and every other
    pre-load term at its calibrated figure (docs/calibration.md) — never a flat guess where a fit exists
    (`draft`: a speculative draft's architecture, charged as `predict` charges it; `version`: how the release
    `settings.engine_version` names was found, as `predict` takes it)."""
    measured = measured or MeasuredInputs()
    # the centre is the same at any interval scale (only the ends take it)
    estimate = _estimate_of(model, settings, gpu_total_bytes, gpu_name, measured, load_mtp, fits, None, node_measures,
                            draft, version=version)  # fmt: skip
    return _solved(model, settings, gpu_total_bytes, gpu_name, measured, load_mtp, estimate, "central", draft, version)


def planned_capacity(
    model: ModelSpec,
    settings: LaunchSettings,
    *,
    gpu_total_bytes: int,
    gpu_name: str | None = None,
    measured: MeasuredInputs | None = None,
    load_mtp: bool = False,
    draft: ModelSpec | None = None,
    fits: dict[str, LinearTerm] | None = None,
    scale: IntervalScale | None = None,
    node_measures: tuple[NodeMeasure, ...] = (),
    extrapolation: Extrapolation | None = None,
) -> CapacityPlan:
    """The ledger a plan shows (its unmeasured terms calibrated) and the capacity interval around it
    (`draft`: a speculative draft's architecture, charged as `predict` charges it; `fits` and `scale`: as
    `preload_estimate` takes them, and `extrapolation` with them)."""
    measured = measured or MeasuredInputs()
    estimate = _estimate_of(model, settings, gpu_total_bytes, gpu_name, measured, load_mtp, fits, scale, node_measures,
                            draft, extrapolation)  # fmt: skip

    def solved(side: Literal["central", "low", "high"]) -> Ledger:
        return _solved(model, settings, gpu_total_bytes, gpu_name, measured, load_mtp, estimate, side, draft)

    def at_fraction(fraction: float) -> Ledger:
        field = engine_rules(settings.engine).memory_fraction_field or ""
        share = settings.model_copy(update={field: fraction})
        return _solved(model, share, gpu_total_bytes, gpu_name, measured, load_mtp, estimate, "central", draft)

    central = solved("central")
    ends = (central, solved("low"), solved("high"))
    start = host_start(central, estimate.unified_host, at_fraction)
    # each end the least and the most of the three solves: a term may move the budget against its usual way (a reserve
    # that is a share of the free memory before load grows with it: SGLang's, where the free memory after load fixes
    # the rest), and the ends then swap
    # a flag's block count is not memory's figure: not widened outside the corpus (`fixed_by` holds where both ends fit)
    widening = None if central.engine.capacity_fixed_by else estimate.extrapolation
    tokens = interval_ends([ledger.token_capacity for ledger in ends], widening)
    budgets = interval_ends([ledger.engine.kv_budget_bytes for ledger in ends], widening)
    requests = central.request_capacity
    interval = request_interval(requests, ends[1].request_capacity, ends[2].request_capacity) if requests else None
    if interval is not None and start is not None and start.refused_in_span:  # as the tokens: a refused end holds 0
        low = {"requests_min": 0, "slots_min": 0}
        interval = interval.model_copy(update=low | ({"requests_max": 0, "slots_max": 0}
                                                     if start.refused_across_span else {}))  # fmt: skip
    return CapacityPlan(
        ledger=central,
        estimate=estimate,
        start=start,
        token_capacity_min=0 if start and start.refused_in_span else tokens[0],
        token_capacity_max=0 if start and start.refused_across_span else tokens[1],
        kv_budget_min_bytes=budgets[0],
        kv_budget_max_bytes=budgets[1],
        requests=interval,
    )

