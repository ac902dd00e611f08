"""A record's plan against a fold's fits, made again only where a fit it read changed.

The leave-one-source-out judgement fits the corpus once per source (≈ 485 folds, session 72) and each fold plans every
desktop and unified-memory start again with its fits (`desktop.py`, `unified.py`): ≈ 80 % of one fold's time. A plan
reads a handful of the fits (its engine's terms, its GPU's total); leaving out a source moves only the fits that source
fed, so most folds hand a record the very fits its last plan read. `fold_memo` remembers, per record and question, the
fits each plan read with the answer, and answers again without planning where every fit read is equal (`==`) to the
one read then. A plan (`planned_capacity`, `calibrated_ledger`) reads its fits only through `engine_fits(engine, fits)`
(estimate.py: `preload_estimate`'s `support`), which walks them all: so `plan` is handed that subset (`engine_fits` of
it is itself) and the whole subset is remembered; any other read goes through `_Reading` (every `get`, `[]` and
`in`; a walk over the whole map counts as reading them all, and is never answered again).

Every question asked here reads a plan's centre only (`calibrated_ledger`, `CapacityPlan.ledger`, the terms' bytes),
never an end of its interval. So the subsets are compared without the weights' relative errors (`ERROR_ONLY`): those
set only the weights term's half-width (weights.py `with_fitted_error`), which the centre never adds
(`PreloadEstimate.figures("central")`: `_end_moves` moves no term at sign 0), and they move in nearly every fold
(each source's logged weights are one of its rows): with them compared, a fold that left out one vLLM source planned
every SGLang and TensorRT-LLM desktop start again (session 72: 6 sampled vLLM folds, 3 moved no other fit of theirs).
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, KeysView, ValuesView
from typing import TypeVar

from benchmarks.calibration.corpus import Record
from kvtop.domain.calibration.estimate import engine_fits
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.weights import BUILT_ERROR_KEY, LOADED_ERROR_KEY

T = TypeVar("T")

_ABSENT = object()  # a key the plan asked for that the fold has no fit of
_ALL = object()  # the plan walked the whole map: only an equal map answers it again


class _Reading(dict[str, LinearTerm]):
    """The fold's fits, noting which keys a plan read (`read`), or that it read them all (`_ALL` in `read`)."""

    def __init__(self, fits: dict[str, LinearTerm]) -> None:
        super().__init__(fits)
        self.read: set[object] = set()

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> LinearTerm:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(key)
        return super().__contains__(key)

    def _whole(self) -> None:
        self.read.add(_ALL)

    def __iter__(self) -> Iterator[str]:
        self._whole()
        return super().__iter__()

    def __len__(self) -> int:
        self._whole()
        return super().__len__()

    def keys(self) -> KeysView[str]:  # type: ignore[override]
        self._whole()
        return super().keys()

    def values(self) -> ValuesView[LinearTerm]:  # type: ignore[override]
        self._whole()
        return super().values()

    def items(self) -> ItemsView[str, LinearTerm]:  # type: ignore[override]
        self._whole()
        return super().items()

    def copy(self) -> dict[str, LinearTerm]:
        self._whole()
        return dict(super().items())

    def __bool__(self) -> bool:
        self._whole()
        return super().__len__() > 0


#: Fits that set only a term's error, never a plan's centre: left out of the subsets compared (see the docstring).
ERROR_ONLY = frozenset({LOADED_ERROR_KEY, BUILT_ERROR_KEY})


def _centre(subset: dict[str, LinearTerm]) -> dict[str, LinearTerm]:
    """The fits of `subset` a plan's centre can read: all but `ERROR_ONLY`."""
    return {key: fit for key, fit in subset.items() if key not in ERROR_ONLY}


def _same(read: dict[object, object], fits: dict[str, LinearTerm]) -> bool:
    return all(fits.get(key, _ABSENT) == seen for key, seen in read.items())  # type: ignore[call-overload]


#: The answers kept per record and question: ≈ 200 records ask each fold, and each answer keeps its fold's subset alive.
KEPT = 4

Plan = Callable[[dict[str, LinearTerm], dict[str, LinearTerm]], T]


def fold_memo(record: Record, question: str, fits: dict[str, LinearTerm], plan: Plan[T]) -> T:
    """`plan(subset, reading)` for `record` (`subset`: `engine_fits(record.engine, fits)`, for its plans; `reading`:
    `fits`, for any other read), or the answer of an earlier fold whose subset was equal and whose fits were equal at
    every other key the plan read; `plan` must read the plan's centre only (`ERROR_ONLY`)."""
    subset = engine_fits(record.engine, fits)
    centre = _centre(subset)
    seen: list[tuple[dict[str, LinearTerm], dict[object, object], object]] = record.memo(("fold_memo", question), list)
    for planned, read, answer in seen:
        if planned == centre and _same(read, fits):
            return answer  # type: ignore[return-value]
    reading = _Reading(fits)
    answer = plan(dict(subset), reading)
    if _ALL not in reading.read:
        if len(seen) >= KEPT:  # bounded: the first (most folds share the whole corpus's fits) and the latest
            del seen[1]
        seen.append((centre, {key: fits.get(key, _ABSENT) for key in reading.read}, answer))  # type: ignore[call-overload]
    return answer
