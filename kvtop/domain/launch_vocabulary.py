"""Each engine's command-line vocabulary, as its package states it (`EngineFlags`), and how kvtop finds it.

Split from launch.py, which parses a launch with it: the protocol every engine's `FLAGS` implements (its spellings,
its pass-through flags, the flags it has that kvtop classifies as having no effect on memory or as not modelled),
kvtop's own flags for one engine (`OwnFlag`), and the lookups of an engine's `FLAGS` and `RELEASE_NAMES`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.catalogue import EngineId, engine_module
from kvtop.domain.engines.versions import ReleaseNames
from kvtop.domain.load_casts import LoadCasts

if TYPE_CHECKING:
    from kvtop.domain.launch import LaunchSettings

# the KV dtype words of an engine whose values are names already (`EngineFlags.kv_cache_dtype_words`)
NO_WORDS: Mapping[str, str] = MappingProxyType({})


class OwnFlag(BaseModel):
    """A flag kvtop takes for one engine that the engine itself does not have: it states a fact the engine
    reads elsewhere (off the model path, say). Typed to kvtop, read off a log; inside an engine's own
    command line (`--cmd`) it is refused, since the engine would reject it."""

    model_config = ConfigDict(frozen=True)

    field: str  # the LaunchSettings field it sets
    says: str  # what it tells kvtop, e.g. "the model path is a TurboMind workspace"


class NeutralGroup(NamedTuple):
    """One kind of an engine's flags with no effect on GPU memory (the API server's own, logging, …)."""

    why: str  # why none of them changes memory, e.g. "the API server's own setting: a CPU process"
    flags: frozenset[str]  # their spellings (a bool flag's `--no-NAME` too, where the engine's parser takes it)


class EngineFlags(Protocol):
    """One engine's command-line vocabulary (implemented by each engine package)."""

    spellings: Mapping[str, str]  # flag as the engine spells it -> LaunchSettings field
    own_flags: Mapping[str, OwnFlag]  # kvtop's own flags for this engine, not the engine's (never in `spellings`)
    kv_cache_dtypes: tuple[str, ...]  # what `--kv-cache-dtype` accepts
    load_casts: LoadCasts  # what `--dtype` and online `--quantization` do to the weights at load (served_model.py)
    specials: Mapping[str, tuple[int, str]]  # field -> (a value below 1 it documents, its meaning)
    # how its server takes the model on the launch line: the flag, or None where it is the first positional
    model_flag: str | None
    choices: Mapping[str, tuple[str, ...]]  # field -> the words it accepts (e.g. the runtime: backend)

    # flags the engine has that do not change KV sizing: accepted as typed and kept verbatim in `flags`
    passthrough: frozenset[str]
    # of those, the ones a rule reads from `flags` (a refusal, a tower's split): `--help` lists them apart
    read_by_rules: frozenset[str]
    # of the engine's flags kvtop does not read, those its package classified as having no effect on GPU memory, by
    # kind (short name -> NeutralGroup): accepted, named on the plan's line under the engine flags, never written back;
    # `--help` counts them, `--list-neutral-flags ENGINE` lists them. Empty where the engine's flags were not
    # classified yet (its package says what is missing): such a flag is then refused as unknown
    memory_neutral_groups: Mapping[str, NeutralGroup]
    memory_neutral: frozenset[str]  # every spelling of those groups (all pass-through: accepted)
    # the engine's flags that change memory in a way kvtop does not model, or whose effect was not read: typed to
    # kvtop, refused as such ("a flag of vLLM whose effect on memory kvtop does not model"), not as unknown; on a
    # launch line (--cmd, a running server's command line) kept and named as ignored, never refused
    unmodelled: frozenset[str]
    # what a pass-through flag that takes a value takes, as `--help` writes it (vLLM's `--hf-overrides JSON`); a flag
    # not named here is listed bare
    value_placeholders: Mapping[str, str]
    # environment variables a rule reads from a launch line's leading `NAME=VALUE` tokens; every other assignment
    # there (HF_TOKEN=…, an API key) is dropped at parse time, never kept, shown or written
    env_read: frozenset[str]
    # container images whose tag names the engine's release (`vllm/vllm-openai:v0.11.0`), read where no version is set
    release_images: frozenset[str]

    def refuse(self, field: str, value: object, flag: str) -> None:
        """Raise InputError for a value the engine has but kvtop does not model (or the engine refuses).

        Called for every field that is set, after the generic count and fraction checks, and for each pass-through
        flag typed to kvtop or on the engine's launch line (`field` its name without dashes, `value` as typed)."""

    def check_parallel(self, settings: LaunchSettings) -> None:
        """Raise InputError when EP/DCP do not fit the ranks the way this engine lays them out."""

    def to_flags(self, settings: LaunchSettings) -> list[str]:
        """The settings as this engine's flags, for copy and paste."""

    def find_launch(self, argv: Sequence[str]) -> tuple[int, str | None] | None:
        """(index after the entry point, positional model) when argv launches this engine's server."""

    def as_parsed(self, spelling: str) -> str:
        """The flag as the engine's own parser reads it before matching a name (vLLM's turns `--a_b` into
        `--a-b`); an engine whose parser takes names as typed returns `spelling`."""

    def kv_cache_dtype_words(self, engine_version: str | None) -> Mapping[str, str]:
        """What each of `kv_cache_dtypes` means, shown beside it where the value does not say it (LMDeploy's
        `--quant-policy 8` reads '8 · int8'), at the release `engine_version` names (None: the latest); empty for an
        engine whose values are words already ('fp8_e4m3'). The word names the KV format the plan then solves."""


def release_names(engine: EngineId) -> ReleaseNames:
    """What the engine calls a release (`--engine-version`): its package's `RELEASE_NAMES` (PEP 440's, or its
    own where it names its releases otherwise: llama.cpp's builds)."""
    names: ReleaseNames = engine_module(engine).RELEASE_NAMES
    return names


def engine_flags(engine: EngineId) -> EngineFlags:
    """The engine's command-line vocabulary (its package's `FLAGS`)."""
    flags: EngineFlags = engine_module(engine).FLAGS
    return flags
