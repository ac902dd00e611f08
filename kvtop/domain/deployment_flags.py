"""Reading and writing the deployment flags an engine keeps verbatim in `LaunchSettings.flags`.

The engines' deployment flags (speculative decoding, EPLB, LoRA, host KV) are read by each engine's
own `deployment` module at the seam, into a typed `DeploymentSetup`; these helpers read one value,
name the flag in every error, and write a planner edit back in the engine's own spelling.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.redact import quoted
from kvtop.domain.span import flag_set, flag_switch, flag_text

if TYPE_CHECKING:
    from kvtop.domain.deployment import Feature

__all__ = [
    "flag_set",
    "flag_switch",
    "flag_text",
    "flag_int",
    "flag_float",
    "flag_json",
    "as_json_object",
    "flag_words",
    "without_flags",
    "with_flags",
    "feature_remover",
]


def flag_int(settings: LaunchSettings, spelling: str, *, least: int = 0) -> int | None:
    """A whole number given to `--spelling` (None: not given); anything else names the flag."""
    text = flag_text(settings, spelling)
    if text is None:
        return None
    if not text.isdigit() or len(text) > 18 or int(text) < least:
        raise InputError(f"expected a whole number ≥ {least}, got {quoted(text)}", field=f"--{spelling}")
    return int(text)


def flag_float(settings: LaunchSettings, spelling: str, *, above: float = 0.0) -> float | None:
    """A number above `above` given to `--spelling` (None: not given); anything else names the flag."""
    text = flag_text(settings, spelling)
    if text is None:
        return None
    try:
        value = float(text) if len(text) <= 40 else float("nan")
    except ValueError:
        value = float("nan")
    if not value > above or value == float("inf"):
        raise InputError(f"expected a number above {above:g}, got {quoted(text)}", field=f"--{spelling}")
    return value


def flag_json(settings: LaunchSettings, spelling: str, example: str = '{"method": "eagle3"}') -> dict[str, object]:
    """The JSON object given to `--spelling` ({} when not given), read by `as_json_object`."""
    text = flag_text(settings, spelling)
    return {} if text is None else as_json_object(text, f"--{spelling}", example)


def as_json_object(text: object, field: str, example: str) -> dict[str, object]:
    """A flag's value read as the engines read a JSON object (`json.loads`, an object): no value, malformed JSON,
    another JSON value or one over 64 KiB is an InputError naming the flag (`field`), with an `example`."""
    if not isinstance(text, str):
        raise InputError(f"takes a JSON object after it, e.g. '{example}'", field=field)
    if len(text) > 64 * 1024:
        raise InputError(f"expected a JSON object of at most 64 KiB, e.g. '{example}'", field=field)
    try:
        value = json.loads(text)
    except ValueError as err:
        if text.startswith("{'") and not _python_literal(text):  # an engine's log's repr (vLLM's non-default args)
            raise InputError(f"the value is a Python dict as an engine's log prints its arguments ({quoted(text, 60)}), "
                             "holding a value no Python literal reads (an object's repr), so kvtop cannot read it "
                             f"as the JSON object the flag takes: where the log printed it, give the launch's {field} "
                             f"(JSON, e.g. '{example}') after the log", field=field) from None  # fmt: skip
        where = f"{err.msg} at character {err.pos}: " if isinstance(err, json.JSONDecodeError) else ""
        raise InputError(f"is not JSON ({where}{quoted(text, 60)}); expected a JSON object, e.g. '{example}'",
                         field=field) from None  # fmt: skip
    if not isinstance(value, dict):
        raise InputError(f"must be a JSON object, e.g. '{example}' (got {quoted(text, 60)})", field=field)
    return value


def _python_literal(text: str) -> bool:
    """Whether `text` reads as a Python literal (ast.literal_eval: literals only; the caller bounds its size)."""
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def flag_words(settings: LaunchSettings, spelling: str) -> tuple[str, ...] | None:
    """A list of words given to `--spelling` (space- or comma-separated; None: not given)."""
    text = flag_text(settings, spelling)
    if text is None:
        return None
    return tuple(word for word in text.replace(",", " ").split() if word)


def without_flags(settings: LaunchSettings, spellings: Iterable[str]) -> LaunchSettings:
    """The launch with every flag of `spellings` (without dashes) removed."""
    gone = set(spellings)
    return settings.model_copy(update={"flags": {k: v for k, v in settings.flags.items() if k not in gone}})


def with_flags(settings: LaunchSettings, values: Mapping[str, str | bool | None]) -> LaunchSettings:
    """The launch with each flag (without dashes) set to its value; None or False removes it."""
    flags = dict(settings.flags)
    for spelling, value in values.items():
        if value is None or value is False:
            flags.pop(spelling, None)
        else:
            flags[spelling] = value
    return settings.model_copy(update={"flags": flags})


def feature_remover(
    feature_flags: Mapping[Feature, Iterable[str]],
) -> Callable[[LaunchSettings, Feature], LaunchSettings]:
    """`DeploymentRules.without` of an engine whose features are each a set of its flags (`feature_flags`, without
    dashes): the launch with the feature's flags removed (a feature it has no flags for: the launch as it was)."""

    def without(settings: LaunchSettings, feature: Feature) -> LaunchSettings:
        return without_flags(settings, feature_flags.get(feature, ()))

    return without
