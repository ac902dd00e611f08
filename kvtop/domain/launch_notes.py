"""What a launch command's parse left out, in one line a person can act on (`LaunchSettings.unknown_flags`): the
flags whose effect on memory kvtop does not model, and the ones it does not know, each with the flag it most
looks like. Read by `plan --cmd` and the planner's launch line."""

from __future__ import annotations

from kvtop.domain.engines.catalogue import display_name
from kvtop.domain.launch import LaunchSettings, alike_flag, engine_flags


def ignored_flags_note(settings: LaunchSettings) -> str | None:
    """One line naming each flag of a launch command kvtop ignored, with the flag it most looks like
    (`--max-totl-tokens (like --max-total-tokens)`), or None when it ignored none."""
    if not settings.unknown_flags:
        return None
    flags, name = engine_flags(settings.engine), display_name(settings.engine)
    named, unmodelled = [], []
    for flag in dict.fromkeys(settings.unknown_flags):
        if flags.as_parsed(flag) in flags.unmodelled | flags.memory_neutral:  # its effect on memory not modelled
            # (a neutral flag is here only at a value whose effect was not read)
            unmodelled.append(flag)
            continue
        alike = alike_flag(settings.engine, flag)
        named.append(f"{flag} (like {alike}?)" if alike else flag)
    parts = [f"{len(unmodelled)} of {name}'s flag(s) whose effect on memory it does not model: {', '.join(unmodelled)}"] if unmodelled else []
    parts += [f"{len(named)} flag(s) it does not know for {name}: {', '.join(named)}"] if named else []
    return f"--cmd: kvtop ignored {'; and '.join(parts)}"
