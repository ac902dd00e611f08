"""A fit's held-out misses' signed spread (`LinearTerm.span_bytes`; session 72, fixer H3 after review R2): the interval of
a term whose error is its class's spread (vLLM's hybrid first FULL capture, hybrid_graph_sample.py), each row against the
fit made without its source, not against the fit it helped make.

Expected values by hand: a constant fitted on 0.34, 1.74, 1.76, 1.87, 1.97 and 2.30 GiB is their mean, 9.98 ÷ 6 =
1.6633 GiB. Held out by source: anud18's two rows (0.34, 1.87) against the mean of the other four, 7.77 ÷ 4 = 1.9425,
miss by −1.6025 and −0.0725; club's (1.74, 1.76) against 6.48 ÷ 4 = 1.62 by +0.12 and +0.14; the L40S's 1.97 against
8.01 ÷ 5 = 1.602 by +0.368; fentz26's 2.30 against 7.68 ÷ 5 = 1.536 by +0.764. The span is −1.6025 / +0.764 GiB, wider
on both sides than the rows' in-sample spread about the mean (−1.3233 / +0.6367), which review R2 found 2 of the 4
sources outside their fold's.
"""

from __future__ import annotations

from kvtop.domain.calibration.linear import RowOrigin, fit_term
from kvtop.units import GIB

AMOUNTS = (0.34, 1.74, 1.76, 1.87, 1.97, 2.30)
SOURCES = ("anud18", "club", "club", "anud18", "l40s", "fentz26")


def _fit(span: bool, rows: tuple[float, ...] = AMOUNTS, sources: tuple[str, ...] = SOURCES
         ) -> tuple[float, tuple[int, int] | None]:  # fmt: skip
    fit = fit_term("t", ("1 GiB",), [((1.0,), amount) for amount in rows],
                   origins=[RowOrigin(source=source) for source in sources], span=span)  # fmt: skip
    return fit.coefficients[0], fit.span_bytes


def test_the_span_is_each_rows_miss_held_out_by_source() -> None:
    centre, span = _fit(span=True)
    assert span is not None
    lowest, highest = span
    assert abs(centre - 9.98 / 6) < 1e-6
    assert abs(lowest - (0.34 - 7.77 / 4) * GIB) <= 1e3 and abs(highest - (2.30 - 7.68 / 5) * GIB) <= 1e3
    # wider than the rows' spread about the fit they made (in-sample: 0.34 − 1.6633, 2.30 − 1.6633)
    assert lowest < (0.34 - 9.98 / 6) * GIB and highest > (2.30 - 9.98 / 6) * GIB


def test_no_span_unless_asked_or_held_out() -> None:
    """Not asked: None. One row: no fit without it, so no held-out miss and no span (None, not a silent (0, 0))."""
    assert _fit(span=False)[1] is None
    assert _fit(span=True, rows=(1.0,), sources=("a",))[1] is None
