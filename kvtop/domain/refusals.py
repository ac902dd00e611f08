"""Launches an engine refuses at start although kvtop can size them: a planner must not call them valid.

kvtop's budget rules already refuse what no sizing can follow (a weight format a GPU cannot run, heads
that do not divide); these are the launches whose KV kvtop sizes well enough but the engine stops before
serving: a context longer than the model's positions, a KV dtype no attention backend of the GPU takes.
Each engine's package says which (`EngineRules.launch_refusals`, built of `Refusal`s here), from its own
code; an engine that lists none refuses nothing kvtop knows of. Every engine also refuses a model class its
release does not register (`kvtop.domain.launch_check`, which asks both). Live
engines are never checked: one that runs was accepted. An engine's long-context variable set on the launch line
(`ContextOverride`, by release) makes a context above the positions start: no refusal, a named note instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.catalogue import display_name
from kvtop.domain.launch import spelling_of

if TYPE_CHECKING:
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.ledger_values import Ledger
    from kvtop.domain.model import ModelSpec
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


class ContextOverride(BaseModel):
    """How a release of an engine is told to start a context above the model's positions: an environment variable
    the launch sets, read as the engine reads it (each engine's `LONG_CONTEXT_ERAS`, with its source)."""

    model_config = ConfigDict(frozen=True)

    env: str  # the variable, as the engine names it
    read: bool = True  # False: the release has no such variable and refuses whatever is set
    truthy: frozenset[str] = frozenset()  # the values, lower-cased, the engine reads as true
    strips: bool = False  # the engine strips the value before comparing (vLLM's `.strip().lower()`)
    unset_allows: bool = False  # unset, the release takes the longer length (a default of "True")

    def allows(self, flags: Mapping[str, str | bool]) -> bool:
        """Whether the launch's environment (its `NAME=VALUE`s, kept in `LaunchSettings.flags`) makes the engine take
        the longer length: a value it reads as true, or unset where the release defaults to taking it."""
        value = flags.get(self.env)
        if not self.read or value is None:
            return self.read and self.unset_allows
        text = str(value).strip() if self.strips else str(value)
        return text.lower() in self.truthy

    @property
    def spelled(self) -> str | None:
        """How a refusal names it: 'VLLM_ALLOW_LONG_MAX_MODEL_LEN=1'; None where the release has none."""
        return f"{self.env}=1" if self.read else None

    def unread(self, flags: Mapping[str, str | bool]) -> str:
        """Why a value the launch sets does not allow it, said after the refusal; empty where it sets none."""
        value = flags.get(self.env)
        if value is None:
            return ""
        if not self.read:
            return f"; this release does not read the launch's {self.env}={value}"
        return f"; the launch's {self.env}={value} reads false (true: {', '.join(sorted(self.truthy))})"


class AbovePositions(BaseModel):
    """A stated context length above the positions the engine derives: the one fact a refusal and a note read."""

    model_config = ConfigDict(frozen=True)

    stated: int
    positions: int
    whose: str  # what the positions are: 'max_position_embeddings', an engine's own derived figure


def above_positions(
    model: ModelSpec, settings: LaunchSettings, *, stated_wins_without_positions: bool = False,
    derived: tuple[int, str] | None = None,
) -> AbovePositions | None:
    """A context length given above the model's `max_position_embeddings`, which SGLang and vLLM refuse unless told
    to allow it (kvtop reads the positions as the config states them; a rope scaling the engine multiplies them by is
    the engine package's `derived`). `stated_wins_without_positions`: the engine takes a stated length as it is where
    the config names no position field (ModelSpec.positions_nominal), refusing only above a stated one. `derived`:
    (the length, whose) where the engine derives another than the config's positions (SGLang's get_context_length
    fallback, vLLM's rope scaling)."""
    stated, positions = settings.context_length, model.max_position_embeddings
    if derived is not None:
        positions = derived[0]
    if stated is None or stated <= positions:
        return None
    if stated_wins_without_positions and model.positions_nominal:
        return None
    # nominal positions are no field of the config: the engine's own figure where it finds none
    whose = "its default where the config names no position field" if model.positions_nominal else "max_position_embeddings"
    return AbovePositions(stated=stated, positions=positions, whose=derived[1] if derived is not None else whose)


def context_above_positions(
    ledger: Ledger, above: AbovePositions | None, *, source: str, override: ContextOverride
) -> Refusal | None:
    """The engine's refusal of a context above its positions (`above`), unless the launch sets the release's
    override as the engine reads it (`ContextOverride.allows`: then it starts, `allowed_note` says so)."""
    if above is None or override.allows(ledger.settings.flags):
        return None
    engine = ledger.settings.engine
    flag = spelling_of(engine, "context_length")
    return Refusal(
        field=flag,
        message=f"{display_name(engine)} {ledger.version.label} refuses {flag} {above.stated:,} above the model's "
        f"{above.positions:,} positions ({above.whose}){override.unread(ledger.settings.flags)}",
        source=source,
        override=override.spelled,
    )


def allowed_note(
    above: AbovePositions | None, override: ContextOverride, settings: LaunchSettings, version: ResolvedVersion
) -> str | None:
    """The plan's note where the launch makes the engine take a context above its positions (`ContextOverride.allows`):
    it plans the stated length, as the engine starts with it and logs its warning; None where nothing is above, or the
    engine refuses it (`context_above_positions`)."""
    if above is None or not override.allows(settings.flags):
        return None
    value = settings.flags.get(override.env)
    told = f"{override.env}={value}" if value is not None else f"{override.env} unset (this release's default: allowed)"
    flag = spelling_of(settings.engine, "context_length")
    return (f"long context allowed: {told}, so {display_name(settings.engine)} {version.label} starts at {flag} "
            f"{above.stated:,} above the model's {above.positions:,} positions ({above.whose}) and logs its warning; "
            "planned at the stated length")


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
