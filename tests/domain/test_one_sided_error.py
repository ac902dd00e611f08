"""A term's error that only raises it (`TermEstimate.raise_only_bytes`; #27, session 71): the capacity's low end takes
it, its high end does not move.

Two of vLLM's widenings are such errors: a pinned copy segment (pinned_copy.py, v0.29.0 – v0.30.x V2) and a hybrid's
first FULL capture with prefix caching (hybrid_graph_sample.py, v0.24.0 – v0.27.x). Each can only lower the KV budget,
so until session 71 their symmetric half-width raised the high end for nothing. Expected values from independent
sources: the committed graph fit's held-out error (`vllm.cuda_graphs`, read from the committed block: 1,038,489,157 B at the refit 5f9ab079), the
widening's own stated figure (2.21 GiB at 8,192 sample tokens: fentz26's log, 3.51 GiB estimated against kvtop's
1.30), a model config's embedding table by hand, and synthetic terms whose ends are worked out by hand below.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest

import kvtop.domain.engines.vllm.compile_benchmark as compile_benchmark
import kvtop.domain.engines.vllm.hybrid_graph_sample as hybrid_graph_sample
import kvtop.domain.engines.vllm.v2_graphs as v2_graphs
from benchmarks.calibration.corpus import Record, by_id
from kvtop.commands.render_ledger import estimate_term_json, plan_text, term_error
from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.ranges import runtime_range
from kvtop.domain.calibration.terms import PreloadEstimate, Term, TermEstimate
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.gpus import gpu_key
from kvtop.domain.wording import GIB

RECORDS = by_id()
# a hybrid with prefix caching at v0.27.1 on a unified-memory host (GB10), where the raise-only widening stays (the
# calibrated centre, `vllm.hybrid_sample`, has no row of such a host: hybrid_graph_sample.py, session 72)
BAKEER = "bakeer-qwen3.8-27b-fp8-gb10-v0271-nospec-u080-mml131072"
HAITANG = "haitang89-semianalysis-qwen3.8-27b-fp8-h200-v0290-len32768-lmonly"  # V2 at v0.29.0, the copy pinned
GRAPH_FIT_ERROR = FITS["vllm.cuda_graphs"].error_bytes  # its held-out error, the committed fit's (1,038,489,157 B at 5f9ab079)
HYBRID_SAMPLE = round(2.21 * GIB)  # what fentz26's estimate took off beyond kvtop's graph term, at 8,192 tokens
# Qwen3.6-27B's table, 248,320 × 5,120 × 2 B = 2,542,796,800 B = 1,212.5 × 2 MiB: a segment of 1,213 × 2,097,152 B
QWEN36_27B_SEGMENT = 1_213 * 2_097_152
NGRAM_V1 = "kuotunyu-slolab-qwen3-8b-fp8-ngram3-rtx4090-wsl2-w4-u082-s256-v0280"  # V1 runner, v0.28.0, the copy pinned
# Qwen3-8B's table, 151,936 × 4,096 × 2 B = 1,244,659,712 B = 593.5 × 2 MiB: a segment of 594 × 2,097,152 B
QWEN3_8B_SEGMENT = 594 * 2_097_152


def _term(error: float, below: float | None = None, term: Term = Term.CUDA_GRAPHS, value: float = 1.0) -> TermEstimate:
    estimate = TermEstimate(term=term, label=term.value, bytes=round(value * GIB), error_bytes=round(error * GIB),
                            source="calibrated", basis="by hand")  # fmt: skip
    return estimate if below is None else estimate.with_error(estimate.error_bytes, round((error - below) * GIB))


def test_a_term_is_symmetric_unless_told() -> None:
    term = _term(1.0).plus(error_bytes=round(3 * GIB), why="x")
    assert not term.one_sided and term.raise_only_bytes == 0
    assert term.error_below_bytes == term.error_bytes == round(math.hypot(1, 3) * GIB)
    assert term.error_towards("low") == term.error_towards("high") == term.error_bytes
    assert term_error(term) == "± 3.16 GiB" and term.one_sided_words is None


def test_a_raise_only_error_widens_the_side_above_alone() -> None:
    # 1 GiB fitted, + 3 GiB that only raises the term: above √(1² + 3²) = 3.16 GiB, below 1 GiB; a symmetric 2 GiB
    # after it adds to both sides as independent errors (above √(1 + 9 + 4) = 3.74, below √(1 + 4) = 2.24 GiB)
    term = _term(1.0).plus(error_bytes=3 * GIB, why=None, raise_only=True)
    assert (term.error_bytes, term.error_below_bytes) == (round(math.sqrt(10) * GIB), GIB)
    assert term.error_towards("low") == term.error_bytes and term.error_towards("high") == GIB  # takes from KV
    assert term_error(term) == "+ 3.16 / − 1.00 GiB"
    assert "3.16 GiB above its figure and 1.00 GiB below it" in (term.one_sided_words or "")
    assert "the capacity's low end takes the wider side, its high end the narrower" in (term.one_sided_words or "")
    both = term.plus(error_bytes=2 * GIB, why=None)
    assert abs(both.error_bytes - math.sqrt(14) * GIB) <= 1 and abs(both.error_below_bytes - math.sqrt(5) * GIB) <= 1
    # CUDA's total gives KV: a part that only raises it is the high end's
    total = _term(1.0, term=Term.CUDA_TOTAL, value=80).model_copy(update={"more_is_more_kv": True})
    total = total.plus(error_bytes=3 * GIB, why=None, raise_only=True)
    assert total.error_towards("high") == total.error_bytes and total.error_towards("low") == GIB


def test_each_end_combines_its_own_side() -> None:
    """An activation peak of 4 GiB ± 1 and graphs of 1 GiB + 3 / − 1: the low end's errors together √(1 + 9) GiB, the
    high end's √(1 + 1); each end shares its combined error in proportion to the terms' errors on its side (at the
    high end 1 : 1, each moving √2 ÷ 2 GiB, under their own 1 GiB and their bytes)."""
    estimate = PreloadEstimate(engine="vllm", terms=(_term(1.0, term=Term.ACTIVATION, value=4), _term(3.0, below=1.0)))
    assert estimate.combined_error_at("low") == round(math.sqrt(10) * GIB)
    assert estimate.combined_error_at("high") == round(math.sqrt(2) * GIB)
    assert estimate.combined_error_bytes == round(math.sqrt(10) * GIB)  # the wider side
    assert abs((estimate.figures("low").non_kv_bytes or 0) - (5 + math.sqrt(10)) * GIB) <= 2
    assert abs((estimate.figures("high").non_kv_bytes or 0) - (5 - math.sqrt(2)) * GIB) <= 2
    assert [term.term for term in estimate.one_sided] == [Term.CUDA_GRAPHS]
    # `explain --gpu`'s runtime range reads the same sides: its high end is the capacity's low end's
    ranged = runtime_range(estimate)
    assert ranged is not None and ranged.value_bytes == 5 * GIB
    assert abs(ranged.high_bytes - (5 + math.sqrt(10)) * GIB) <= 1 and abs(ranged.low_bytes - (5 - math.sqrt(2)) * GIB) <= 1
    assert "graphs 1.00 GiB + 3.00 / − 1.00 GiB" in ranged.basis and "one-sided: the error of cuda_graphs" in ranged.basis
    # the range's own high end takes the wider side: the words name the capacity's end, not "the interval's"
    assert "the capacity's low end takes the wider side" in ranged.basis and "interval's low end" not in ranged.basis


def _plan(record: Record) -> CapacityPlan:
    assert record.model is not None and record.gpu_total_bytes is not None and record.tokens is not None
    return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu))  # fmt: skip


def _plan_without(record: Record, monkeypatch: pytest.MonkeyPatch) -> CapacityPlan:
    """The record's plan without either widening (what each end was before it)."""
    with monkeypatch.context() as patched:
        patched.setattr(hybrid_graph_sample, "hybrid_sample_widening", lambda inputs: None)
        patched.setattr(v2_graphs, "pinned_copy", lambda copy, inputs: (0, ""))
        patched.setattr(compile_benchmark, "pinned_copy", lambda copy, inputs: (0, ""))
        return _plan(record)


