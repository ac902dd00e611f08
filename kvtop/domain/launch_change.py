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
    '--enforce-eager': ('--enforce-eager',)}); a value before any option is its own group."""
    groups: dict[str, tuple[str, ...]] = {}
    name: str | None = None
    for token in tokens:
        if name is None or (token.startswith("-") and not _NEGATIVE.match(token)):
            name = token
            groups[name] = (token,)
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
    `config_file` names (nested), `config_dropped` the dotted keys removed there; `build` / `build_dropped` a build
    step's flags (`build_said` names the step); `env` / `env_dropped` the environment; `spelled_by` where the release
    has no launch kvtop writes (TensorRT-LLM before trtllm-serve): why the words are kvtop's own, else ''; `moved`
    the config keys that only took a value the line held before (`names` leaves them out)."""

    line: tuple[tuple[str, ...], ...] = ()
    line_dropped: tuple[str, ...] = ()
    config: Mapping[str, object] = field(default_factory=dict)
    config_dropped: tuple[str, ...] = ()
    config_file: str | None = None
    build: tuple[tuple[str, ...], ...] = ()
    build_dropped: tuple[str, ...] = ()
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
        pointers = {group[0] for group in self.line if self.config and group[1:] == (self.config_file,)}
        keys = [key for key in _leaves(self.config) if key not in self.moved]
        return (*(g[0] for g in self.line if g[0] not in pointers), *keys, *(g[0] for g in self.build), *self.env)

    def said(self) -> str:
        """The change as a person makes it: '--gpu-memory-utilization 0.92', 'drop --mem-fraction-static',
        '--extra_llm_api_options extra_llm_api_options.yaml · extra_llm_api_options.yaml: {kv_cache_config: {dtype:
        fp8}}', 'build flags: --tokens_per_block 64'; parts joined by ' · ' as the copied launch's one-line form
        (`launch_words`); '' where it writes nothing."""
        parts = [shlex.join(token for group in self.line for token in group)] if self.line else []
        parts += [f"drop {name}" for name in self.line_dropped]
        parts += [f"{self.config_file}: {yaml_flow(self.config)}"] if self.config else []
        parts += [f"drop {key} from {self.config_file}" for key in self.config_dropped]
        parts += [f"build flags: {shlex.join(t for group in self.build for t in group)}"] if self.build else []
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
        moved = frozenset(key for key, value in config.items() for name in line_dropped
                          if key.rsplit(".", 1)[-1] in name.replace("-", "_") and held[name][1:] == (str(value),))  # fmt: skip
        change = LaunchChange(
            line=line, line_dropped=line_dropped, config=_nested(config), config_dropped=config_dropped,
            config_file=now.config_file or was.config_file, build=build, build_dropped=build_dropped,
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


def setting_name(settings: LaunchSettings, field_name: str, value: object) -> str:
    """The engine's name for `field_name` where the launch sets it to `value` ('--gpu-memory-utilization',
    'kv_cache_config.free_gpu_memory_fraction'), from the same change; its names joined by '/' where it writes
    several, and kvtop's own spelling said as such where the engine's launch holds none."""
    change = launch_change(settings, settings.model_copy(update={field_name: value}))
    names = " / ".join(dict.fromkeys(change.names))
    return f"{names} ({KVTOP_SPELLING})" if names and change.spelled_by else names


def launch_words(launch: EngineLaunch) -> str:
    """A whole launch on one line as the engine takes it: the environment a rule read, the engine's options, the config
    file the line names (`extra_llm_api_options.yaml: {kv_cache_config: {dtype: fp8}}`) and the build's flags, joined
    by ' · '; '' where it takes none."""
    said = [" ".join(env_words(launch.env))] if launch.env and not launch.line_said else []  # no command to precede
    said += [shlex.join(launch.line)] if launch.line else []
    said += [f"no line ({launch.line_said})"] if launch.line_said else []
    said += [f"{launch.config_file}: {yaml_flow(launch.config)}"] if launch.config else []
    said += [f"build flags: {shlex.join(launch.build)}"] if launch.build else []
    return " · ".join(said)
