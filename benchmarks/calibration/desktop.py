"""What a desktop sharing the card (Windows, WSL2: `host: desktop` records) held before the engine started beyond
what a Linux start of the same launch holds, as the fits give it: `host_memory.DESKTOP_HELD_BYTES` is the most of it.

A record whose log printed the free memory before the load held CUDA's total less that free memory (`observed`);
a Linux start holds the plan's context term (the per-SM context fit, its communicators), so the desktop held the
rest. A record that printed only its capacity (LMDeploy's blocks) held the most free memory less than the plan
assumes that still gives the logged capacity: the plan is solved again with the free memory before the load given,
a MiB at a time less. A record whose engine sizes from the total (no context term in its plan) tells nothing.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import Record
from benchmarks.calibration.evaluate import Corpus, observed
from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_key
from kvtop.domain.wording import MIB

SEARCH_LIMIT_MIB = 4096  # no desktop was seen to hold 4 GiB beyond Linux: a search that gets there has found nothing


def _plan(record: Record, fits: dict[str, LinearTerm], free_before: int | None) -> CapacityPlan:
    assert record.model is not None and record.gpu_total_bytes is not None
    measured = MeasuredInputs(free_before_load_bytes=free_before)
    return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=measured, fits=fits)  # fmt: skip


def desktop_excess(record: Record, fits: dict[str, LinearTerm]) -> int | None:
    """Bytes the desktop held at the record's start beyond the plan's Linux context (None: nothing to tell)."""
    if not record.desktop or record.model is None or record.gpu_total_bytes is None:
        return None
    terms = {estimate.term: estimate.bytes for estimate in _plan(record, fits, None).estimate.terms}
    if Term.CONTEXT not in terms or Term.CUDA_TOTAL not in terms:
        return None  # the engine sizes from the total: a desktop's share is not in its budget
    held = observed(record, Term.CONTEXT, fits)
    if held is not None:
        return held - terms[Term.CONTEXT]
    if not record.tokens:
        return None
    linux_free = terms[Term.CUDA_TOTAL] - terms[Term.CONTEXT]
    most = None
    for mib in range(SEARCH_LIMIT_MIB):
        if _plan(record, fits, linux_free - mib * MIB).ledger.token_capacity < record.tokens:
            break
        most = mib * MIB
    return most


def desktop_held(corpus: Corpus, fits: dict[str, LinearTerm]) -> tuple[int, list[tuple[str, int]]]:
    """(the most any desktop start held beyond Linux, rounded up to the MiB; each record's figure)."""
    found = [(record.id, excess) for records in corpus.values() for record in records
             if (excess := desktop_excess(record, fits)) is not None]  # fmt: skip
    most = max((excess for _, excess in found), default=0)
    return -(-most // MIB) * MIB, found
