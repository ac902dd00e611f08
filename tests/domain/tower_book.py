"""The vision row of the weights book on the tower's pipeline stage, as the tower tests compare it with an engine's
meta-device build (benchmarks/engine_diff registry rows): one place that asks the book for it."""

from __future__ import annotations

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.tower_spec import TowerSplit
from kvtop.domain.weights import WeightRow, weights_book


def first_stage_vision_row(model: ModelSpec, tp: int, tower_split: TowerSplit) -> WeightRow:
    """The one vision row of the first pipeline stage (layer 0 only, the tower's stage) at TP `tp`, split as an
    engine's `TOWER_SPLIT` says."""
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 1), first_stage=True, last_stage=False,
                        tower_split=tower_split)  # fmt: skip
    (vision,) = [r for r in book.rows if r.component == "vision"]
    return vision
