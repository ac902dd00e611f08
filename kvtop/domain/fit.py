"""The smallest layout on which a launch that does not fit would fit: the next question after "DOES NOT FIT".

Only tensor parallelism grows (by powers of two up to one node's eight GPUs, then pipeline stages of
eight), on the same GPU, under the same engine, release and settings: each candidate is solved as
`kvtop plan` solves it (`planned_capacity`: the engine's own rules, unmeasured terms calibrated for that
layout), so the answer is the capacity `kvtop plan` prints for it. A layout the
model cannot take (heads that do not divide) is skipped, not reported. Where none fits and the launch set the
engine's memory share (vLLM's `--gpu-memory-utilization`, SGLang's `--mem-fraction-static`, …), the same search
runs again at the engine's own share, from the launch's layout: a share too small to fit anywhere is named as
the reason (`FittingLayout.dropped`: the setting and its value, which the views word), not left as "no layout fits".
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.node import NodeMeasure
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger

#: (tp, pp) tried in order: one node first, then whole nodes of eight as pipeline stages
CANDIDATES: tuple[tuple[int, int], ...] = ((2, 1), (4, 1), (8, 1), (8, 2), (8, 4))


class DroppedShare(BaseModel):
    """The launch's memory share that fits no layout: the `LaunchSettings` field it sets and its value."""

    model_config = ConfigDict(frozen=True)

    setting: str  # the engine's `memory_fraction_field`, e.g. "gpu_memory_utilization" (spelled by the views)
    value: float = Field(gt=0.0)


class FittingLayout(BaseModel):
    """A layout that fits: its settings, the GPUs it takes and the tokens per rank it holds."""

    model_config = ConfigDict(frozen=True)

    settings: LaunchSettings
    gpus: int
    token_capacity: int
    dropped: DroppedShare | None = None  # the launch's memory share it leaves out, if any


def smallest_fitting_layout(ledger: Ledger, node_measures: tuple[NodeMeasure, ...] = ()) -> FittingLayout | None:
    """The fewest GPUs (more TP, then PP) on which `ledger`'s launch fits; else, where the launch set the engine's
    memory share, the fewest at the engine's own share (`dropped` names the flag); None when it fits already or
    when nothing up to 32 GPUs does. Each layout is `plan`'s solve of it: the launch's draft, and this node's earlier
    starts `node_measures` as `plan` reads them."""
    if ledger.engine.fits:
        return None
    found = _smallest(ledger, ledger.settings, node_measures, same_layout=False)
    field = engine_rules(ledger.settings.engine).memory_fraction_field
    share = None if field is None else launch_share(ledger.settings, field)
    if found is not None or field is None or share is None:
        return found
    own = _smallest(ledger, ledger.settings.model_copy(update={field: None}), node_measures, same_layout=True)
    dropped = DroppedShare(setting=field, value=share)
    return own.model_copy(update={"dropped": dropped}) if own is not None else None


def launch_share(settings: LaunchSettings, field: str) -> float | None:
    """The memory share `settings` set in the engine's `field` (None: the engine's own), checked to be a number."""
    value: object = settings.model_dump(include={field}).get(field)
    if value is None or isinstance(value, float):
        return value
    raise TypeError(f"{field} is no memory share of LaunchSettings (it holds {type(value).__name__})")


def _smallest(
    ledger: Ledger, base: LaunchSettings, node_measures: tuple[NodeMeasure, ...], *, same_layout: bool
) -> FittingLayout | None:
    """The first layout (the launch's own first where `same_layout`, then more TP, then PP) where `base` fits."""
    measured = ledger.measured.model_copy(update={"calibrated": None})  # re-estimated for each layout
    layouts = [(base.tp, base.pp)] if same_layout else []
    for tp, pp in CANDIDATES:
        tp, pp = max(tp, base.tp), max(pp, base.pp)
        if tp * pp * base.dp > ledger.layout.gpus:
            layouts.append((tp, pp))
    for tp, pp in layouts:
        settings = base.model_copy(update={"tp": tp, "pp": pp})
        try:
            candidate = planned_capacity(
                ledger.model, settings, gpu_total_bytes=ledger.gpu_total_bytes, gpu_name=ledger.gpu_name,
                measured=measured, load_mtp=ledger.load_mtp, draft=ledger.draft, node_measures=node_measures,
            ).ledger  # fmt: skip
        except InputError:
            continue  # the model does not divide over this layout
        if candidate.engine.fits:
            return FittingLayout(settings=settings, gpus=candidate.layout.gpus, token_capacity=candidate.token_capacity)
    return None
