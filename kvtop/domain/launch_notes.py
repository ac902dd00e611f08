"""What a launch command's parse left out (`LaunchSettings.unknown_flags`): the flags whose effect on memory kvtop
does not model, and the ones it does not know, each with the flag it most looks like. Read by `plan --cmd` (its note
on stderr and its JSON's `flags_not_read`) and the planner's launch line."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.catalogue import display_name
from kvtop.domain.engines.measured_reads import MeasuredNotRead
from kvtop.domain.launch import LaunchSettings, alike_flag, engine_flags, spelling_of
from kvtop.domain.redact import RedactedStr
from kvtop.domain.secret_names import masks_value
from kvtop.domain.secret_text import redact_text
from kvtop.domain.wording import counted


class IgnoredFlag(BaseModel):
    """One flag of a launch command kvtop did not read into its plan, and why."""

    model_config = ConfigDict(frozen=True)

    flag: RedactedStr  # as spelled on the command line, a secret glued to it masked (`-hft***`)
    # unknown: neither the engine's (as kvtop knows it) nor kvtop's; not_modelled: the engine's, its effect on
    # memory not modelled (a memory-neutral flag only at a value whose effect was not read); not_read_by_rule: a
    # measured figure kvtop's own flag gave that the engine's rule does not read (`measured_reads`)
    why: Literal["unknown", "not_modelled", "not_read_by_rule"]
    like: str | None = None  # the known flag it most looks like (an unknown flag's likely intent)
    rule: str | None = None  # not_read_by_rule: what the engine's rule sizes from instead, with its source


def ignored_flags(settings: LaunchSettings) -> tuple[IgnoredFlag, ...]:
    """Each flag of the launch kvtop ignored, once, in the order given."""
    flags = engine_flags(settings.engine)
    ignored = []
    for flag in dict.fromkeys(settings.unknown_flags):
        if flags.as_parsed(flag) in flags.unmodelled | flags.memory_neutral:
            ignored.append(IgnoredFlag(flag=flag, why="not_modelled"))
        else:
            ignored.append(IgnoredFlag(flag=flag, why="unknown", like=alike_flag(settings.engine, flag)))
    return tuple(ignored)


def unread_measured_flags(unread: tuple[MeasuredNotRead, ...]) -> tuple[IgnoredFlag, ...]:
    """The measured figures a plan was given that its engine's rule does not read, as the flags that gave them."""
    return tuple(IgnoredFlag(flag=u.flag, why="not_read_by_rule", rule=u.why) for u in unread)


def ignored_flags_note(settings: LaunchSettings) -> str | None:
    """One line naming each flag of a launch command kvtop ignored, with the flag it most looks like
    (`--max-totl-tokens (like --max-total-tokens)`), or None when it ignored none."""
    ignored = ignored_flags(settings)
    if not ignored:
        return None
    name = display_name(settings.engine)
    partly = engine_flags(settings.engine).partly_read  # a rule reads it for one effect: said beside it
    unmodelled = [f"{f.flag} ({partly[f.flag]})" if f.flag in partly else f.flag for f in ignored if f.why == "not_modelled"]
    named = [_with_likeness(f.flag, f.like) if f.like else f.flag for f in ignored if f.why == "unknown"]
    parts = [f"{counted(len(unmodelled), 'flag')} of {name} whose effect on memory it does not model: {', '.join(unmodelled)}"] if unmodelled else []
    parts += [f"{counted(len(named), 'flag')} it does not know for {name}: {', '.join(named)}"] if named else []
    return f"--cmd: kvtop ignored {'; and '.join(parts)}"


def _with_likeness(flag: str, like: str) -> str:
    """`--max-totl-tokens (like --max-total-tokens?)`; where the redactor would read the words after a secret-named
    flag as its value (`--apikey (like …` masks `(like`), `--apikey, like --api-key?`: the flag ends at a comma."""
    said = f"{flag} (like {like}?)"
    return said if redact_text(said) == said else f"{flag}, like {like}?"


def overridden_flags_note(launched: LaunchSettings, direct: LaunchSettings) -> str | None:
    """One line naming each setting both the `--cmd` and kvtop's own flags gave, at different values, and saying the
    flag given to kvtop wins (`--cmd 'vllm serve m --tp 2' --tp 4` plans TP4, said, never in silence); None when
    none differs. Fields by the engine's spelling; a pass-through flag by its own. kvtop's --model is not one of
    them: it names where the --cmd's model's config is read (a local copy of a hub name's), not another model."""
    said: list[str] = []
    secrets: list[str] = []
    for field in sorted(direct.model_fields_set & launched.model_fields_set - {"engine", "flags", "unknown_flags"}):
        ours, theirs = getattr(direct, field), getattr(launched, field)
        if ours != theirs:
            said.append(f"{spelling_of(launched.engine, field)} {ours} over the --cmd's {theirs}")
    for flag, value in direct.flags.items():
        theirs = launched.flags.get(flag)
        if theirs is None or theirs == value:
            continue
        typed = f"-{flag}" if f"-{flag}" in engine_flags(launched.engine).passthrough else f"--{flag}"  # kept undashed
        if masks_value(typed, str(value)) or masks_value(typed, str(theirs)):  # a secret is never echoed
            secrets.append(typed)
        else:
            said.append(f"{typed} {value} over the --cmd's {theirs}")
    if secrets:  # last, the flags alone: a value after a secret's flag would be read as the secret (and masked)
        said.append(f"kvtop's value wins at a secret (neither shown): {', '.join(secrets)}")
    if not said:
        return None
    return f"the flag given to kvtop wins where the --cmd says otherwise: {'; '.join(said)}"
