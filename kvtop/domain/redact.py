"""Secret redaction: values of API keys, tokens, passwords and credentials become `***`.

kvtop reads other processes' command lines; anything it shows or exports passes through here
first. A flag or variable is secret by its *name* (`--api-key`, `--hf-token`, `HF_TOKEN`,
`OPENAI_API_KEY`, `DB_PASSWORD`, `Authorization`), never by guessing at values, so
`--max-total-tokens 4096` and `--tokenizer x` stay readable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import pairwise

MASK = "***"

# Whole name segments (split on '-', '_' and case-insensitively) that mark a secret.
_SECRET_SEGMENTS = frozenset(
    {"token", "password", "passwd", "pwd", "secret", "apikey", "auth", "authorization", "credential",
     "credentials", "cookie"}
)  # fmt: skip
# Adjacent segment pairs that mark a secret ("api-key", "access-key", "private-key").
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key")})

_ENV_ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\S*)$")
_BEARER = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9+/=._~-]{8,}")
_AUTH_HEADER = re.compile(
    r"(?i)\b(authorization|x-api-key|api-key)(\s*[:=]\s*)(?!(?:bearer|basic)\b)[^\s'\",;]+"
)
_URL_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:/@\s]+):(?P<password>[^@/\s]+)@")
_FLAG_IN_TEXT = re.compile(
    r"(?P<flag>--?[A-Za-z][A-Za-z0-9_-]*)(?P<sep>=|\s+)(?P<value>'[^']*'|\"[^\"]*\"|[^\s]+)"
)
_ENV_IN_TEXT = re.compile(r"\b(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>'[^']*'|\"[^\"]*\"|[^\s]+)")


def is_secret_name(name: str) -> bool:
    """Whether a flag or variable name (`--api-key`, `HF_TOKEN`, `db.password`) names a secret."""
    segments = [part for part in re.split(r"[-_.\s]+", name.strip().lstrip("-").lower()) if part]
    if any(segment in _SECRET_SEGMENTS for segment in segments):
        return True
    return any(pair in _SECRET_PAIRS for pair in pairwise(segments))


def redact_text(text: str) -> str:
    """Redact secrets inside one free-text string (a shell line, a header, a URL)."""
    text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _AUTH_HEADER.sub(lambda m: f"{m[1]}{m[2]}{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m[1]}{m[2]}{MASK}", text)
    text = _FLAG_IN_TEXT.sub(
        lambda m: f"{m['flag']}{m['sep']}{MASK}" if is_secret_name(m["flag"]) else m[0], text
    )
    return _ENV_IN_TEXT.sub(lambda m: f"{m['name']}={MASK}" if is_secret_name(m["name"]) else m[0], text)


def redact_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """Redact an argv: `--api-key X` → `--api-key ***`, `--api-key=X` → `--api-key=***`,
    `HF_TOKEN=X` → `HF_TOKEN=***`, and secrets inside any single argument (`bash -c "…"`)."""
    out: list[str] = []
    hide_next = False
    for token in argv:
        if hide_next and not _looks_like_flag(token):
            out.append(MASK)
            hide_next = False
            continue
        hide_next = False
        if _looks_like_flag(token):
            name, eq, _value = token.partition("=")
            if is_secret_name(name):
                if eq:
                    out.append(f"{name}={MASK}")
                else:
                    out.append(token)
                    hide_next = True
                continue
        assignment = _ENV_ASSIGNMENT.match(token)
        if assignment and is_secret_name(assignment["name"]):
            out.append(f"{assignment['name']}={MASK}")
            continue
        out.append(redact_text(token))
    return tuple(out)


def redact_mapping(values: Mapping[str, str | bool]) -> dict[str, str | bool]:
    """Redact the values of secret-named keys (an environment, parsed flags, headers)."""
    return {
        key: (MASK if is_secret_name(key) and not isinstance(value, bool) else value)
        for key, value in values.items()
    }


def _looks_like_flag(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not token[1:2].isdigit()
