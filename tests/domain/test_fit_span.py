"""A fit's rows' spread about it (`LinearTerm.span_bytes`; session 72): the interval of a term whose error is its class's
spread (vLLM's hybrid first FULL capture, hybrid_graph_sample.py), the low end to the largest row, the high end to the
smallest.

Expected values by hand: a constant fitted on 0.34, 1.74, 1.76, 1.87, 1.97 and 2.30 GiB is their mean, 9.98 ÷ 6 =
1.6633 GiB, and the rows lie from 0.34 − 1.6633 = −1.3233 to 2.30 − 1.6633 = +0.6367 GiB about it.
"""

from __future__ import annotations

from kvtop.domain.calibration.linear import RowOrigin, fit_term
from kvtop.units import GIB

AMOUNTS = (0.34, 1.74, 1.76, 1.87, 1.97, 2.30)
SOURCES = ("anud18", "club", "club", "anud18", "l40s", "fentz26")


def _fit(span: bool) -> tuple[float, tuple[int, ...]]:
    fit = fit_term("t", ("1 GiB",), [((1.0,), amount) for amount in AMOUNTS],
                   origins=[RowOrigin(source=source) for source in SOURCES], span=span)  # fmt: skip
    return fit.coefficients[0], fit.span_bytes


def test_the_span_is_the_lowest_and_highest_row_about_the_fit() -> None:
    centre, (lowest, highest) = _fit(span=True)
    assert abs(centre - 9.98 / 6) < 1e-6
    assert abs(lowest - (0.34 - 9.98 / 6) * GIB) <= 1e3 and abs(highest - (2.30 - 9.98 / 6) * GIB) <= 1e3
    assert lowest < 0 < highest


def test_no_span_unless_asked() -> None:
    assert _fit(span=False)[1] == ()
