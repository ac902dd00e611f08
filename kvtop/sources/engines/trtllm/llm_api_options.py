"""The `--extra_llm_api_options` / `--config` YAML a trtllm-serve launch names (PyYAML owns this module).

The file is read when it exists (a relative path from `base_dir`: the working directory for a command
kvtop was given, never guessed for a process found running elsewhere); its values reach the settings
through the domain (`kvtop.domain.engines.trtllm.flags.settings_with_options`). A file that exists but
is not a YAML mapping is an `InputError` naming it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from kvtop.domain.engines.trtllm.flags import settings_with_options
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.redact import redact_shown
from kvtop.domain.secret_names import masks_value
from kvtop.domain.secret_userinfo import MASK

MAX_OPTIONS_BYTES = 1 << 20  # an LLM-API options file is a few hundred bytes; anything past 1 MiB is not one
MAX_VALUES = 10_000  # values once YAML's aliases are expanded (the file itself holds a few dozen)
MAX_DEPTH = 32
_FLAG = "--extra_llm_api_options"


def options_path(settings: LaunchSettings, base_dir: Path | None) -> Path | None:
    """The YAML's path if the settings name one that can be found from here, else None."""
    named = settings.extra_llm_api_options
    if not named:
        return None
    path = Path(named).expanduser()
    if not path.is_absolute():
        if base_dir is None:
            return None
        path = base_dir / path
    return path if path.is_file() else None


def read_options(path: Path) -> dict[str, object]:
    """The YAML as a mapping (empty for an empty file); an InputError naming the file otherwise."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_OPTIONS_BYTES + 1)
    except OSError as error:
        raise InputError(
            f"cannot read it ({error.strerror or type(error).__name__})", field=_FLAG, source=str(path), value_is_file=True
        ) from None
    if len(raw) > MAX_OPTIONS_BYTES:
        raise InputError("larger than 1 MiB: not an LLM-API options file", field=_FLAG, source=str(path), value_is_file=True)
    try:
        data = yaml.safe_load(raw.decode("utf-8", errors="replace"))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InputError(f"not valid YAML{where}", field=_FLAG, source=str(path), value_is_file=True) from None
    except RecursionError:
        raise InputError(
            "nested too deeply: not an LLM-API options file", field=_FLAG, source=str(path), value_is_file=True
        ) from None
    except ValueError:  # an integer beyond Python's digit limit
        raise InputError(
            "a number of thousands of digits: not an LLM-API option", field=_FLAG, source=str(path), value_is_file=True
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError("not a YAML mapping of LLM-API options", field=_FLAG, source=str(path), value_is_file=True)
    _check_expansion(data, str(path))
    return {str(key): value for key, value in data.items()}


def _check_expansion(data: object, source: str) -> None:
    """Refuse a document that YAML aliases expand past MAX_VALUES values or MAX_DEPTH levels (an alias
    bomb, a mapping that holds itself): reading it on would take minutes or never end."""
    budget, stack = MAX_VALUES, [(data, 0)]
    while stack:
        node, depth = stack.pop()
        budget -= 1
        if budget < 0 or depth > MAX_DEPTH:
            raise InputError(
                f"expands to more than {MAX_VALUES:,} values or {MAX_DEPTH} levels (YAML aliases?): "
                "not an LLM-API options file",
                field=_FLAG,
                source=source,
                value_is_file=True,
            )
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children)


def complete_settings(
    settings: LaunchSettings, base_dir: Path | None, *, strict: bool = False
) -> LaunchSettings:
    """`settings` with the YAML its launch names, when the file is there to read (the YAML wins).
    `strict` (the operator typed the launch): a named file that is not there is an InputError, not a
    plan on the defaults the file would have changed."""
    path = options_path(settings, base_dir)
    if path is None:
        if strict and settings.extra_llm_api_options:
            raise InputError(
                "no such file (a relative path is read from the working directory)",
                field=_FLAG,
                source=settings.extra_llm_api_options,
                value_is_file=True,
            )
        return settings
    options = {key: _redacted(value, key) for key, value in read_options(path).items()}
    return settings_with_options(settings, options, str(path))


def _redacted(node: object, name: str = "") -> object:
    """The YAML with every string value redacted before the domain types it: a value refused there is quoted in the
    error, and a running server's error reaches `snapshot --json` (`api_key: sk-…` masked, a key inside any other value
    too), as `redact_mapping` does: a secret-named key's value masked by the name's strength and the value's shape."""
    if isinstance(node, dict):
        return {key: _redacted(value, str(key)) for key, value in node.items()}
    if isinstance(node, list):
        return [_redacted(item, name) for item in node]
    if isinstance(node, str):
        return MASK if masks_value(name, node) else redact_shown(node)
    return node
