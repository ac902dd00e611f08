"""What the planner is opened with and what it leaves behind: `PlanBasis` and `PlannerDraft`.

The app builds a `PlanBasis` from the selected engine's live view and keeps a `PlannerDraft` per
engine when the planner closes, so plain values cross between them and the screen (`planner`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kvtop.domain.capacity import CapacitySource
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.observe import EngineLive, HostMemory


@dataclass(frozen=True)
class PlanBasis:
    """What the planner starts from: one engine's live settings on its GPUs."""

    engine_label: str
    settings: LaunchSettings
    model: ModelSpec | None  # None: load `settings.model` with the model loader
    gpu_total_bytes: int
    gpu_name: str | None
    live: EngineLive  # what the engine states now: its token capacity and whether the startup log said it
    live_source: CapacitySource = CapacitySource.LIVE  # who states that figure (`EngineView.capacity_source`)
    start_settings: LaunchSettings | None = None  # where the fields start (None: the live settings)
    start_label: str | None = None  # what the start is, e.g. "fix of “16-bit KV where the engine supports FP8 KV”"
    measured: MeasuredInputs = dataclasses.field(default_factory=MeasuredInputs)  # what the GPUs measure now
    node_gpus: int | None = None  # GPUs on the node, to say when a layout needs more
    draft: ModelSpec | None = None  # the launch's speculative draft, as the live ledger was solved with it
    host_memory: HostMemory | None = None  # the node's host memory (None: not read), what a host KV tier must fit
    host_origin: str = ""  # where its figure comes from, in words (`host_tier_fit.host_origin`)
    version: ResolvedVersion | None = None  # the live release and how it was found: the basis ledger's own


@dataclass(frozen=True)
class PlannerDraft:
    """The planner's edits when it closed, to start from when it opens again on the same engine."""

    texts: dict[str, str]
    edit_base: LaunchSettings
    model: ModelSpec | None
    model_ref: str
    live_model: ModelSpec | None
    # whether the speculative field shows the method the engine's rule decides (not typed): the edit keeps the
    # launch's own speculative flags and the field follows the rule at the edited release
    spec_follows: bool = True
    # the blank fields' hints of the last launch that solved ('auto: 0.818'), shown again while the edit does not
    hints: tuple[tuple[str, str], ...] = ()
