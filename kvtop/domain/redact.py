"""Secret redaction of what kvtop shows: argv, mappings, and the values that redact themselves when built.

kvtop reads other processes' command lines; every string it shows, exports or writes passes through here when the
value holding it is built (`RedactedStr`, `RedactedModel`, `redact_argv`): values of API keys, tokens, passwords and
credentials become `***`. Free text is `secret_text.redact_text`'s; which names are secret, `secret_names`'.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from enum import Enum
from functools import lru_cache
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, ConfigDict

from kvtop.domain.fresh_copy import FreshCopyModel
from kvtop.domain.secret_names import (
    KEYLIKE_NAME,
    glued_secret_flag,
    is_secret_name,
    masks_value,
    several_valued_secret_flags,
)
from kvtop.domain.secret_text import LONG_FLAG, redact_text
from kvtop.domain.secret_userinfo import MASK, USER_FLAGS, user_password_masked
from kvtop.domain.terminal import cut, safe_line

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Values are built again every tick: redactions of command lines and strings up to these sizes are
# remembered (at most ~8 MB of text each, however many processes come and go).
_CACHED_ARGV_CHARS = 8_192
_CACHED_TEXT_CHARS = 4_096


@lru_cache(maxsize=1024)
def _redact_argv_cached(argv: tuple[str, ...]) -> tuple[str, ...]:
    return _redact_argv(argv)


def redact_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """Redact an argv: `--api-key X` → `--api-key ***`, `--api-key=X` → `--api-key=***`,
    `HF_TOKEN=X` → `HF_TOKEN=***`, and secrets inside any one argument (`bash -c "…"`, JSON, URLs).
    A several-valued secret flag (`several_valued_secret_flags`) given by a space takes every value up to the next `-` word,
    as argparse's nargs does (`--api-key k1 k2` → `--api-key *** ***`); every other takes one.

    Command lines repeat every tick, so short ones are remembered (redacting is pure)."""
    argv = tuple(argv)
    if sum(len(arg) for arg in argv) <= _CACHED_ARGV_CHARS:
        return _redact_argv_cached(argv)
    return _redact_argv(argv)


def _redact_argv(argv: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    giving: str | None = None  # the flag whose value the next argument is
    listing: str | None = None  # the several-valued secret flag whose values run on (`--api-key k1 k2`)
    for index, arg in enumerate(argv):
        if index and argv[index - 1] == "-c":  # `bash -c "HF_TOKEN=x vllm serve …"`: a script, read as text
            out.append(redact_text(arg))
            continue
        if index and argv[index - 1] in USER_FLAGS:  # `curl -u admin:PASSWORD`
            out.append(user_password_masked(arg))
            continue
        if listing is not None:
            if not arg.startswith("-") and masks_value(listing, arg):
                out.append(MASK)
                continue
            listing = None
        if giving is not None:
            flag, giving = giving, None
            if not LONG_FLAG.match(arg + " "):  # `--api-key -abc`: a value may start with a dash
                masked = masks_value(flag, arg)
                out.append(MASK if masked else redact_text(arg))
                listing = flag if masked and flag in several_valued_secret_flags() else None
                continue
        glued = glued_secret_flag(arg)
        if glued is not None:  # `-hftVALUE`, `-hft=VALUE`, `-kVALUE`: the tail is the key
            out.append(glued + ("=" if arg[len(glued)] == "=" else "") + MASK)
            continue
        name, eq, value = arg.partition("=")
        if eq and name in USER_FLAGS:  # `--user=admin:PASSWORD`
            out.append(f"{name}={user_password_masked(value)}")
            continue
        if (_looks_like_flag(arg) or (eq and _ENV_NAME.fullmatch(name))) and (
            is_secret_name(name) or KEYLIKE_NAME.search(name)
        ):
            if not eq:
                giving = name if name.startswith("-") else None
                out.append(arg)
            else:
                out.append(f"{name}={MASK}" if masks_value(name, value) else redact_text(arg))
            continue
        out.append(redact_text(arg))
    return tuple(out)


def masked_glued_flag(typed: str, raw: str | bool) -> tuple[str, str | bool]:
    """A flag and its value as a launch's parse keeps them: a key glued to a short secret flag (`-hftKEY`,
    `-hft/a+b=KEY`, `glued_secret_flag`) masked, in the flag and in its value; any other flag as typed."""
    if glued_secret_flag(typed) is None:
        return typed, raw
    return redact_argv((typed,))[0], raw if isinstance(raw, bool) else MASK


def redact_mapping(values: Mapping[str, str | bool]) -> dict[str, str | bool]:
    """Redact a mapping (parsed flags, an environment, headers): values of secret-named keys, and
    secrets inside every other string value; keys and values made terminal-safe lines."""
    return {
        safe_line(key): (
            value if isinstance(value, bool) else MASK if masks_value(key, value) else redact_shown(value)
        )
        for key, value in values.items()
    }


@lru_cache(maxsize=2048)
def _shown_short_text(text: str) -> str:
    return safe_line(redact_text(text))


def redact_shown(text: str) -> str:
    """A string from outside as any surface may show it: secrets masked (`redact_text`) and one
    terminal-safe line (`safe_line`: control characters escaped). Remembered for short strings:
    values are built again every tick."""
    return _shown_short_text(text) if len(text) <= _CACHED_TEXT_CHARS else safe_line(redact_text(text))


def shown_cut(text: str, limit: int) -> str:
    """`text` from outside as `redact_shown` shows it, then at most `limit` characters (`cut`): redacted *before* the
    cut, so a cut never leaves a secret's head the redactor no longer knows by its shape ('AKIAIOSFOD…', the first
    ten of an AWS key id's twenty)."""
    return cut(redact_shown(text), limit)


def quoted(value: object, limit: int = 40) -> str:
    """Text from outside quoted inside a message (`'…'`): `repr` of `shown_cut(str(value), limit)`, so the secret is
    masked before the cut and the cut is marked; `repr(x)[:N]` cuts off the closing quote, `x[:N]` leaves no `…`, and
    either lets a key sliced at the boundary show (an AWS key id's first 19 of 20 characters)."""
    return repr(shown_cut(str(value), limit))


def shown_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """A command line as any surface may show it: `redact_argv`, then each argument a safe line."""
    return tuple(safe_line(arg) for arg in redact_argv(argv))


#: A string field that is redacted and made terminal-safe whenever its value is built (names,
#: titles, messages, URLs): what a process or a server chose cannot drive the operator's terminal.
RedactedStr = Annotated[str, AfterValidator(redact_shown)]

_Model = TypeVar("_Model", bound="RedactedModel")


class RedactedModel(FreshCopyModel):
    """A frozen value whose copies are validated too: pydantic's `model_copy(update=…)` skips
    validators, so a string set through it would escape `RedactedStr`. Here it cannot."""

    model_config = ConfigDict(frozen=True)

    def model_copy(self: _Model, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Model:
        if not update or all(_holds_no_new_text(value) for value in update.values()):
            return super().model_copy(update=update, deep=deep)  # numbers, states, values already redacted
        return type(self).model_validate({**super().model_copy(deep=deep).__dict__, **update})


def _holds_no_new_text(value: object) -> bool:
    """Whether a value cannot bring unredacted text into a copy (so validating it can be skipped)."""
    if value is None or isinstance(value, (RedactedModel, int, float, Enum)):
        return True
    return isinstance(value, tuple) and all(_holds_no_new_text(item) for item in value)


def _looks_like_flag(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not token[1:2].isdigit()
