"""Least squares, leave-one-source-out and quantiles, in plain Python (the domain imports no numerics library).

The calibration fits are small (a few constants over at most a few hundred records), so the normal
equations solved by Gaussian elimination are exact enough and keep `kvtop.domain` pure. Every fit
is a function of its rows alone, so leaving rows out and fitting again is how each term's held-out
error is measured: a record never checks a fit it took part in. Rows are left out by their source
(`leave_group_out`): starts of one thread or one benchmarking repository share the GPU, the release
and the install, so a sibling start predicts them better than a plan predicts a log from elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

Row = TypeVar("Row")
Fitted = TypeVar("Fitted")


def solve_linear(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """x with matrix · x = rhs (Gaussian elimination, partial pivoting); a singular column gets 0."""
    n = len(rhs)
    a = [row[:] + [rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-12:
            continue
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[r][col]:
                factor = a[r][col] / a[col][col]
                a[r] = [x - factor * y for x, y in zip(a[r], a[col], strict=True)]
    return [a[i][n] / a[i][i] if abs(a[i][i]) >= 1e-12 else 0.0 for i in range(n)]


def least_squares(features: Sequence[Sequence[float]], targets: Sequence[float], ridge: float = 1e-9) -> list[float]:
    """Coefficients c minimising Σ (features · c − target)², with a tiny ridge so that a column no
    row exercises stays at 0 rather than making the system singular."""
    if not features:
        return []
    width = len(features[0])
    gram = [[sum(f[i] * f[j] for f in features) + (ridge if i == j else 0.0) for j in range(width)] for i in range(width)]
    moment = [sum(f[i] * t for f, t in zip(features, targets, strict=True)) for i in range(width)]
    return solve_linear(gram, moment)


def non_negative_least_squares(features: Sequence[Sequence[float]], targets: Sequence[float]) -> list[float]:
    """Least squares with every coefficient ≥ 0 (a memory term cannot give memory back): columns whose
    coefficient comes out negative are dropped and the rest refitted, until none is."""
    if not features:
        return []
    width = len(features[0])
    active = list(range(width))
    while True:
        reduced = [[row[i] for i in active] for row in features]
        solved = least_squares(reduced, targets)
        negative = [active[k] for k, value in enumerate(solved) if value < 0]
        if not negative:
            full = [0.0] * width
            for k, column in enumerate(active):
                full[column] = solved[k]
            return full
        active = [column for column in active if column not in negative]
        if not active:
            return [0.0] * width


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile by linear interpolation between order statistics (q in [0, 1]); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def held_out_quantile(
    values: Sequence[float], q: float, groups: Sequence[str] | None = None, *, corrected: bool = False
) -> float:
    """The held-out errors' q-quantile, the errors of one source (`groups`) counting together as one: each weighs
    1 ÷ its source's size and n is the number of sources, so thirty starts of one sweep do not outvote three
    threads; the smallest error whose cumulative weight reaches ⌈n × q⌉. `corrected`: split conformal prediction's
    small-sample correction, ⌈(n + 1) × q⌉: of n exchangeable held-out errors, that one is at least a new one's
    with probability ≥ q (Lei et al., "Distribution-free predictive inference for regression", 2018); where
    (n + 1) × q > n it is the largest, which guarantees less (fewer than 9 sources at q = 0.9). 0.0 for no values."""
    if not values:
        return 0.0
    groups = list(groups) if groups is not None else [str(index) for index in range(len(values))]
    sizes = {group: groups.count(group) for group in set(groups)}
    rank = min(math.ceil((len(sizes) + corrected) * q - 1e-9), len(sizes))
    weight = 0.0
    for value, group in sorted(zip(values, groups, strict=True)):
        weight += 1 / sizes[group]
        if weight >= rank - 1e-9:
            return value
    return max(values)


def leave_group_out(
    rows: Sequence[Row],
    groups: Sequence[str],
    fit: Callable[[Sequence[Row]], Fitted],
    predict: Callable[[Fitted, Row], float],
    min_rows: int = 1,
) -> list[float | None]:
    """For each row, the prediction of a fit made on the rows of every other group (same order as `rows`);
    None where the other groups hold fewer than `min_rows` rows or only one group: such a fit would not be
    made (its term would be assumed), so its miss says nothing of the fit's."""
    fitted: dict[str, Fitted] = {}
    predictions: list[float | None] = []
    for row, group in zip(rows, groups, strict=True):
        others = [other for other, owner in zip(rows, groups, strict=True) if owner != group]
        owners = {owner for owner in groups if owner != group}
        if not others or len(others) < min_rows or (min_rows > 1 and len(owners) < 2):
            predictions.append(None)
            continue
        if group not in fitted:
            fitted[group] = fit(others)
        predictions.append(predict(fitted[group], row))
    return predictions


def leave_one_out(
    rows: Sequence[Row],
    fit: Callable[[Sequence[Row]], Fitted],
    predict: Callable[[Fitted, Row], float],
) -> list[float]:
    """For each row, the prediction of a fit made on every other row (same order as `rows`)."""
    predictions = []
    for index, row in enumerate(rows):
        others = [other for k, other in enumerate(rows) if k != index]
        predictions.append(predict(fit(others), row))
    return predictions
