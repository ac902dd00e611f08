"""What a unified-memory host took while an engine that sizes from the total started, as the fits give it
(`unified_start.UNIFIED_START_KEY`; the mechanism: kvtop/domain/calibration/unified_start.py).

`start_excess` measures, for each start on a unified-memory device (GB10, Jetson) of an engine that sizes from the
total and whose release reads the kernel's available memory (vLLM from v0.11.1: `EngineRules.reads_available_memory`),
what it left beside its weights (the log's, else the book's) and its KV (the logged GiB, else the budget × the logged
tokens ÷ the plan's) beyond its plan's runtime terms, planned without this figure. A start whose KV is set in bytes
(`--kv-cache-memory-bytes`: no profile sizes it) or whose runtime terms its record excludes tells nothing.
`unified_fits` holds the 90th percentile of their distances from 0 as the half-width (each source weighing one,
rounded up to the MiB), of the starts but the judged source's, so the judgement plans each such start with the other
sources' span, like every other figure; a fold with none left has no fit, and the plan widens nothing for it. The
centre is not moved: judged leave-one-source-out, a centre at the other sources' median (session 68: 1.22 GiB of all
seven sources, 1.87 GiB without tennsoku's) predicted no better than none (the seven sources' medians lie 14.6 GiB
from it in all, 14.1 GiB from 0) and moved 3 of the corpus's GB10 starts out of 5 % (fully blind 18 → 17 of 30 within,
weights logged 12 → 10 of 19): what the host takes is the host's (tennsoku's 0.2 – 1.6 GiB, bakeer's 1.1 – 4.1)."""

from __future__ import annotations

from benchmarks.calibration.corpus import Record
from benchmarks.calibration.desktop import engine_terms, left_beside_plan
from benchmarks.calibration.evaluate import Corpus, left_out
from kvtop.domain.calibration.fit import held_out_quantile
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import RUNTIME_TERMS, Term
from kvtop.domain.calibration.unified_start import UNIFIED_START_KEY, unified_start_fit
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.gpus import gpu_key, is_unified
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import MIB


def start_excess(record: Record, fits: dict[str, LinearTerm]) -> int | None:
    """Bytes the start left beside weights and KV beyond its plan's runtime terms (negative: less than they charge);
    None where it tells nothing (see the module's docstring)."""
    if record.model is None or record.gpu_total_bytes is None or not is_unified(gpu_key(record.gpu)):
        return None
    rules = engine_rules(record.engine)
    if not rules.reads_available_memory(record.version):
        return None
    if record.settings.kv_cache_memory_bytes is not None:  # the KV set in bytes: no profile sized it
        return None
    terms = engine_terms(record)
    if Term.CONTEXT in terms or not terms & set(RUNTIME_TERMS):  # sizes from the free memory, or no runtime term
        return None
    if any(record.excluded(term) for term in RUNTIME_TERMS):
        return None
    without = {key: fit for key, fit in fits.items() if key != UNIFIED_START_KEY}
    return left_beside_plan(record, without)


def start_span(corpus: Corpus, fits: dict[str, LinearTerm],
               leave_out: str | None = None) -> tuple[int, list[tuple[str, int]]]:  # fmt: skip
    """(the half-width rounded up to the MiB, each record's figure) of such starts but `leave_out`'s: the 90th
    percentile of their distances from 0, each source weighing one (`held_out_quantile`, corrected as the fits'
    errors are). The centre stays 0 (see the module's docstring)."""
    records = [record for records in corpus.values() for record in records if not left_out(record, leave_out)]
    found = [(record, excess) for record in records if (excess := start_excess(record, fits)) is not None]
    if not found:
        return 0, []
    half = held_out_quantile([abs(excess) for _, excess in found], 0.9, [record.source for record, _ in found],
                             corrected=True)  # fmt: skip
    return round_up(round(half), MIB), [(record.id, excess) for record, excess in found]


def unified_fits(corpus: Corpus, fits: dict[str, LinearTerm], leave_out: str | None = None) -> dict[str, LinearTerm]:
    """The figure as a fit, of the starts but `leave_out`'s against `fits` (the same fold's): none where no start
    tells anything."""
    half, found = start_span(corpus, fits, leave_out)
    if not found:
        return {}
    records = {record.id: record for records in corpus.values() for record in records}
    fit = unified_start_fit(half, len(found), len({records[record_id].source for record_id, _ in found}))
    return {fit.key: fit}
