"""Each pipeline stage's measured weights where the log measured one stage's load alone.

An engine whose load line only the node's first rank prints (`EngineRules.logged_weights_stage`: the engine's own
package says which stage and where its code prints it) logs under pipeline parallelism one stage's figure. Each other
stage is given that figure plus what its own book holds beyond that stage's book: the difference is the books'
(embedding, head, its layer count), the level the log's; that figure is derived, not printed, so its source says
calibrated (an estimate is never a fact)."""

from __future__ import annotations

from collections.abc import Sequence

from kvtop.domain.calibration.terms import TermSource
from kvtop.domain.engines.base import MeasuredInputs

#: the source of a stage's weights derived from another stage's logged figure
DERIVED_STAGE_WEIGHTS: TermSource = "calibrated"


def stage_measured_weights(measured: MeasuredInputs, book_bytes: Sequence[int]) -> tuple[MeasuredInputs, ...]:
    """The measured inputs of each stage (`book_bytes`: each stage's weights book, in stage order). Where the measured
    weights are one stage's (`MeasuredInputs.weights_stage`), that stage keeps them (measured) and stage k gets
    logged + book(k) − book(stage), named calibrated; else every stage reads the inputs as given."""
    stage, logged = measured.weights_stage, measured.weights_bytes
    if not logs_one_stage(measured, len(book_bytes)) or stage is None or logged is None:
        return tuple(measured for _ in book_bytes)
    beyond = beyond_stage_book(logged, stage, book_bytes)
    return tuple(
        measured if pp_rank == stage
        else measured.model_copy(update={"weights_bytes": book + beyond}).with_estimated(
            "weights_bytes", DERIVED_STAGE_WEIGHTS)
        for pp_rank, book in enumerate(book_bytes)
    )  # fmt: skip


def logs_one_stage(measured: MeasuredInputs, stages: int) -> bool:
    """Whether the measured weights are one stage's load alone, among `stages` pipeline stages (the rule above)."""
    stage = measured.weights_stage
    return measured.weights_bytes is not None and stage is not None and stages > 1 and 0 <= stage < stages


def beyond_stage_book(stage_bytes: int, stage: int, book_bytes: Sequence[int]) -> int:
    """What every stage holds beyond its own book where `stage_bytes` is stage `stage`'s load alone (`book_bytes`:
    each stage's weights book, in stage order): that load less that stage's book. Stage k then holds book(k) + this,
    the rule above; a node's stored start of one stage's load (`NodeMeasure.weights_stage`) reaches a plan by it."""
    return stage_bytes - book_bytes[stage]
