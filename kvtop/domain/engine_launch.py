"""A launch as the engine takes it, where its command line is not the whole of it: the line, the config file the
line names (its body, written beside the line) and the flags that belong to an earlier build step.

TensorRT-LLM's `trtllm-serve` takes a few dozen click options; every other LLM-API key goes in the
`--extra_llm_api_options` YAML, and a TensorRT engine's shape is fixed by `trtllm-build` before serve starts
(engines/trtllm/serve_launch.py). Engines whose command line carries everything kvtop reads have no such parts
(`EngineFlags.launch_parts` None): their line is `LaunchSettings.to_flags()`.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from kvtop.domain.secret_text import redact_text

# a YAML scalar written bare (no quotes): a name, a path, a dotted word; quoted where YAML would read it as another type
_PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./-]*$")
_YAML_WORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"})


@dataclass(frozen=True)
class EngineLaunch:
    """`line`: the engine's own options only (pasteable after the server's command and model); `config`: the nested
    body of the file `config_option` names (`config_file` the name the line gives it), empty where the line names
    none; `build`: flags of the build step (`build_said` names it), never the server's; `line_said`: why there is no
    line to copy where the release has no server command (TensorRT-LLM before trtllm-serve), else ''; `config_said`:
    where the body is not in the release's schema, which keys and what the release spelled, else ''; `env`: the
    environment the launch set that a rule read (`EngineFlags.env_read`, name -> value), set before the server's command;
    `config_own`: the launch named its own config file (kvtop's keys are to be merged into it, never to replace it);
    `moved`: the config keys the writer put in the file for a value the line would otherwise hold (key -> that option:
    TensorRT-LLM's fraction beside a kv_cache_config key); `build_tools`: the build step's tool that takes each build
    flag (`--kv_cache_dtype` -> quantize.py, `--tokens_per_block` -> trtllm-build), empty where no step builds one."""

    line: tuple[str, ...]
    config: Mapping[str, object] = field(default_factory=dict)
    config_option: str | None = None
    config_file: str | None = None
    build: tuple[str, ...] = ()
    build_said: str = ""
    line_said: str = ""
    config_said: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    config_own: bool = False
    moved: Mapping[str, str] = field(default_factory=dict)
    build_tools: Mapping[str, str] = field(default_factory=dict)


def env_words(env: Mapping[str, str]) -> tuple[str, ...]:
    """The environment as a shell sets it before a command, `NAME=VALUE` (the value quoted where a shell would split
    it: `shlex.quote`), which `--cmd` reads back (launch_tokens.env_assignments)."""
    return tuple(f"{name}={shlex.quote(value)}" for name, value in env.items())


def yaml_scalar(value: object) -> str:
    """One value as YAML writes it: null, true/false, a number, a bare word, else a JSON (double-quoted) string."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return _yaml_float(value)
    text = str(value)
    return text if _PLAIN.match(text) and text.lower() not in _YAML_WORDS else json.dumps(text)


def _yaml_float(value: float) -> str:
    """A float as YAML 1.1 (PyYAML, which the engine's loader uses) reads one back: a dot before any exponent, and the
    exponent signed (`1e-05` is a string there, `1.0e-05` a float); .inf / .nan spelled YAML's way."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent if exponent[:1] in '+-' else '+' + exponent}" if exponent else mantissa


def yaml_lines(body: Mapping[str, object], indent: int = 0) -> list[str]:
    """A nested mapping as block YAML, two spaces a level (`kv_cache_config:` then `  dtype: fp8`)."""
    lines: list[str] = []
    for key, value in body.items():
        pad = " " * indent
        if isinstance(value, Mapping) and value:
            lines.append(f"{pad}{key}:")
            lines.extend(yaml_lines(value, indent + 2))
        else:
            lines.append(f"{pad}{key}: {'{}' if isinstance(value, Mapping) else yaml_scalar(value)}")
    return lines


def yaml_flow(body: Mapping[str, object]) -> str:
    """The same mapping on one line (`{kv_cache_config: {dtype: fp8}}`), for a status line."""
    cells = [
        f"{key}: {yaml_flow(value) if isinstance(value, Mapping) else yaml_scalar(value)}" for key, value in body.items()
    ]
    return "{" + ", ".join(cells) + "}"


def redacted_body(body: Mapping[str, object]) -> dict[str, object]:
    """The body with each text value redacted as free text (a path's `user:pass@`, a key of a known shape): every
    surface prints or copies it, as it does the line."""
    return {key: redacted_body(value) if isinstance(value, Mapping) else redact_text(value) if isinstance(value, str)
            else value for key, value in body.items()}  # fmt: skip
