"""How the calibration measures its held-out errors and how far a plan's interval reaches: leave-one-source-out,
each source weighing as one, the small-sample correction, the engine's interval scale and the widening outside
a fit's GPU models. Every expected figure is hand arithmetic written beside it."""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.coverage import IntervalScale, coverage_score, scale_fit
from kvtop.domain.calibration.fit import held_out_quantile, leave_group_out
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm, RowOrigin, fit_term
from kvtop.domain.calibration.support import widened
from kvtop.domain.calibration.terms import PreloadEstimate, Term, TermEstimate
from kvtop.domain.engines.versions import NOT_STATED
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB


def test_the_quantile_weighs_each_source_as_one() -> None:
    # source a: four starts (1, 1, 1, 9; 1/4 each); b–e one each (2, 3, 4, 5). n = 5 sources, the median's rank
    # ⌈5 × 0.5⌉ = 3: cumulative weight 0.25, 0.5, 0.75 (the 1s), 1.75 (2), 2.75 (3), 3.75 (4) → 4 reaches 3.
    values = [1.0, 1.0, 1.0, 9.0, 2.0, 3.0, 4.0, 5.0]
    groups = ["a", "a", "a", "a", "b", "c", "d", "e"]
    assert held_out_quantile(values, 0.5, groups) == 4.0
    # each start its own source: n = 8, rank 4 of [1, 1, 1, 2, 3, 4, 5, 9] → 2: the sweep's near-copies pull it down
    assert held_out_quantile(values, 0.5) == 2.0


def test_the_small_sample_correction_takes_the_next_order_statistic() -> None:
    # 10 sources, errors 1..10: the 90th percentile's rank is ⌈10 × 0.9⌉ = 9; corrected ⌈11 × 0.9⌉ = ⌈9.9⌉ = 10
    values = [float(v) for v in range(1, 11)]
    assert held_out_quantile(values, 0.9) == 9.0
    assert held_out_quantile(values, 0.9, corrected=True) == 10.0
    # 5 sources: ⌈6 × 0.9⌉ = 6 > 5, so the largest (the guarantee needs 9 sources at 0.9)
    assert held_out_quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.9, corrected=True) == 5.0
    assert held_out_quantile([], 0.9) == 0.0


def test_leaving_a_source_out_leaves_all_its_rows_out() -> None:
    # a constant (the mean): rows 5, 5 from source a and 1 from each of b–i. Leaving a out, the mean of eight 1s
    # is 1, for both of a's rows; leaving b out, (5 + 5 + 7 × 1) / 9 = 17/9.
    rows = [5.0, 5.0, *([1.0] * 8)]
    groups = ["a", "a", *"bcdefghi"]
    predictions = leave_group_out(rows, groups, lambda kept: sum(kept) / len(kept), lambda mean, _: mean)
    assert predictions[:3] == pytest.approx([1.0, 1.0, 17 / 9])
    # a source whose leaving out leaves fewer rows than the fit needs (here 9) is not judged
    assert (
        leave_group_out(rows, groups, lambda kept: sum(kept) / len(kept), lambda mean, _: mean, min_rows=9)[0]
        is None
    )


def test_a_terms_error_leaves_each_source_out() -> None:
    # the rows above as a one-constant fit: leaving source a out misses its rows by 5 − 1 = 4 GiB, leaving any other
    # out misses by 17/9 − 1 = 8/9 GiB. 9 sources, rank ⌈9 × 0.9⌉ = 9: the largest, 4 GiB. Leaving one start out at a
    # time instead gave a's rows (5 + 8)/9 = 13/9 from their sibling: a miss of 32/9 = 3.56 GiB.
    rows = [((1.0,), 5.0), ((1.0,), 5.0), *[((1.0,), 1.0)] * 8]
    origins = [RowOrigin(source="a", gpu="L4"), RowOrigin(source="a", gpu="L4"),
               *[RowOrigin(source=s, gpu="H100") for s in "bcdefghi"]]  # fmt: skip
    fit = fit_term("t", ("1 GiB",), rows, origins=origins)
    assert fit.error_bytes / GIB == pytest.approx(4.0, rel=1e-6)
    assert fit.sources == 9 and fit.records == 10 and fit.gpus == ("H100", "L4")
    # a's rows are the only ones on a GPU no other source ran: their error, 4 GiB, is the error outside the support
    assert fit.novel_error_bytes / GIB == pytest.approx(4.0, rel=1e-6)
    per_start = fit_term("t", ("1 GiB",), rows)
    assert per_start.error_bytes / GIB == pytest.approx(32 / 9, rel=1e-6)


