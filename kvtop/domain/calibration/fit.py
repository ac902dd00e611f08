"""Least squares, leave-one-out and quantiles, in plain Python (the domain imports no numerics library).

The calibration fits are small (a few constants over at most a few hundred records), so the normal
equations solved by Gaussian elimination are exact enough and keep `kvtop.domain` pure. Every fit
is a function of its rows alone, so leaving a row out and fitting again is how each term's held-out
error is measured: a record never checks a fit it took part in.
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
