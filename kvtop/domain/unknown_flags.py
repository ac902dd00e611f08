"""What kvtop says of a flag it does not take for an engine: the field a spelling names, the engine's own spelling of a
flag typed with '-' and '_' swapped, the flag it most looks like, a flag the engine has whose effect is not modelled, and
another engine's flag. Split from launch.py (its parser's words), which re-exports `alike_flag`."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Protocol

from kvtop.domain.engines.catalogue import ENGINE_IDS, EngineId, display_name, engine_module
from kvtop.domain.launch_vocabulary import KVTOP_SPELLINGS, OwnFlag


class FlagVocabulary(Protocol):
    """What these words read of an engine's flags (`launch.EngineFlags` holds them, among its other duties): typed here
    so that this module needs nothing of launch.py, which imports it."""

    spellings: Mapping[str, str]
    own_flags: Mapping[str, OwnFlag]
    passthrough: frozenset[str]
    unmodelled: frozenset[str]


def engine_flags(engine: EngineId) -> FlagVocabulary:
    """The engine's command-line vocabulary (its package's `FLAGS`, as `launch.engine_flags` reads it)."""
    flags: FlagVocabulary = engine_module(engine).FLAGS
    return flags


def flag_field(engine: EngineId, spelling: str) -> str | None:
    flags = engine_flags(engine)
    own = flags.own_flags.get(spelling)
    return flags.spellings.get(spelling) or (own.field if own else None) or KVTOP_SPELLINGS.get(spelling)


def respelled(engine: EngineId, typed: str) -> str | None:
    """'<engine> spells it --a_b' for a typed --a-b: the engine's own flag with '-' and '_' swapped, which a parser
    that takes names as typed (click, argparse) rejects (None where the engine has no such flag)."""
    name = typed.removeprefix("--")
    flags = engine_flags(engine)
    known = {*flags.spellings, *flags.passthrough}
    for other in (name.replace("-", "_"), name.replace("_", "-")):
        if other != name and f"--{other}" in known:
            return f"{display_name(engine)} spells it --{other}"
    return None


def alike_flag(engine: EngineId, flag: str) -> str | None:
    """The flag the engine takes (as kvtop knows it) that `flag` most looks like: a typo's likely intent."""
    flags = engine_flags(engine)
    known = [*flags.spellings, *flags.own_flags, *flags.passthrough, *KVTOP_SPELLINGS]
    alike = difflib.get_close_matches(flag, known, n=1, cutoff=0.8)
    return alike[0] if alike else None


def not_modelled_why(engine: EngineId, spelling: str) -> str | None:
    """Why a flag the engine has (`EngineFlags.unmodelled`) is refused though kvtop knows it (None for another)."""
    if spelling not in engine_flags(engine).unmodelled:
        return None
    return (f"a flag of {display_name(engine)} whose effect on memory kvtop does not model: plan without it, or "
            "read the log of a start that used it with `kvtop explain`")  # fmt: skip


def other_engines_flag(engine: EngineId, spelling: str) -> str | None:
    """'--context-length is SGLang's flag: vLLM spells it --max-model-len' (None if no engine has it);
    a flag kvtop takes for another engine is named as kvtop's, not that engine's."""
    for other in ENGINE_IDS:
        if other == engine:
            continue
        own_flag = engine_flags(other).own_flags.get(spelling)
        if own_flag is not None:
            return f"is kvtop's own flag for {display_name(other)} ({own_flag.says}): {display_name(engine)} has no such setting"
        field = engine_flags(other).spellings.get(spelling)
        if field is None:
            continue
        own = [flag for flag, name in engine_flags(engine).spellings.items() if name == field]
        there = (
            f"{display_name(engine)} spells it {own[0]}"
            if own
            else f"{display_name(engine)} has no such setting"
        )
        return f"is {display_name(other)}'s flag: {there}"
    return None
