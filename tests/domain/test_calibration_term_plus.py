"""`TermEstimate.plus`: the one way an engine's rule adds bytes and an independent error to a term.

Expected values are the arithmetic of independent errors (the root of squares: 3 and 4 make 5), not the method's.
"""

from __future__ import annotations

from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.calibration.weights import ERROR_FEATURES, LOADED_ERROR_KEY, with_fitted_error
from kvtop.domain.wording import MIB

WEIGHTS = TermEstimate(term=Term.WEIGHTS, label="weights", bytes=100 * MIB, error_bytes=4 * MIB,
                       source="calibrated", basis="the book")  # fmt: skip


def test_bytes_add_and_independent_errors_add_as_the_root_of_squares() -> None:
    found = WEIGHTS.plus(10 * MIB, 3 * MIB, why="+ 10 MiB of a workspace")
    assert (found.bytes, found.error_bytes) == (110 * MIB, 5 * MIB)
    assert found.basis == "the book; + 10 MiB of a workspace"
    assert found.beside_error_bytes == 0  # not an error beside the fitted one unless said


def test_bytes_alone_leave_the_error_and_none_leaves_the_basis() -> None:
    found = WEIGHTS.plus(7, why=None)
    assert (found.bytes, found.error_bytes, found.basis) == (100 * MIB + 7, 4 * MIB, "the book")


def test_an_error_beside_the_fitted_one_survives_the_fitted_error_swap() -> None:
    """A judged plan re-reads the weights' fitted error (here 12 % of 100 MiB: 12 MiB); an error the engine's rules put
    beside it (5 MiB, as 3 and 4 MiB beside each other) stays in: 13 MiB, where an error added otherwise is dropped."""
    fit = LinearTerm(key=LOADED_ERROR_KEY, features=ERROR_FEATURES, coefficients=(0.12,), error_bytes=0, records=4)
    beside = WEIGHTS.plus(error_bytes=3 * MIB, why=None, beside=True).plus(error_bytes=4 * MIB, why=None, beside=True)
    assert beside.beside_error_bytes == 5 * MIB
    assert with_fitted_error(beside, {fit.key: fit}, built_ahead=False).error_bytes == 13 * MIB
    other = WEIGHTS.plus(error_bytes=5 * MIB, why=None)
    assert with_fitted_error(other, {fit.key: fit}, built_ahead=False).error_bytes == 12 * MIB