def test_a_miss_is_scored_in_half_widths_of_its_side() -> None:
    # plan 100 in 80–110: a truth of 90 misses by 10 of the low side's 20 (0.5), 115 by 15 of the high side's 10
    assert coverage_score(90.0, 100.0, 80.0, 110.0) == 0.5
    assert coverage_score(115.0, 100.0, 80.0, 110.0) == 1.5
    assert coverage_score(100.5, 100.0, 80.0, 110.0, truth_half=1.0) == 0.0  # inside the printed rounding
    assert coverage_score(101.0, 100.0, 100.0, 100.0) is None  # an exact plan: no width to scale


def test_the_engine_scale_is_the_corrected_quantile_of_its_scores() -> None:
    # 10 sources scoring 0.1, 0.2, …, 1.0: ⌈11 × 0.9⌉ = ⌈9.9⌉ = 10 → the 10th smallest, 1.0. An 11th source scoring
    # 2.0: ⌈12 × 0.9⌉ = ⌈10.8⌉ = 11 → 2.0.
    scores = [round(0.1 * k, 1) for k in range(1, 11)]
    ten = scale_fit("vllm", scores, [str(k) for k in range(10)])
    eleven = scale_fit("vllm", [*scores, 2.0], [str(k) for k in range(11)])
    assert ten is not None and ten.factor == 1.0 and ten.sources == 10 and ten.engine == "vllm"
    assert eleven is not None and eleven.factor == 2.0 and eleven.records == 11
    assert ten.basis.startswith("× 1.00: ") and "90 % of 10 blind plans from 10 sources" in ten.basis
    assert scale_fit("vllm", [], []) is None  # no blind plan scored: none fitted (the engine stays unscaled)


def test_a_scale_never_narrows_the_terms() -> None:
    # 4 sources: ⌈5 × 0.9⌉ = 5 > 4, the quantile is the largest score (0.76), which guarantees less than 0.9: kept at
    # 1 so that four records do not shrink the errors the terms state. A largest score of 1.4 still widens them.
    narrow = scale_fit("lmdeploy", [0.1, 0.2, 0.5, 0.76], ["a", "b", "c", "d"])
    wide = scale_fit("lmdeploy", [0.1, 0.2, 1.4], ["a", "b", "c"])
    assert narrow is not None and narrow.factor == 1.0 and narrow.sources == 4
    assert wide is not None and wide.factor == 1.4
    # 9 sources: ⌈10 × 0.9⌉ = 9 ≤ 9, the corrected quantile is the 9th smallest, 0.9; it would narrow the terms'
    # errors, which unseen starts did not bear out (coverage.py), so the scale stays 1
    nine = scale_fit("sglang", [round(0.1 * k, 1) for k in range(1, 10)], [str(k) for k in range(9)])
    assert nine is not None and nine.factor == 1.0


def _term(error_gib: float, term: Term = Term.ACTIVATION) -> TermEstimate:
    return TermEstimate(term=term, label=term.value, bytes=10 * GIB, error_bytes=round(error_gib * GIB),
                        source="calibrated", basis="calibrated: test", fit_key="vllm.activation.v17")  # fmt: skip


def test_the_scale_multiplies_the_terms_errors_together() -> None:
    # errors 3 and 4 GiB together: √(9 + 16) = 5 GiB; × 1.2 = 6 GiB
    terms = (_term(3.0), _term(4.0, Term.NON_TORCH))
    assert PreloadEstimate(engine="vllm", terms=terms).combined_error_bytes == 5 * GIB
    scale = IntervalScale(engine="vllm", factor=1.2, records=10, sources=5)
    assert PreloadEstimate(engine="vllm", terms=terms, scale=scale).combined_error_bytes == 6 * GIB


def _inputs(gpu: str) -> CalibrationInputs:
    return CalibrationInputs(model=None, settings=parse_flags("vllm", []), layout=ParallelLayout(), gpu_name=gpu,
                             gpu_total_bytes=80 * GIB, version=NOT_STATED, weights_bytes=0, context_length=8192)  # fmt: skip


def test_a_plan_on_a_gpu_no_record_ran_takes_the_error_measured_there() -> None:
    # the fit's error 1 GiB, 3 GiB on rows of GPUs no other source ran: a term of 1.5 GiB (widened elsewhere by 0.5)
    # grows by 3 − 1 = 2 GiB to 3.5 GiB on an L4, and names why; on the H100 it stays
    fit = LinearTerm(key="vllm.activation.v17", features=("1 GiB",), coefficients=(1.0,), error_bytes=GIB, records=5,
                     sources=4, gpus=("H100",), novel_error_bytes=3 * GIB)  # fmt: skip
    fits = {fit.key: fit}
    on_l4 = widened(_term(1.5), fits, _inputs("NVIDIA L4"))
    assert on_l4.error_bytes == round(3.5 * GIB)
    assert on_l4.beyond == "no record of activation at the latest release on the L4"  # in words (`fit_words`)
    assert widened(_term(1.5), fits, _inputs("NVIDIA H100 80GB HBM3")).beyond is None
    assert PreloadEstimate(engine="vllm", terms=(on_l4,)).beyond_support == (
        "no record of activation at the latest release on the L4",
    )
