"""A fitted term: bytes = Σ coefficient × feature, fitted without negative parts on the corpus.

Features and targets are in GiB so that the committed coefficients read as figures a person can
check ("0.13 GiB + 0.54 GiB per extra TP rank"). The term keeps the held-out error that the corpus
measured for it: the 90th percentile of |prediction − measurement| over leave-one-out fits, which is
the half-width of the interval it adds to a plan.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.fit import leave_one_out, non_negative_least_squares, quantile
from kvtop.domain.wording import GIB

ERROR_QUANTILE = 0.9  # the share of held-out records a term's error covers


class LinearTerm(BaseModel):
    """One fitted term of an engine's pre-load memory."""

    model_config = ConfigDict(frozen=True)

    key: str  # e.g. "vllm.activation.v1": the engine, the term and the era it holds for
    features: tuple[str, ...]  # what each coefficient multiplies, in words (GiB)
    coefficients: tuple[float, ...]
    error_bytes: int  # 90th percentile of the leave-one-out |error| (the interval's half-width)
    records: int  # how many corpus records it was fitted on

    def predict_gib(self, values: Sequence[float]) -> float:
        return sum(c * v for c, v in zip(self.coefficients, values, strict=True))

    def predict(self, values: Sequence[float]) -> int:
        """Bytes for these feature values (GiB each)."""
        return round(self.predict_gib(values) * GIB)


FitRow = tuple[tuple[float, ...], float]  # (feature values in GiB, measured GiB)


def fit_term(key: str, features: tuple[str, ...], rows: Sequence[FitRow], error_gib: float | None = None) -> LinearTerm:
    """The term fitted on `rows`, with its error measured by leaving each row out in turn (or `error_gib`,
    measured elsewhere: a term of one row has no held-out error of its own)."""
    coefficients = tuple(non_negative_least_squares([row[0] for row in rows], [row[1] for row in rows]))

    def refit(others: Sequence[FitRow]) -> list[float]:
        return non_negative_least_squares([row[0] for row in others], [row[1] for row in others])

    def predict(fitted: list[float], row: FitRow) -> float:
        return float(sum(c * v for c, v in zip(fitted, row[0], strict=True)))

    held_out = leave_one_out(rows, refit, predict) if len(rows) > 1 else []
    errors = [abs(p - row[1]) for p, row in zip(held_out, rows, strict=False)]  # none for one row: 0, the caller decides
    return LinearTerm(
        key=key,
        features=features,
        coefficients=tuple(round(c, 6) for c in coefficients),
        error_bytes=round(quantile(errors, ERROR_QUANTILE) * GIB) if error_gib is None else round(error_gib * GIB),
        records=len(rows),
    )
