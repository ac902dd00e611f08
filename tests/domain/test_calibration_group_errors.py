"""A fit's held-out error by feature group: a plan carries the error of the rows planned alike, not the pool's.

Expected values are the leave-one-source-out arithmetic done by hand: with a constant and a feature only group B
carries, the constant is the mean of group A's targets and B's coefficient the rest of B's mean, so each held-out
miss is the left-out target less the others' mean.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.linear import LinearTerm, RowOrigin, feature_group, fit_term
from kvtop.units import GIB

NAMES = ("1 GiB", "B", "C")
ROWS = [
    ((1.0, 0.0, 0.0), 1.0), ((1.0, 0.0, 0.0), 1.0), ((1.0, 0.0, 0.0), 1.0), ((1.0, 0.0, 0.0), 1.0),  # group A: 4 sources
    ((1.0, 1.0, 0.0), 2.0), ((1.0, 1.0, 0.0), 2.3), ((1.0, 1.0, 0.0), 1.7),  # group B: 3 sources
    ((1.0, 0.0, 1.0), 1.5), ((1.0, 0.0, 1.0), 1.5),  # group C: 2 sources, too few for an error of its own
]
SOURCES = ["a1", "a2", "a3", "a4", "b1", "b2", "b3", "c1", "c2"]


def _fit() -> LinearTerm:
    return fit_term("t", NAMES, ROWS, origins=[RowOrigin(source=s) for s in SOURCES])


def test_feature_group_names_the_features_a_row_carries() -> None:
    assert feature_group(NAMES, (1.32, 3.0, 0.0)) == "1 GiB + B"
    assert feature_group(NAMES, (1.0, 0.0, 0.0)) == "1 GiB"


def test_each_group_with_three_sources_keeps_its_own_error() -> None:
    """Group A's held-out misses are 0 (its targets agree); group B's are |2.0 − 2.0|, |2.3 − 1.85|, |1.7 − 2.15|:
    its 90th percentile (3rd of 3) 0.45 GiB. Group C holds two sources: no error of its own."""
    fit = _fit()
    errors = dict(fit.group_errors)
    assert set(errors) == {"1 GiB", "1 GiB + B"}
    assert errors["1 GiB"] == pytest.approx(0, abs=1000)
    assert errors["1 GiB + B"] / GIB == pytest.approx(0.45, abs=1e-6)


def test_a_plan_takes_its_group_s_error_where_wider_than_the_pool_s() -> None:
    """The pool's misses are seven zeros (group C's too: the other C source measured its feature) and B's two 0.45
    over 9 sources: its 90th percentile (9th) is 0.45 GiB. Group A's 0 is narrower: its plan takes the pool's."""
    fit = _fit()
    assert fit.error_bytes / GIB == pytest.approx(0.45, abs=1e-6)
    assert fit.error_for((1.0, 0.0, 0.0)) == fit.error_bytes
    assert fit.error_for((1.0, 1.0, 0.0)) == max(dict(fit.group_errors)["1 GiB + B"], fit.error_bytes)
    assert fit.error_for((1.0, 0.0, 1.0)) == fit.error_bytes


def test_a_wider_group_error_is_taken() -> None:
    """Twenty A sources (misses 0) beside B's three (0, 0.45, 0.45): the pool's 90th percentile over 23 sources is its
    21st smallest miss, 0; B's plan takes B's 0.45, A's the pool's."""
    rows = [((1.0, 0.0, 0.0), 1.0)] * 20 + ROWS[4:7]
    fit = fit_term("t", NAMES, rows, origins=[RowOrigin(source=f"s{i}") for i in range(len(rows))])
    assert fit.error_bytes == pytest.approx(0, abs=1000)
    assert fit.error_for((1.0, 1.0, 0.0)) / GIB == pytest.approx(0.45, abs=1e-6)
    assert fit.error_for((1.0, 0.0, 0.0)) == fit.error_bytes


def test_an_error_measured_elsewhere_keeps_no_groups() -> None:
    """A term given its error (`error_gib`, a single source's) has no held-out misses to group."""
    assert fit_term("t", NAMES, ROWS, error_gib=0.3).group_errors == ()


def test_a_lone_features_miss_is_its_own_error_not_the_pools() -> None:
    """Three sources carry the constant alone (1.0, 1.2, 0.8 GiB), a fourth also a feature nobody else carries (5.0).
    Held out by hand: the first is planned by the others' constant (1.2 + 0.8) ÷ 2 = 1.0 (miss 0), the second by
    0.9 (miss 0.3), the third by 1.1 (miss 0.3); the fourth by a fit that never saw its feature, 1.0 (miss 4.0).
    With four sources the corrected quantile is the largest miss, so the fourth would set every plan's error at
    4.0 GiB (vLLM v0.6.4's non-torch fit did: ± 3.84 GiB on TP 1 plans); its miss is the lone feature's
    (`unseen_error_bytes`), and the pool's is the largest of the others', 0.3 GiB."""
    rows = [((1.0, 0.0), 1.0), ((1.0, 0.0), 1.2), ((1.0, 0.0), 0.8), ((1.0, 1.0), 5.0)]
    fit = fit_term("t", ("1 GiB", "lone"), rows, origins=[RowOrigin(source=s) for s in ("a", "b", "c", "d")])
    assert fit.error_bytes == pytest.approx(0.3 * GIB, abs=2)
    assert fit.unseen_error_bytes == pytest.approx(4.0 * GIB, abs=2)