def _as_symmetric(plan: CapacityPlan) -> PreloadEstimate:
    """The plan's estimate with its graph term's error a half-width both ways (as session 70 carried it)."""
    terms = tuple(term.with_error(term.error_bytes, 0) for term in plan.estimate.terms)
    return plan.estimate.model_copy(update={"terms": terms})


def test_the_hybrids_transient_lowers_the_low_end_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """bakeer's GB10 start (v0.27.1, a unified-memory host, where the widening stays): the graph term errs √(fit² +
    2.21²) above its figure and the fit's error below; the high end is the plan without the widening, the low end the
    one the widening gives."""
    record = RECORDS[BAKEER]
    plan, without = _plan(record), _plan_without(record, monkeypatch)
    graphs = plan.estimate.term(Term.CUDA_GRAPHS)
    assert graphs is not None
    assert abs(graphs.error_bytes - math.hypot(GRAPH_FIT_ERROR, HYBRID_SAMPLE)) <= 1
    assert graphs.error_below_bytes == GRAPH_FIT_ERROR
    # each other term's own side (a unified host's start span is one-sided too: unified_start.py)
    low = [term.error_towards("low") for term in plan.estimate.terms if term.term is not Term.CUDA_GRAPHS]
    high = [term.error_towards("high") for term in plan.estimate.terms if term.term is not Term.CUDA_GRAPHS]
    scale = plan.estimate.interval_scale
    assert abs(plan.estimate.combined_error_at("low") - scale * math.sqrt(sum(e**2 for e in low) + graphs.error_bytes**2)) <= 1
    assert abs(plan.estimate.combined_error_at("high") - scale * math.sqrt(sum(e**2 for e in high) + GRAPH_FIT_ERROR**2)) <= 1
    assert plan.ledger.token_capacity == without.ledger.token_capacity  # the centre is the fit's (op not found)
    assert plan.token_capacity_max == without.token_capacity_max
    assert plan.token_capacity_min < without.token_capacity_min
    assert plan.estimate.figures("low") == _as_symmetric(plan).figures("low")  # the low end as session 70's
    assert plan.estimate.figures("high") != _as_symmetric(plan).figures("high")
    assert plan.token_capacity_min <= (record.tokens or 0) <= plan.token_capacity_max  # its log: 980,026 tokens


