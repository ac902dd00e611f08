"""The launch a plan prints to copy, at the edge: the environment it sets that a rule read, the engine's own line, and
where that is not the whole launch the config file it names and a build step's flags (TensorRT-LLM's YAML and
trtllm-build; kvtop.domain.engine_launch)."""

from __future__ import annotations

from typing import Any

from kvtop.commands.output import shell_prose
from kvtop.domain.engine_launch import EngineLaunch, env_words, yaml_lines
from kvtop.domain.launch import LaunchSettings

ENV_HEAD = "engine environment (set before the server's command): "
# the block's opening line, whichever comes first: the notes said beside it go above it (render_ledger)
LAUNCH_HEADS = (ENV_HEAD, "engine flags:")


def engine_config_json(launch: EngineLaunch) -> dict[str, Any] | None:
    """`{option, file, yaml, build_flags, build}`: the file the line names (its body as nested JSON) and the build step's
    flags, where the engine's line is not the whole launch (TensorRT-LLM); None where it is."""
    if not launch.config and not launch.build:
        return None
    return {"option": launch.config_option, "file": launch.config_file, "yaml": dict(launch.config),
            "build_flags": list(launch.build), "build": launch.build_said or None}  # fmt: skip


def engine_launch_json(settings: LaunchSettings) -> dict[str, Any]:
    """`plan --json`'s launch: `engine_flags` (the engine's own options, pasted after its server command and model),
    `engine_config` (the rest where that line is not the whole launch, `engine_config_json`) and `engine_env`
    (`{NAME: VALUE}`, the environment the launch set that the engine's rules read, to set before the server's
    command; `{}` where it set none, as every launch typed to kvtop)."""
    launch = settings.engine_launch()
    return {"engine_flags": list(launch.line), "engine_config": engine_config_json(launch),
            "engine_env": dict(launch.env)}  # fmt: skip


def engine_launch_lines(settings: LaunchSettings) -> list[str]:
    """'engine environment …: NAME=VALUE' where the launch set a variable a rule read (before the server's command,
    as a shell takes it and `--cmd` reads it back), 'engine flags: …' (the engine's own options, as a shell pastes
    them), then the config file the line names, written out, and the build's flags apart (TensorRT-LLM's YAML and
    trtllm-build; none for the other engines)."""
    launch = settings.engine_launch()  # pasted into a shell: a JSON value quoted whole, broken only between flags
    lines = [ENV_HEAD + " ".join(env_words(launch.env))]
    lines = lines if launch.env else []
    lines += [shell_prose("engine flags: ", launch.line)] if launch.line else []
    if launch.config:
        lines.append(f"  {launch.config_file} (the file {launch.config_option} names; write it beside the line):")
        lines += [f"    {line}" for line in yaml_lines(launch.config)]
    if launch.build:
        lines.append(shell_prose(f"  build flags ({launch.build_said}): ", launch.build))
    return lines
