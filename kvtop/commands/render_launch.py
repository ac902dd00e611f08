"""The launch a plan prints to copy, at the edge: the environment it sets that a rule read, the engine's own line, and
where that is not the whole launch the config file it names and a build step's flags (TensorRT-LLM's YAML and
trtllm-build; kvtop.domain.engine_launch)."""

from __future__ import annotations

from typing import Any

from kvtop.commands.output import prose, shell_prose
from kvtop.domain.engine_launch import EngineLaunch, env_words, yaml_lines
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_change import launch_words
from kvtop.domain.wording import DEFAULTS_SAID

ENV_HEAD = "engine environment (set before the server's command): "
# the block's opening line, whichever comes first: the notes said beside it go above it (render_ledger)
LAUNCH_HEADS = (ENV_HEAD, "engine flags:")


def engine_config_json(launch: EngineLaunch) -> dict[str, Any] | None:
    """`{option, file, own, yaml, build_flags, build}`: the file the line names (its body as nested JSON; `own`: the
    launch's own file, to which the keys are added, never replaced) and the build step's flags, where the engine's line
    is not the whole launch (TensorRT-LLM); None where it is."""
    if not launch.config and not launch.build and not launch.line_said:
        return None
    return {"option": launch.config_option, "file": launch.config_file, "own": launch.config_own,
            "yaml": dict(launch.config),
            "build_flags": list(launch.build), "build": launch.build_said or None,
            "no_line": launch.line_said or None, "yaml_note": launch.config_said or None}  # fmt: skip


def engine_launch_json(settings: LaunchSettings) -> dict[str, Any]:
    """`plan --json`'s launch: `engine_flags` (the engine's own options, pasted after its server command and model),
    `engine_config` (the rest where that line is not the whole launch, `engine_config_json`) and `engine_env`
    (`{NAME: VALUE}`, the environment the launch set that the engine's rules read, to set before the server's
    command; `{}` where it set none, as every launch typed to kvtop)."""
    return launch_json(settings.engine_launch())


def launch_json(launch: EngineLaunch | None) -> dict[str, Any]:
    """`engine_launch_json` of a launch already written (`--compare`'s same-budget row); empty keys where none."""
    if launch is None:
        return {"engine_flags": [], "engine_config": None, "engine_env": {}}
    return {"engine_flags": list(launch.line), "engine_config": engine_config_json(launch),
            "engine_env": dict(launch.env)}  # fmt: skip


def engine_launch_lines(settings: LaunchSettings) -> list[str]:
    """'engine environment …: NAME=VALUE' where the launch set a variable a rule read (before the server's command,
    as a shell takes it and `--cmd` reads it back; none where the release has no server's command), 'engine flags: …'
    (the engine's own options, as a shell pastes them), then the config file the line names, written out, and the
    build's flags apart (TensorRT-LLM's YAML and trtllm-build; none for the other engines)."""
    launch = settings.engine_launch()  # pasted into a shell: a JSON value quoted whole, broken only between flags
    # no environment line where there is no server's command to set it before (TensorRT-LLM before trtllm-serve)
    lines = [ENV_HEAD + " ".join(env_words(launch.env))] if launch.env and not launch.line_said else []
    lines += [shell_prose("engine flags: ", launch.line)] if launch.line else []
    if launch.line_said:
        lines.append(f"engine flags: none to copy ({launch.line_said})")
    if launch.config and launch.config_own:  # the person's file: kvtop's keys are added to it, never replace it
        lines.append(f"  add to {launch.config_file} (your file, which {launch.config_option} names; kvtop's keys only):")
    elif launch.config:
        lines.append(f"  {launch.config_file} (the file {launch.config_option} names; kvtop's keys only: merge them into "
                     "your file, or write it beside the line):")
    if launch.config:
        lines += [f"    {line}" for line in yaml_lines(launch.config)]
        lines += [prose("  note: ", launch.config_said, hang=4)] if launch.config_said else []
    if launch.build:
        lines.append(shell_prose(f"  build flags ({launch.build_said}): ", launch.build))
    return lines


def launch_text(settings: LaunchSettings) -> str:
    """The launch on one line, as the engine takes it (a layout's or the smallest fit's): the environment a rule
    read (`VLLM_USE_V1=0`, set before the server's command: pasted without it the plan changes), the engine's own
    options, then the config file the line names and the build's flags (TensorRT-LLM: `--backend pytorch
    --extra_llm_api_options extra_llm_api_options.yaml · extra_llm_api_options.yaml: {kv_cache_config: {dtype: fp8}}`,
    never kvtop's `--kv_cache_config.dtype`, which trtllm-serve refuses); '' where the launch takes none."""
    return launch_words(settings.engine_launch())


def launch_said(settings: LaunchSettings) -> str:
    """'engine flags: --tensor-parallel-size 2' (its environment first, where it set one) for a layout that fits (the launch as the engine takes it: TensorRT-LLM's
    serve options and YAML, `launch_text`), or that it takes none (every default)."""
    said = launch_text(settings)
    return f"engine flags: {said}" if said else f"no engine flags: {DEFAULTS_SAID}"