def test_the_pinned_segment_lowers_the_low_end_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """haitang89's H200 start at v0.29.0 (V2, cold): the graph term's error holds the table's pinned segment above its
    figure only; the high end is the plan without it (session 70's widening raised it, the term's floor not
    stopping it there), the low end falls by it."""
    record = RECORDS[HAITANG]
    plan, without = _plan(record), _plan_without(record, monkeypatch)
    graphs, plain = plan.estimate.term(Term.CUDA_GRAPHS), without.estimate.term(Term.CUDA_GRAPHS)
    assert graphs is not None and plain is not None
    assert graphs.raise_only_bytes == QWEN36_27B_SEGMENT
    assert graphs.error_bytes - plain.error_bytes == QWEN36_27B_SEGMENT  # as it stands, one figure (v2_graphs.py)
    assert graphs.error_below_bytes == plain.error_below_bytes  # (its part below only: the compile state, unsaid)
    assert plan.ledger.token_capacity == without.ledger.token_capacity
    assert plan.token_capacity_max == without.token_capacity_max
    assert plan.token_capacity_min < without.token_capacity_min
    assert plan.token_capacity_min <= (record.tokens or 0) <= plan.token_capacity_max  # its log: 1,358,506 tokens


def test_the_views_say_it_is_one_sided() -> None:
    plan = _plan(RECORDS[BAKEER])
    graphs = plan.estimate.term(Term.CUDA_GRAPHS)
    assert graphs is not None
    above, below = math.hypot(GRAPH_FIT_ERROR, HYBRID_SAMPLE) / GIB, GRAPH_FIT_ERROR / GIB  # 2.42 and 0.97 GiB (0.967 at 5f9ab079)
    said = f"+ {above:.2f} / − {below:.2f} GiB"
    text = plan_text(plan)
    assert said in text
    assert "the interval is one-sided: the error of vLLM's CUDA-graph estimate is" in " ".join(text.split())
    as_json = estimate_term_json(graphs)
    assert as_json["error_below_bytes"] == GRAPH_FIT_ERROR and as_json["error_bytes"] == graphs.error_bytes


def test_an_error_change_keeps_the_one_sided_part_and_refuses_a_wrong_one() -> None:
    """0 ≤ raise_only_bytes ≤ error_bytes, checked on construction and by `with_error` (every change of an error); a
    rewrite of the error keeps the part only the side above carries unless told (the 1 GiB + 3 / − 1 term above: a
    fitted error of 2 GiB swapped in keeps + 2 / − 0, not ± 2)."""
    with pytest.raises(ValueError, match="raise_only_bytes"):
        TermEstimate(term=Term.ACTIVATION, label="a", bytes=GIB, error_bytes=GIB, raise_only_bytes=2 * GIB,
                     source="calibrated", basis="by hand")  # fmt: skip
    term = _term(3.0, below=1.0)
    with pytest.raises(ValueError, match="raise_only_bytes"):
        term.with_error(GIB)  # 2 GiB raise-only inside a 1 GiB error
    swapped = term.with_error(3 * GIB, basis="refitted")
    assert (swapped.error_bytes, swapped.error_below_bytes, swapped.basis) == (3 * GIB, GIB, "refitted")
    added = term.widened_by(GIB, GIB)  # + 1 both ways, + 1 above only: above 5, below 2
    assert (added.error_bytes, added.error_below_bytes) == (5 * GIB, 2 * GIB)


