"""What a desktop sharing the card (Windows, WSL2: `host: desktop` records) held before the engine started beyond
what a Linux start of the same launch holds, as the fits give it: `host_memory.DESKTOP_HELD_BYTES` is the most of it.

A record whose log printed the free memory before the load held CUDA's total less that free memory (`observed`);
a Linux start holds the plan's context term (the per-SM context fit, its communicators), so the desktop held the
rest. A record that printed only its capacity (LMDeploy's blocks) held the most free memory less than the plan
assumes that still gives the logged capacity: the plan is solved again with the free memory before the load given,
less by whole MiB (`most_held`). A record whose engine sizes from the total (no context term in its plan) tells
nothing of its budget, but where its source printed the free memory at the start (`free_at_start`, GiB: vLLM V1's
startup check 'Free memory on device (3.21/4.0 GiB) on startup', or the source's own reading of it) the desktop held
CUDA's total less that, less one process's CUDA context (the engine-neutral fit, `cuda_context.one_process_context`;
a card whose context is only assumed tells nothing): three WSL2 sources then measure the desktop (session 58).

An engine that sizes from the total (vLLM) reads the device's free memory while it profiles, so what a desktop takes
then comes off its KV cache (`host_memory.DESKTOP_DURING_PROFILE`): `profile_excess` measures, for each of its desktop
starts, what the start left beside weights (the log's, else the book's) and KV (the logged tokens or GiB) beyond the
plan's runtime terms, and `host_memory.DESKTOP_PROFILE_BYTES` is the most of it (the low end takes it); what a desktop
gives back then enters the engine's non-KV memory with its sign, so the most any such start left below its plan
(`given_back_span`) is `host_memory.DESKTOP_GIVEN_BACK_BYTES` (the high end gives it back).

`desktop_fits` holds those figures as fits (`DESKTOP_HELD_KEY`, `DESKTOP_PROFILE_KEY`, `DESKTOP_GIVEN_BACK_KEY`) among `evaluate.fit_all`'s,
so the judgement plans a desktop start with the figures of the other sources' desktop starts, like every other figure;
a fold with none left has no desktop fit, and its plan's low end takes nothing for the desktop (what the product takes
with no desktop start in the corpus: 0 bytes), the desktop only said "not modelled".
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.calibration.corpus import Record
from benchmarks.calibration.evaluate import Corpus, left_out, observed
from benchmarks.calibration.fold_memo import fold_memo
from kvtop.domain.calibration.cuda_context import one_process_context
from kvtop.domain.calibration.estimate import (
    CapacityPlan,
    calibrated_ledger,
    calibration_inputs,
    planned_capacity,
)
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.plan_fits import desktop_fit, desktop_given_back_fit, desktop_profile_fit
from kvtop.domain.calibration.terms import RUNTIME_TERMS, Term
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_key
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import GIB, MIB

SEARCH_LIMIT_MIB = 4096  # no desktop was seen to hold 4 GiB beyond Linux: a search that gets there has found nothing


def _plan(record: Record, fits: dict[str, LinearTerm], free_before: int | None) -> CapacityPlan:
    assert record.model is not None and record.gpu_total_bytes is not None
    measured = record.host_measured(free_before_load_bytes=free_before)
    return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes, draft=record.draft,
                            gpu_name=gpu_key(record.gpu), measured=measured, fits=fits)  # fmt: skip


def desktop_excess(record: Record, fits: dict[str, LinearTerm]) -> int | None:
    """Bytes the desktop held at the record's start beyond the plan's Linux context (None: nothing to tell); planned
    again only where a fit the last plan read changed (`fold_memo`: each fold of the judgement asks again)."""
    if not record.desktop or record.model is None or record.gpu_total_bytes is None:
        return None
    return fold_memo(record, "desktop_excess", fits, lambda subset, read: _desktop_excess(record, subset, read))


def _desktop_excess(record: Record, subset: dict[str, LinearTerm], fits: dict[str, LinearTerm]) -> int | None:
    """`desktop_excess`, the plans made with `subset` (the engine's fits of `fits`: all a plan reads, `fold_memo`)."""
    plan = _plan(record, subset, None)
    terms = {estimate.term: estimate.bytes for estimate in plan.estimate.terms}
    if Term.CUDA_TOTAL not in terms:
        return None
    if Term.CONTEXT not in terms:  # the engine sizes from the total: a desktop's share is not in its budget
        return held_at_start(record, plan, terms[Term.CUDA_TOTAL], fits)
    held = observed(record, Term.CONTEXT, fits)
    if held is not None:
        return held - terms[Term.CONTEXT]
    if not record.tokens:
        return None
    linux_free = terms[Term.CUDA_TOTAL] - terms[Term.CONTEXT]
    return most_held(lambda mib: _centre_tokens(record, subset, linux_free - mib * MIB) >= record.tokens)


def _centre_tokens(record: Record, fits: dict[str, LinearTerm], free_before: int) -> int:
    """The tokens of `_plan(record, fits, free_before).ledger`, its centre only: `calibrated_ledger` is that ledger
    (the same estimate, unscaled as `_plan`'s, solved at the centre) without the two ends' solves and the host's
    start `planned_capacity` adds, which the search's 13 plans per fold never read."""
    assert record.model is not None and record.gpu_total_bytes is not None
    measured = record.host_measured(free_before_load_bytes=free_before)
    return calibrated_ledger(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes, draft=record.draft,
                             gpu_name=gpu_key(record.gpu), measured=measured, fits=fits).token_capacity  # fmt: skip


def held_at_start(record: Record, plan: CapacityPlan, total: int, fits: dict[str, LinearTerm]) -> int | None:
    """Bytes the desktop held at a start its source printed the free memory of (`free_at_start`, GiB) beyond one
    process's CUDA context on the card (None: no such print, or a card whose context is only assumed)."""
    printed = record.raw.get("free_at_start")
    if printed is None:
        return None
    context = one_process_context(calibration_inputs(plan.ledger), fits, "the desktop's share at the start")
    if context.assumed_because is not None or context.source != "calibrated":
        return None
    return total - round(float(printed) * GIB) - context.bytes


def most_held(holds: Callable[[int], bool], limit_mib: int = SEARCH_LIMIT_MIB) -> int | None:
    """Bytes of the most whole MiB below `limit_mib` the desktop may have held with the logged capacity still given
    (`holds(mib)`); None where not even 0 gives it. Found by bisection: a plan's capacity never grows as its free
    memory shrinks (each engine's budget is a share of the free memory, cut into whole blocks), so `holds` is true up
    to one MiB and false past it, and the boundary a MiB-by-MiB walk meets is the one halving meets, in 13 plans of
    the walk's hundreds (each fold of a leave-one-source-out judgement searches again; session 53: the walk's figure
    on each of the 180 folds' searches, 161 to 171 MiB for lmdeploy#1703)."""
    if not holds(0):
        return None
    low, high = 0, limit_mib  # holds(low); every MiB from high on is past the search
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if holds(middle) else (low, middle)
    return low * MIB


def desktop_held(corpus: Corpus, fits: dict[str, LinearTerm],
                 leave_out: str | None = None) -> tuple[int, list[tuple[str, int]]]:  # fmt: skip
    """(the most any desktop start but `leave_out`'s held beyond Linux, rounded up to the MiB; each record's figure)."""
    found = [(record.id, excess) for records in corpus.values() for record in records
             if not left_out(record, leave_out) and (excess := desktop_excess(record, fits)) is not None]  # fmt: skip
    most = max((excess for _, excess in found), default=0)
    return round_up(most, MIB), found


def profile_excess(record: Record, fits: dict[str, LinearTerm]) -> int | None:
    """Bytes a desktop start of an engine that sizes from the total left beside weights and KV beyond its plan's
    runtime terms (negative: less than they charge); None where it tells nothing (not a desktop start, an engine that
    sizes from the free memory, no logged capacity, a launch kvtop cannot plan). The plan's KV budget less the logged
    KV: the logged GiB, or the budget × the logged tokens ÷ the plan's (within a block: tokens are the budget cut
    into whole blocks of one size)."""
    if not record.desktop or record.model is None or record.gpu_total_bytes is None:
        return None
    terms = engine_terms(record)
    if Term.CONTEXT in terms or not terms & set(RUNTIME_TERMS):  # sizes from the free memory, or no runtime term
        return None
    return left_beside_plan(record, fits)


def engine_terms(record: Record) -> frozenset[Term]:
    """The terms the engine's own rules give the record's launch, with no fit (no fit decides which terms exist): made
    once per record (`Record.memo`), which each fold's desktop and unified-memory spans ask again."""
    return record.memo(("engine_terms", ""), lambda r=record: frozenset(
        estimate.term for estimate in engine_rules(r.engine).calibration.terms(r.inputs(), {})))  # fmt: skip


def left_beside_plan(record: Record, fits: dict[str, LinearTerm]) -> int | None:
    """Bytes a start left beside weights and KV beyond its plan's runtime terms, planned with `fits` (the logged
    weights where printed); None where it tells nothing (no plan to measure, no logged capacity, a launch kvtop
    cannot plan). Shared by the desktop span here and the unified-memory span (unified.py); planned again only where
    a fit the last plan read changed (`fold_memo`)."""
    return fold_memo(record, "left_beside_plan", fits, lambda subset, _: _left_beside_plan(record, subset))


def _left_beside_plan(record: Record, fits: dict[str, LinearTerm]) -> int | None:
    weights = record.figures.get("weights")
    if weights is None and record.excluded(Term.WEIGHTS):  # its config misstates the weights: no plan to measure
        return None
    stage = engine_rules(record.engine).logged_weights_stage if weights is not None else None
    measured = record.host_measured(weights_bytes=weights, weights_stage=stage)
    try:
        ledger = calibrated_ledger(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                                   gpu_name=gpu_key(record.gpu), measured=measured, draft=record.draft,
                                   fits=fits)  # fmt: skip
    except UnsupportedModelError:
        return None
    budget = ledger.engine.kv_budget_bytes
    if record.tokens and ledger.token_capacity > 0:
        return round(budget - budget * record.tokens / ledger.token_capacity)
    kv = record.figures.get("kv")
    return budget - round(kv) if kv is not None and kv > 0 else None


def profile_span(corpus: Corpus, fits: dict[str, LinearTerm],
                 leave_out: str | None = None) -> tuple[int, list[tuple[str, int]]]:  # fmt: skip
    """(the most any such start but `leave_out`'s left beyond its plan, rounded up to the MiB, 0 where none left
    more; each record's figure): the engines whose plans size from the total, planned with `fits`."""
    found = [(record.id, excess) for records in corpus.values() for record in records
             if not left_out(record, leave_out) and (excess := profile_excess(record, fits)) is not None]  # fmt: skip
    most = max((excess for _, excess in found), default=0)
    return round_up(max(most, 0), MIB), found


def given_back_span(corpus: Corpus, fits: dict[str, LinearTerm],
                    leave_out: str | None = None) -> tuple[int, list[tuple[str, int]]]:  # fmt: skip
    """(the most any such start but `leave_out`'s left below its plan, rounded up to the MiB, 0 where none left
    less; each record's figure, as `profile_span`'s): what a desktop gave back during vLLM's profile enters its non-KV
    memory with its sign, so the high end gives it back (`host_memory.DESKTOP_GIVEN_BACK_BYTES`)."""
    return _given_back(profile_span(corpus, fits, leave_out))


def _given_back(profile: tuple[int, list[tuple[str, int]]]) -> tuple[int, list[tuple[str, int]]]:
    """`given_back_span` of `profile_span`'s figures (made once per fold by `desktop_fits`: each is a plan)."""
    _, found = profile
    least = min((excess for _, excess in found), default=0)
    return round_up(max(-least, 0), MIB), found


def desktop_fits(corpus: Corpus, fits: dict[str, LinearTerm], leave_out: str | None = None) -> dict[str, LinearTerm]:
    """The desktop's share and its span during the profile as fits, of the desktop starts but `leave_out`'s against
    `fits` (the same fold's): none where no such start tells anything (the plan's low end then takes nothing)."""
    records = {record.id: record for records in corpus.values() for record in records}
    out: dict[str, LinearTerm] = {}
    profile = profile_span(corpus, fits, leave_out)  # the given-back span reads the same figures: planned once
    spans = ((desktop_held(corpus, fits, leave_out), desktop_fit), (profile, desktop_profile_fit),
             (_given_back(profile), desktop_given_back_fit))  # fmt: skip
    for (most, found), make in spans:
        if found:
            fit = make(most, len(found), len({records[record_id].source for record_id, _ in found}))
            out[fit.key] = fit
    return out
