"""The smallest layout on which a launch that does not fit would fit: the next question after "DOES NOT FIT".

Only tensor parallelism grows (by powers of two up to one node's eight GPUs, then pipeline stages of
eight), on the same GPU, under the same engine, release and settings: each candidate is solved as
`kvtop plan` solves it (`planned_capacity`: the engine's own rules, unmeasured terms calibrated for that
layout), so the answer is the capacity `kvtop plan` prints for it. A layout the
model cannot take (heads that do not divide) is skipped, not reported.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger

#: (tp, pp) tried in order: one node first, then whole nodes of eight as pipeline stages
CANDIDATES: tuple[tuple[int, int], ...] = ((2, 1), (4, 1), (8, 1), (8, 2), (8, 4))


class FittingLayout(BaseModel):
    """A layout that fits: its settings, the GPUs it takes and the tokens per rank it holds."""

    model_config = ConfigDict(frozen=True)

    settings: LaunchSettings
    gpus: int
    token_capacity: int


def smallest_fitting_layout(ledger: Ledger) -> FittingLayout | None:
    """The fewest GPUs (more TP, then PP) on which `ledger`'s launch fits; None when it fits already or
    when no candidate up to 32 GPUs does."""
    if ledger.engine.fits:
        return None
    base = ledger.settings
    measured = ledger.measured.model_copy(update={"calibrated": None})  # re-estimated for each layout
    for tp, pp in CANDIDATES:
        tp, pp = max(tp, base.tp), max(pp, base.pp)
        if tp * pp * base.dp <= ledger.layout.gpus:
            continue
        settings = base.model_copy(update={"tp": tp, "pp": pp})
        try:
            candidate = planned_capacity(
                ledger.model, settings, gpu_total_bytes=ledger.gpu_total_bytes, gpu_name=ledger.gpu_name,
                measured=measured, load_mtp=ledger.load_mtp,
            ).ledger  # fmt: skip
        except InputError:
            continue  # the model does not divide over this layout
        if candidate.engine.fits:
            return FittingLayout(settings=settings, gpus=candidate.layout.gpus, token_capacity=candidate.token_capacity)
    return None