def test_no_error_is_rewritten_outside_the_terms_method() -> None:
    """A `model_copy(update={"error_bytes": …})` drops the one-sided part unless it says it (review R1, session 71: five
    did): every change of a term's error goes through `TermEstimate.with_error` (`widened_by`, `plus`), none through a
    literal update anywhere in kvtop (it found the seven sites it replaced: compile_benchmark.py twice, v2_graphs.py
    twice, calibration_activation.py, calibration_non_torch.py, weights.py, and estimate.py's and support.py's)."""
    root = Path(__file__).resolve().parents[2] / "kvtop"
    found = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "model_copy":
                update = next((k.value for k in node.keywords if k.arg == "update"), None)
                keys = {k.value for k in update.keys if isinstance(k, ast.Constant)} if isinstance(update, ast.Dict) else set()
                if keys & {"error_bytes", "raise_only_bytes", "lower_only_bytes"}:
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found


def test_both_json_views_write_the_side_below() -> None:
    """`plan --json` (render_ledger) and `explain --json` (a term's own dump, estimated.others[]) write one shape."""
    term = _term(3.0, below=1.0)
    dumped = term.model_dump()
    assert (dumped["error_bytes"], dumped["error_below_bytes"]) == (3 * GIB, GIB)
    assert estimate_term_json(term)["error_below_bytes"] == dumped["error_below_bytes"]
    assert TermEstimate.model_validate(dumped) == term  # the derived field is read back as nothing


def test_the_one_sided_sentence_only_where_the_interval_has_width() -> None:
    """haitang89's plan (a pinned segment, one-sided) with --kv-cache-memory-bytes 3 GiB: the capacity is the flag's,
    so no end takes any side; the error column still as wide as its widest entry."""
    record = RECORDS[HAITANG]
    plan = _plan(record)
    text = plan_text(plan)
    assert "the interval is one-sided" in text
    assert record.model is not None and record.gpu_total_bytes is not None
    fixed = planned_capacity(record.model, record.settings.model_copy(update={"kv_cache_memory_bytes": 3 * GIB}),
                             gpu_total_bytes=record.gpu_total_bytes, gpu_name=gpu_key(record.gpu))  # fmt: skip
    assert fixed.interval_kind.value == "fixed_by_flag"
    assert "one-sided" not in plan_text(fixed)
    graphs = plan.estimate.term(Term.CUDA_GRAPHS)
    assert graphs is not None and len(term_error(graphs)) > 13  # '+ 3.15 / − 1.95 GiB'
    # the source column at one place in every term's row (13 characters for '± 0.12 GiB' once pushed it 6 places)
    starts = {found.end() - len(term.source) for term in plan.estimate.terms for line in text.splitlines()
              if (found := re.search(re.escape(term_error(term)) + " +" + term.source, line))}  # fmt: skip
    assert len(starts) == 1 and len(plan.estimate.terms) >= 5, starts


def test_the_pinned_widening_on_the_v1_runner_leaves_the_high_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """kuotunyu's n-gram start (v0.28.0, the V1 runner): the activation term's pinned segment (594 × 2 MiB of
    Qwen3-8B's table) only lowers the low end; the high end is the plan's without it."""
    record = RECORDS[NGRAM_V1]
    plan, without = _plan(record), _plan_without(record, monkeypatch)
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.raise_only_bytes == QWEN3_8B_SEGMENT
    assert plan.token_capacity_max == without.token_capacity_max
    assert plan.token_capacity_min < without.token_capacity_min


