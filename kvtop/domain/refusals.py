"""Launches an engine refuses at start although kvtop can size them: a planner must not call them valid.

kvtop's budget rules already refuse what no sizing can follow (a weight format a GPU cannot run, heads
that do not divide); these are the launches whose KV kvtop sizes well enough but the engine stops before
serving: a context longer than the model's positions, a KV dtype no attention backend of the GPU takes.
Each engine's package says which (`EngineRules.launch_refusals`, built of `Refusal`s here), from its own
code; an engine that lists none refuses nothing kvtop knows of. Every engine also refuses a model class its
release does not register (`kvtop.domain.launch_check`, which asks both). Live
engines are never checked: one that runs was accepted (an override such as the engines' long-context
variables may have been set).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.catalogue import display_name
from kvtop.domain.launch import spelling_of

if TYPE_CHECKING:
    from kvtop.domain.ledger_values import Ledger
    from kvtop.domain.tower_spec import TowerSplit

MODEL_FLAG = "--model"


class Refusal(BaseModel):
    """One reason the engine would not start this launch."""

    model_config = ConfigDict(frozen=True)

    field: str  # the flag as the engine spells it
    message: str  # what the engine refuses, one line with the figures
    source: str  # the engine's code that refuses it
    override: str | None = None  # how the engine is told to accept it anyway (an environment variable)

    def brief(self) -> str:
        """The message and the override, without the source (a planner's one line)."""
        return self.message + (f"; it starts anyway with {self.override}" if self.override else "")

    def describe(self) -> str:
        """'SGLang 0.5.9 refuses … (model_config.py …); it accepts it with SGLANG_…=1'."""
        override = f"; it starts anyway with {self.override}" if self.override else ""
        return f"{self.message} ({self.source}){override}"


def context_above_positions(
    ledger: Ledger, *, source: str, override: str, stated_wins_without_positions: bool = False,
    derived: tuple[int, str] | None = None,
) -> Refusal | None:
    """A context length given above the model's `max_position_embeddings`: SGLang and vLLM refuse it
    unless told to allow it (kvtop reads the positions as the config states them; a rope scaling the
    engine multiplies them by is not read, so such a model may start where this says it would not).
    `stated_wins_without_positions`: the engine takes a stated length as it is where the config names no
    position field (ModelSpec.positions_nominal), refusing only above a stated one. `derived`: (the length, whose)
    where the engine derives another than the config's positions (SGLang's get_context_length fallback)."""
    stated, positions = ledger.settings.context_length, ledger.model.max_position_embeddings
    if derived is not None:
        positions = derived[0]
    if stated is None or stated <= positions:
        return None
    if stated_wins_without_positions and ledger.model.positions_nominal:
        return None
    engine = ledger.settings.engine
    flag = spelling_of(engine, "context_length")
    # nominal positions are no field of the config: the engine's own figure where it finds none
    nominal = ledger.model.positions_nominal
    whose = "its default where the config names no position field" if nominal else "max_position_embeddings"
    whose = derived[1] if derived is not None else whose
    return Refusal(
        field=flag,
        message=f"{display_name(engine)} {ledger.version.label} refuses {flag} {stated:,} above the model's "
        f"{positions:,} positions ({whose})",
        source=source,
        override=override,
    )


def dense_only_refusal(ledger: Ledger, builds_dense: Mapping[str, str]) -> Refusal | None:
    """A config with experts on a class the engine builds dense only (`builds_dense`: class → the engine file that
    builds it so, read at the ledger's release): the checkpoint's experts have no parameters to load into, and the
    engine's load_weights stops on them (`params_dict[name]`: KeyError). Each engine states its classes as data."""
    model = ledger.model
    source = builds_dense.get(model.architecture)
    if model.moe is None or source is None:
        return None
    return Refusal(
        field="num_experts",
        message=f"{display_name(ledger.settings.engine)} {ledger.version.label} builds {model.architecture} dense "
        f"whatever num_experts says ({model.moe.num_routed_experts} here): the checkpoint's experts have no "
        "parameters to load into",
        source=source,
    )


def tower_blocks_refusal(ledger: Ledger, split: TowerSplit, *, mlp_source: str = "") -> Refusal | None:
    """A tower the engine's build cannot split at this TP (`TowerSpec.not_built`): its encoder's attention split
    whatever the heads (`BlockSplit.attention` "always"; its rule's source), or a gated MLP whose unpadded width must
    divide (`TowerSplit.mlp_divides`; `mlp_source`). The engine asserts divisibility and the launch stops; not where
    the launch builds the encoder data-parallel (`split` as `TowerSplit.for_launch` set it: as at TP 1)."""
    tower, tp = ledger.model.tower, ledger.settings.tp
    whole = split.builds_whole(ledger.model.architecture)
    why = None if tower is None or whole else tower.not_built(tp, split)
    if tower is None or why is None:
        return None
    rule = tower.block_rule(split)
    source = rule.source if rule is not None and rule.attention == "always" and tower.heads % tp else mlp_source
    return Refusal(
        field=spelling_of(ledger.settings.engine, "tp"),
        message=f"{display_name(ledger.settings.engine)} {ledger.version.label} {why}",
        source=source,
    )
