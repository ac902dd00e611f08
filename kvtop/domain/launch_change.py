"""A change of settings as the engine takes it: the options, config-file keys, build flags and environment that the
copied launch (`LaunchSettings.engine_launch`, each engine package's own writer at the plan's release) writes
otherwise once the change is made. A finding's fix, a what-if and `--compare`'s same-budget line say this, so that
what they tell a person to change is what the engine's CLI or YAML accepts (TensorRT-LLM: `kv_cache_config: {dtype:
fp8}` in the `--extra_llm_api_options` YAML, never kvtop's `--kv_cache_config.dtype`), from the one writer the
copied launch uses (no second spelling table; no engine named here).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kvtop.domain.engine_launch import EngineLaunch, env_words, yaml_flow
from kvtop.domain.launch import LaunchSettings

# a token that starts with '-' and is a number is an option's value (`--cache-chunk-size -1`), not an option
_NEGATIVE = re.compile(r"^-\.?\d")
KVTOP_SPELLING = "kvtop's spelling"


def options(tokens: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """A line's tokens grouped by option, in order (`--tp 2 --enforce-eager` -> {'--tp': ('--tp', '2'),
    '--enforce-eager': ('--enforce-eager',)}); a value before any option is its own group, and a repeated option one
    group of all its uses (`--lora-modules a --lora-modules b`), none lost."""
    groups: dict[str, tuple[str, ...]] = {}
    name: str | None = None
    for token in tokens:
        if name is None or (token.startswith("-") and not _NEGATIVE.match(token)):
            name = token
            groups[name] = (*groups.get(name, ()), token)
        else:
            groups[name] += (token,)
    return groups


def _leaves(body: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """A nested body as dotted keys (an empty section is a leaf: `cuda_graph_config: {}`)."""
    out: dict[str, object] = {}
    for key, value in body.items():
        if isinstance(value, Mapping) and value:
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _nested(leaves: Mapping[str, object]) -> dict[str, object]:
    """Dotted keys back into a nested body (`{'kv_cache_config.dtype': 'fp8'}` -> {kv_cache_config: {dtype: fp8}})."""
    body: dict[str, object] = {}
    for path, value in leaves.items():
        *parents, leaf = path.split(".")
        node = body
        for part in parents:
            child = node.setdefault(part, {})
            assert isinstance(child, dict)
            node = child
        node[leaf] = value
    return body


def _diff(before: Mapping[str, object], after: Mapping[str, object]) -> tuple[dict[str, object], tuple[str, ...]]:
    """(what `after` sets or changes, in its order; the names `before` has that `after` drops)."""
    changed = {name: value for name, value in after.items() if before.get(name, _MISSING) != value}
    return changed, tuple(name for name in before if name not in after)


_MISSING = object()


@dataclass(frozen=True)
class LaunchChange:
    """What a change writes otherwise in the engine's launch: `line` the options set or changed (each as the engine
    takes it, with its values), `line_dropped` the options it removes; `config` the keys set or changed in the file
    `config_file` names (nested), `config_dropped` the dotted keys removed there, `config_option` the option that
    names the file, `config_own` whether the launch names its own file (then the keys are said as added to it, never
    as kvtop's file replacing it), `config_said` the writer's note on the file's schema; `build` / `build_dropped` a
    build step's flags (`build_said` names the step, or says there is none); `env` / `env_dropped` the environment;
    `spelled_by` where the release has no launch kvtop writes (TensorRT-LLM before trtllm-serve): why the words are
    kvtop's own, else ''; `moved` the config keys that only took a value the line held before (the writer states them:
    `EngineLaunch.moved`; `names` leaves them out)."""

    line: tuple[tuple[str, ...], ...] = ()
    line_dropped: tuple[str, ...] = ()
    config: Mapping[str, object] = field(default_factory=dict)
    config_dropped: tuple[str, ...] = ()
    config_file: str | None = None
    config_option: str | None = None
    config_own: bool = False
    config_said: str = ""
    build: tuple[tuple[str, ...], ...] = ()
    build_dropped: tuple[str, ...] = ()
    build_said: str = ""
    build_tools: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    env_dropped: tuple[str, ...] = ()
    spelled_by: str = ""
    moved: frozenset[str] = frozenset()  # config keys whose value the line held before under an option of their name

    @property
    def empty(self) -> bool:
        """Whether the change writes nothing otherwise (a value the launch already had, or one it never writes)."""
        return not (self.line or self.line_dropped or self.config or self.config_dropped or self.build
                    or self.build_dropped or self.env or self.env_dropped)  # fmt: skip

    @property
    def names(self) -> tuple[str, ...]:
        """What the change sets, by the engine's names: its options (`--kv-cache-dtype`), the file's dotted keys
        (`kv_cache_config.dtype`), the build's flags, the environment's names. Left out: the launch's pointer to its
        config file (`--extra_llm_api_options`), not a setting, and a value only moved from the line into the file
        (`moved`: TensorRT-LLM's fraction beside a new kv_cache_config key), not changed."""
        keys = [key for key in _leaves(self.config) if key not in self.moved]
        return (*(g[0] for g in self._line()), *keys, *(g[0] for g in self.build), *self.env)

    def _line(self) -> tuple[tuple[str, ...], ...]:
        """The line's groups but the pointer to the config file (`--extra_llm_api_options <file>`), not a setting."""
        return tuple(group for group in self.line if not (self.config and group[0] == self.config_option))

    def said(self) -> str:
        """The change as a person makes it: '--gpu-memory-utilization 0.92', 'drop --mem-fraction-static',
        '--extra_llm_api_options extra_llm_api_options.yaml · extra_llm_api_options.yaml: {kv_cache_config: {dtype:
        fp8}}' (where the launch names its own file: 'add to your --extra_llm_api_options file: {…}', its pointer
        kept), 'rebuild the engine: quantize.py --kv_cache_dtype fp8; trtllm-build --tokens_per_block 64'
        (`build_words`; 'build flags (<the step>): …' only where the step names no tool); parts joined by ' · ' as the
        copied launch's one-line form (`launch_words`); '' where it writes nothing."""
        line = self._line() if self.config_own else self.line
        file = f"your {self.config_option} file" if self.config_own else self.config_file
        parts = [shlex.join(token for group in line for token in group)] if line else []
        # the person's own file stays named even where kvtop's keys leave it empty
        parts += [f"drop {name}" for name in self.line_dropped if not (self.config_own and name == self.config_option)]
        parts += [f"add to {file}: {yaml_flow(self.config)}" if self.config_own else f"{file}: {yaml_flow(self.config)}"
                  ] if self.config else []  # fmt: skip
        parts += [f"drop {key} from {file}" for key in self.config_dropped]
        parts += [f"({self.config_said})"] if self.config_said and (self.config or self.config_dropped) else []
        parts += [build_words(self.build, self.build_tools, self.build_said, "rebuild the engine")] if self.build else []
        parts += [f"drop build flag {name}" for name in self.build_dropped]
        parts += [f"{' '.join(env_words(self.env))} before the server's command"] if self.env else []
        parts += [f"unset {name}" for name in self.env_dropped]
        said = " · ".join(parts)
        return f"{said} ({KVTOP_SPELLING}: {self.spelled_by})" if said and self.spelled_by else said


def _line_change(before: Iterable[str], after: Iterable[str]) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    changed, dropped = _diff(options(before), options(after))
    return tuple(group for group in changed.values() if isinstance(group, tuple)), dropped


def launch_change(before: LaunchSettings, after: LaunchSettings) -> LaunchChange:
    """What `after` writes otherwise than `before` in the engine's launch at `after`'s release (both redacted, as the
    copied launch is). Where the release has no launch line (`EngineLaunch.line_said`) the change is said in kvtop's
    own flags (`to_flags`), and marked so; where the launch writes no difference but the settings differ (a field
    the engine's writer leaves out), the same."""
    was, now = before.engine_launch(), after.engine_launch()
    if not now.line_said:
        line, line_dropped = _line_change(was.line, now.line)
        config, config_dropped = _diff(_leaves(was.config), _leaves(now.config))
        build, build_dropped = _line_change(was.build, now.build)
        env, env_dropped = _diff(was.env, now.env)
        held = options(was.line)
        moved = frozenset(key for key, value in config.items() if now.moved.get(key) in line_dropped
                          and held[now.moved[key]][1:] == (str(value),))  # fmt: skip
        change = LaunchChange(
            line=line, line_dropped=line_dropped, config=_nested(config), config_dropped=config_dropped,
            config_file=now.config_file or was.config_file, config_option=now.config_option or was.config_option,
            config_own=was.config_own, config_said=now.config_said, build=build, build_dropped=build_dropped,
            build_said=now.build_said or was.build_said, build_tools={**was.build_tools, **now.build_tools},
            env={name: str(value) for name, value in env.items()}, env_dropped=env_dropped, moved=moved,
        )  # fmt: skip
        if not change.empty or before == after:
            return change
    line, line_dropped = _line_change(before.to_flags(), after.to_flags())
    why = _first_clause(now.line_said) if now.line_said else "not a setting the engine's launch kvtop writes holds"
    return LaunchChange(line=line, line_dropped=line_dropped, spelled_by=why)


def _first_clause(said: str) -> str:
    """'TensorRT-LLM 0.8.0 has no trtllm-serve, first in 0.15.0 (not pinned)' of a longer `line_said`."""
    return said.split(":", 1)[0]


def change_words(before: LaunchSettings, after: LaunchSettings) -> str:
    """`launch_change(before, after).said()`: the words a fix line gives for the change."""
    return launch_change(before, after).said()


def set_words(settings: LaunchSettings, **update: object) -> str:
    """The words for setting fields of `settings` (`set_words(s, kv_cache_dtype="fp8")`), as the engine takes them."""
    return change_words(settings, settings.model_copy(update=update))


def setting_names(settings: LaunchSettings, field_name: str, value: object) -> tuple[str, ...]:
    """The engine's names for `field_name` where the launch sets it to `value` ('--gpu-memory-utilization',
    'kv_cache_config.free_gpu_memory_fraction'), from the same change, names only: where the engine's launch holds
    none they are kvtop's own (`launch_change(...).spelled_by` says why; the sentence that prints them says so)."""
    return tuple(dict.fromkeys(launch_change(settings, settings.model_copy(update={field_name: value})).names))


def setting_name(settings: LaunchSettings, field_name: str, value: object) -> str:
    """`setting_names` joined by ' / ' where the launch writes several (a name for a sentence or a JSON field)."""
    return " / ".join(setting_names(settings, field_name, value))


def build_words(groups: Iterable[tuple[str, ...]], tools: Mapping[str, str], said: str, lead: str) -> str:
    """A build step's flags by the tool that takes each, as the writer states it ('rebuild the engine: quantize.py
    --kv_cache_dtype fp8; trtllm-build --tokens_per_block 32'); where it names no tool (TensorRT-LLM's PyTorch
    backend builds no engine) the flags with the writer's words for them."""
    groups = tuple(groups)
    if not tools:
        flags = shlex.join(token for group in groups for token in group)
        return f"build flags ({said}): {flags}" if said else f"build flags: {flags}"
    by_tool: dict[str, list[str]] = {}
    for group in groups:
        by_tool.setdefault(tools.get(group[0], "the build"), []).extend(group)
    return f"{lead}: " + "; ".join(f"{tool} {shlex.join(flags)}" for tool, flags in by_tool.items())


def launch_words(launch: EngineLaunch) -> str:
    """A whole launch on one line as the engine takes it: the environment a rule read, the engine's options, the config
    file the line names (`extra_llm_api_options.yaml: {kv_cache_config: {dtype: fp8}}`) and the build's flags, joined
    by ' · '; '' where it takes none."""
    said = [" ".join(env_words(launch.env))] if launch.env and not launch.line_said else []  # no command to precede
    said += [shlex.join(launch.line)] if launch.line else []
    said += [f"no line ({launch.line_said})"] if launch.line_said else []
    own = "add to " if launch.config_own else ""  # the person's file: kvtop's keys are added to it
    said += [f"{own}{launch.config_file}: {yaml_flow(launch.config)}"] if launch.config else []
    said += [build_words(tuple(options(launch.build).values()), launch.build_tools, launch.build_said,
                         "the engine's build")] if launch.build else []  # fmt: skip
    return " · ".join(said)