def test_a_copy_cannot_rewrite_the_error_nor_drop_a_key() -> None:
    """Review R5 (C3-2, C3-3): `model_copy(update=variable)` passed the AST guard and dropped the one-sided part (a
    3 GiB error with 2 GiB above only copied to 4 GiB with raise_only 2 GiB silently unchecked, or 0.5 GiB with 2 GiB
    raise-only beyond it); `with_error(6, bsis=…)` kept the old basis, `error_below_bytes=` was dropped."""
    term = _term(3.0, below=1.0)
    update = {"error_bytes": GIB // 2}
    with pytest.raises(ValueError, match="with_error"):
        term.model_copy(update=update)
    with pytest.raises(ValueError, match="with_error"):
        term.model_copy(update={"raise_only_bytes": 0})
    assert term.model_copy(update={"basis": "b"}).basis == "b"
    with pytest.raises(ValueError, match="bsis"):
        term.with_error(6 * GIB, bsis="x")
    with pytest.raises(ValueError, match="error_below_bytes"):
        term.with_error(6 * GIB, error_below_bytes=GIB)


def test_a_lower_only_error_widens_the_side_below_alone() -> None:
    """The mirror (`lower_only_bytes`; review R7 H3-1): graphs of 2 GiB ± 1 charged with a 1.5 GiB part a start may not
    hold: above 1 GiB, below 1 + 1.5 = 2.5 GiB; the capacity's high end (more KV) takes the wider side. A symmetric
    2 GiB after it adds to both sides as independent errors (above √(1 + 4) = 2.24, below √(6.25 + 4) = 3.20 GiB)."""
    term = _term(1.0, value=2.0).widened_by(lower_only_bytes=round(1.5 * GIB))
    assert (term.error_bytes, term.error_below_bytes, term.lower_only_bytes) == (GIB, round(2.5 * GIB), round(1.5 * GIB))
    assert term.error_towards("low") == GIB and term.error_towards("high") == round(2.5 * GIB)
    assert term_error(term) == "+ 1.00 / − 2.50 GiB"
    words = term.one_sided_words or ""
    assert "only ever lowers that term" in words and "only gives KV" in words
    assert "the capacity's high end takes the wider side, its low end the narrower" in words
    added = term.plus(error_bytes=2 * GIB, why="x")
    assert abs(added.error_bytes - math.sqrt(5) * GIB) <= 1 and abs(added.error_below_bytes - math.sqrt(10.25) * GIB) <= 1
    assert added.raise_only_bytes == 0 and added.lower_only_bytes == added.error_below_bytes - added.error_bytes
    # kept by with_error unless told; refused below 0 and through model_copy
    assert term.with_error(3 * GIB).lower_only_bytes == round(1.5 * GIB)
    with pytest.raises(ValueError, match="lower_only_bytes"):
        term.with_error(GIB, lower_only_bytes=-1)
    with pytest.raises(ValueError, match="with_error"):
        term.model_copy(update={"lower_only_bytes": 0})
    # the ends: the high end moves the term by its side below (2.5 GiB, under its 2 GiB of bytes: stops at 0), the
    # low end by its side above
    estimate = PreloadEstimate(engine="vllm", terms=(term,))
    assert estimate.combined_error_at("high") == round(2.5 * GIB) and estimate.combined_error_at("low") == GIB
    assert estimate.figures("high").non_kv_bytes == 0 and estimate.figures("low").non_kv_bytes == 3 * GIB
    assert estimate.dominant is term
    # CUDA's total (more of it, more KV): a part only below its figure is the low end's
    total = _term(1.0, term=Term.CUDA_TOTAL, value=80).model_copy(update={"more_is_more_kv": True})
    total = total.widened_by(lower_only_bytes=GIB)
    assert total.error_towards("low") == 2 * GIB and total.error_towards("high") == GIB
    assert "only takes KV away" in (total.one_sided_words or "") and "capacity's low end takes the wider" in (
        total.one_sided_words or "")
    dumped = estimate_term_json(term)
    assert (dumped["error_bytes"], dumped["error_below_bytes"], dumped["lower_only_bytes"]) == (
        GIB, round(2.5 * GIB), round(1.5 * GIB))
    assert TermEstimate.model_validate(term.model_dump()) == term


def test_a_measured_term_keeps_no_error_below() -> None:
    """A term the launch measured carries no error, on either side (final reader 2, HIGH 1): graphs of 2 GiB ± 1
    charged with 600 MiB below only, then fixed by a logged KV memory, read 0 both ways, not 600 MiB below."""
    from kvtop.domain.calibration.estimate import _measured, _with_measured
    from kvtop.domain.engines.base import MeasuredInputs

    widened = _term(1.0, value=2.0).widened_by(lower_only_bytes=600 * 2**20)
    assert widened.error_below_bytes == GIB + 629_145_600  # the widening is there before
    measured = _measured(widened, 3 * GIB, "the KV memory")
    assert (measured.bytes, measured.error_bytes, measured.error_below_bytes) == (3 * GIB, 0, 0)
    assert not measured.one_sided and measured.lower_only_bytes == 0
    (through,) = _with_measured((widened,), MeasuredInputs(available_kv_bytes=40 * GIB))
    assert (through.source, through.error_bytes, through.error_below_bytes) == ("measured", 0, 0)
