"""Secret redaction: values of API keys, tokens, passwords and credentials become `***`.

kvtop reads other processes' command lines; every string it shows, exports or writes passes
through here when the value holding it is built (`RedactedStr`, `redact_argv`). `redact_text` is
the one function, by name and by shape:

- by the *name* a value is given (`--api-key`, `HF_TOKEN`, `"hf_token":`, `?sig=`). A name whose
  secret word stands for a secret outright (password, secret, api key, credential) masks any
  value; one whose word has other senses in an engine's flags (token, key, auth, sig) *and* a
  word of setting beside it (`--speculative-token-map`, `--key-cache-dtype`, `--bucket-time-to-
  first-token`, `--token-file`) masks a value only when it is not a figure, a path or a word;
- by *shape*: tokens of a known issuer's form anywhere (`hf_…`, `sk-…`, `AKIA…`, `ghp_…`, JWTs,
  `kvtop.domain.secret_shapes`), a random-looking value under a loosely key-like name
  (`--hf-tok X`), and the user-info of a URL.

So `--max-total-tokens 4096`, `--kv-cache-dtype fp8_e4m3` and `--tokenizer x` stay readable.

The text is parsed, not pattern-matched as a whole: maximal name runs are found with a
regex that cannot backtrack, and the value after a secret name is measured from its first
character (a quoted string to its closing quote, a bracketed structure to its matching
bracket, a bare word to its delimiter). Every character is looked at a bounded number of
times, so the work is linear in the input (a 1 MB argument is redacted in well under a second).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from enum import Enum
from functools import lru_cache
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, ConfigDict

from kvtop.domain.engines.catalogue import ENGINE_IDS, engine_module
from kvtop.domain.fresh_copy import FreshCopyModel
from kvtop.domain.secret_shapes import is_benign_value, is_path, looks_random, mask_secret_shapes
from kvtop.domain.secret_userinfo import USER_FLAGS, user_password_masked
from kvtop.domain.terminal import safe_line

MASK = "***"

# --- names -----------------------------------------------------------------------------------

# Anywhere in a name with its separators removed ("HFTOKEN", "PGPASSWORD", "apiKey", "x-api-key").
_SECRET_WORDS = ("password", "passwd", "passphrase", "passcode", "secret", "credential", "signature",
                 "token", "auth", "key", "pwd", "cookie")  # fmt: skip
# Only as a whole segment of the name ("DB_PASS", "GITHUB_PAT", "?sig=") — too short to match inside words.
_SECRET_SEGMENTS = frozenset({"pass", "pat", "sig", "creds", "jwt", "bearer", "pw"})
# A short flag that takes a key by convention, not an engine's (each engine declares its own secret flags,
# `EngineFlags.secret_flags`: llama.cpp's `-hft`, vLLM's `--api-key`; `engine_secret_flags`).
_SECRET_SHORT_FLAGS = frozenset({"-k"})
_GLUED_SHORT_FLAG = "-k"  # `-kVALUE`: the one short flag a key is glued to
# Words that contain a secret word but name something else; removed before looking.
# `keyvalue` only as the attention's key/value (`num_key_value_heads`), never `API_KEY_VALUE`.
_BENIGN_WORDS = re.compile(r"tokeniz|tokens|tokenid|author(?!i[sz])|(?:un)?authori[sz]ed|(?:un)?authenticated"
                           r"|keyword|keyboard|keyfile|tokentokv|totokenpool"  # SGLang's MHATokenToKVPool, ReqToTokenPool
                           r"|keyvalue(?=head|cache|dim|proj|layer)|monkey|bypass|passthrough|allowcredentials")  # fmt: skip
# A "token" beside one of these anywhere in the name is a count of tokens (`--max-token-len`).
_COUNT_SEGMENTS = frozenset({"max", "min", "num", "count", "limit", "budget", "size", "len", "length", "ratio",
                             "threshold", "capacity"})  # fmt: skip
# ...and one of these only as the word right after a final "token" (`token_usage`), not inside a
# name (`--access-token-per-user`, `TOKEN_USAGE_KEY` stay secret).
_COUNT_SUFFIXES = frozenset({"usage", "total", "used", "rate"})
_SCHEME_WORDS = frozenset({"bearer", "basic", "token", "digest", "negotiate"})  # `Authorization: Bearer x`
_SEGMENT_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Cheap first look: a name (or a text) without any of these cannot hold a secret name.
_TRIGGERS = ("pw", "pass", "secret", "cred", "sig", "tok", "auth", "key", "cookie", "pat", "jwt", "bearer",
             "basic", "-k", "-hft", "session", "priv")  # fmt: skip


def _has_trigger(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _TRIGGERS)


# Secret words that name a secret outright: any value under them is masked.
_OUTRIGHT_WORDS = ("password", "passwd", "passphrase", "passcode", "secret", "credential", "apikey", "accesskey",
                   "privatekey", "pwd", "jwt", "bearer")  # fmt: skip
_OUTRIGHT_SEGMENTS = frozenset({"pat", "creds", "pw"})
# Words of a setting: beside a secret word of many senses (token, key, auth, sig), the name is a setting's
# (`--speculative-token-map`, `--key-cache-dtype`), and a figure, a path or a word under it is shown.
_SETTING_SEGMENTS = frozenset({
    "file", "path", "dir", "folder", "name", "mode", "type", "dtype", "format", "version", "size", "len", "length",
    "map", "latency", "histogram", "bucket", "logging", "log", "healing", "throughput", "time", "first", "last",
    "watermark", "low", "high", "figs", "helper", "backend", "heads", "head", "interval", "level", "count",
    "usage", "budget", "threshold", "num", "max", "min", "per", "ratio", "capacity", "limit", "ids", "enable",
    "disable", "use", "cache", "window", "bits", "algorithm", "scheme", "public", "ssl", "tls", "timeout", "ttl",
    "expiry", "policy", "parser", "template", "dim", "cls", "class",
})  # fmt: skip
# Where a name says its value is a location: even under an outright secret word, a path is shown.
_LOCATION_SEGMENTS = frozenset({"file", "path", "dir", "folder"})
# Names that only resemble a key's (`--hf-tok`, `MY_APIKEY2`): a value is masked when it looks generated.
_KEYLIKE = re.compile(r"tok|key|pass|pwd|secret|auth|cred|sig|cookie|session|bearer|priv", re.IGNORECASE)


def _segments(name: str) -> list[str]:
    return [part.lower() for part in _SEGMENT_SPLIT.split(_CAMEL.sub("-", name)) if part]


def masks_value(name: str, value: str) -> bool:
    """Whether the value `name` gives is masked: by the name's strength and the value's shape."""
    if not is_secret_name(name):
        return bool(_KEYLIKE.search(name)) and looks_random(value)
    if name.strip() in engine_secret_flags():  # an engine's own secret flag: any value
        return True
    segments = _segments(name)
    compact = "".join(segments)
    outright = any(word in compact for word in _OUTRIGHT_WORDS) or not _OUTRIGHT_SEGMENTS.isdisjoint(segments)
    if outright:
        return not (not _LOCATION_SEGMENTS.isdisjoint(segments) and is_path(value.strip("\"'`")))
    return _SETTING_SEGMENTS.isdisjoint(segments) or not is_benign_value(value)


@lru_cache(maxsize=1)
def _declared_secret_flags() -> tuple[frozenset[str], frozenset[str]]:
    """Every engine's declared secret flags (`EngineFlags.secret_flags`), and those of them that take several values
    (the engine's `list_valued`, as its parser reads the spelling). Redaction runs on any process's line and any
    text before an engine is known, so it takes all engines' declarations, read once at first use from each
    engine's package by the catalogue (the packages import this module, so not when it is imported)."""
    secret: set[str] = set()
    several: set[str] = set()
    for engine in ENGINE_IDS:
        flags = engine_module(engine).FLAGS  # its `launch.EngineFlags` (launch imports this module: not named here)
        declared: frozenset[str] = flags.secret_flags
        listed: frozenset[str] = flags.list_valued
        secret |= declared
        several |= {flag for flag in declared if flags.as_parsed(flag) in listed}
    return frozenset(secret), frozenset(several)


def engine_secret_flags() -> frozenset[str]:
    """The flags some engine declares a secret's (any value under them is masked)."""
    return _declared_secret_flags()[0]


def several_valued_secret_flags() -> frozenset[str]:
    """The declared secret flags that take several values (argparse nargs): only after these does a second word stay
    a key (vLLM's `--api-key k1 k2`, LMDeploy's `--api-keys`); every other secret flag takes one, argparse's default."""
    return _declared_secret_flags()[1]


def is_secret_name(name: str) -> bool:
    """Whether a flag, variable or key name (`--api-key`, `HF_TOKEN`, `db.password`, `apiKey`) names a secret: by
    its words, or as an engine declares it (`engine_secret_flags`)."""
    name = name.strip()
    if name in _SECRET_SHORT_FLAGS or name in engine_secret_flags():
        return True
    if not _has_trigger(name):
        return False
    return _is_secret_name(name) if len(name) <= 64 else _judge_name(name)


@lru_cache(maxsize=4096)
def _is_secret_name(name: str) -> bool:
    return _judge_name(name)


def _judge_name(name: str) -> bool:
    segments = [part.lower() for part in _SEGMENT_SPLIT.split(_CAMEL.sub("-", name)) if part]
    compact = _BENIGN_WORDS.sub("|", "".join(segments))
    counted = segments[-2:-1] == ["token"] and segments[-1] in _COUNT_SUFFIXES
    if "token" in compact and (counted or not _COUNT_SEGMENTS.isdisjoint(segments)):
        compact = compact.replace("token", "|")
    return (
        any(word in compact for word in _SECRET_WORDS)
        or any(segment in _SECRET_SEGMENTS for segment in segments)
        or compact.endswith("pass")
    )


# --- text ------------------------------------------------------------------------------------

_RUN = re.compile(r"[A-Za-z0-9_.\-]+")  # a name: maximal, so finditer never backtracks
_QUOTES = "\"'`"
_SPACE = " \t\r\n\f\v"
_FLAG_START_AFTER = _SPACE + _QUOTES + "([{,="  # a run starting with '-' after one of these is a flag
_AFTER_KEY = re.compile(r"(\\*[\"'`])?(\])?([ \t]*)(?:(=|:(?!//))|(,)(?=\s*\\*[\"']))?([ \t]*)")
_SPACES = re.compile(r"\s*")
_BLANKS = re.compile(r"[ \t]*")  # spaces within one line
_LONG_FLAG = re.compile(r"--[A-Za-z][A-Za-z0-9_-]*(?:=|\s|$)")
_WORD = re.compile(r"\S*")
_SHELL_WORD = re.compile(r"[^\s;|&]*")  # a bare value in a line of text ends where a shell word would
_QUERY_VALUE = re.compile(r"[^\s\"'`&#;]*")
_MAPPING_VALUE = re.compile(r"[^\s\"'`,;}\])]*")
_SCHEME_TOKEN = re.compile(r"[A-Za-z0-9+/=._~-]{8,}")  # what follows a bare `Bearer`
_CUT_SCHEME_TOKEN = re.compile(r"[A-Za-z0-9+/=._~-]+(?=…|\Z)")  # ...however short, where a cut (…) or the text ends it
_BRACKETS = re.compile(r"[\[\]{}\"'\\]")
_BACKSLASHES = re.compile(r"\\*")


def redact_text(text: str) -> str:
    """Redact secrets inside one free-text string (a shell line, a header, a URL, JSON, a message): URL
    user-info, tokens of a known shape, and values by the name they are given."""
    text = mask_secret_shapes(text)  # URL user-info and `curl -u name:password` too (secret_userinfo.py)
    if _has_trigger(text):
        text = _redact_pairs(text)
    return text



def _redact_pairs(text: str) -> str:
    """Mask the value after every secret name: `name=v`, `name: v`, `"name": "v"`, `--name v`, `Bearer v`."""
    out: list[str] = []
    done = 0  # text[:done] is in `out`
    for run in _RUN.finditer(text):
        start, end = run.span()
        if start < done:
            continue  # inside a value already masked
        name = run.group()
        if name.lower() in ("bearer", "basic"):
            span = _scheme_value(text, end)
        elif name[:2] == _GLUED_SHORT_FLAG and looks_random(name[2:]):  # `-kVALUE`, a key glued to its flag
            span = (start + 2, end)
        elif is_secret_name(name) or _KEYLIKE.search(name):
            span = _value_after(text, start, end, name)
            if span is not None and not masks_value(name, text[span[0] : span[1]]):
                continue
        else:
            continue
        if span is not None and span[1] > span[0]:
            out += (text[done : span[0]], MASK)
            done = span[1]
            if name in several_valued_secret_flags() and _given_by_space(text[end : span[0]]):
                for more in _more_values(text, span, name):
                    out += (text[done : more[0]], MASK)
                    done = more[1]
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _given_by_space(between: str) -> bool:
    """Whether what lies between a flag and its value is a gap (`--api-key k1`, `"--api-key" "k1"`), not `=`/`:`."""
    return bool(between) and not between.strip(" \t" + _QUOTES) and any(char in " \t" for char in between)


_ENDS_VALUES = "-;|&<>()#\\"  # a flag or a shell operator: no further value


def _more_values(text: str, first: tuple[int, int], name: str) -> list[tuple[int, int]]:
    """The further values a several-valued secret flag given by a space takes (`several_valued_secret_flags`: vLLM's
    `--api-key k1 k2`, LMDeploy's `--api-keys k1 k2`): each word after the first, up to the next that starts with
    `-`, a shell operator, the end of the line or of its quoted string, or a word `masks_value` would show. Prose
    after such a key is masked too (`--api-key *** was given …` hides the sentence): a key of plain letters after
    the first must never show, and hiding a sentence costs less."""
    spans: list[tuple[int, int]] = []
    start, end = first
    while True:
        quoted = start > 0 and text[start - 1] in _QUOTES and end < len(text) and text[end] == text[start - 1]
        position = end + 1 if quoted else end
        at = _BLANKS.match(text, position).end()  # type: ignore[union-attr]
        if at == position or at >= len(text) or text[at] in _ENDS_VALUES:
            return spans
        span = _quoted_or_word(text, at, enclosing=None)
        if span is None or span[1] <= span[0]:
            return spans
        word = text[span[0] : span[1]]
        if not masks_value(name, word):
            return spans
        spans.append(span)
        start, end = span


def _value_after(text: str, start: int, end: int, name: str) -> tuple[int, int] | None:
    """The span of the value that secret name `text[start:end]` gives, or None when it gives none."""
    before = text[start - 1] if start else ""
    if before and before in "/@":
        return None  # a path or host component (`…/keycloak.example.com:8080`), not a key
    enclosing = before if before and before in _QUOTES else None
    is_flag = name.startswith("-") and (not before or before in _FLAG_START_AFTER)
    after = _AFTER_KEY.match(text, end)
    assert after is not None  # every group is optional
    close_quote, _bracket, _gap, separator, comma, _ = after.groups()
    if comma:  # ("HF_TOKEN", "value") or ['--api-key', 'value']: a quoted key, then a quoted value
        return _quoted_or_word(text, _skip_spaces(text, after.end()), enclosing=None)
    if separator is None:
        if not is_flag or (close_quote and close_quote[-1] != enclosing):
            return None
        value_at = _skip_spaces(text, end + len(close_quote or ""))
        if (
            value_at == end + len(close_quote or "")
            or value_at >= len(text)
            or _LONG_FLAG.match(text, value_at)
        ):
            return None  # no gap, nothing after, or `--allow-credentials --port 8000`: no value here
        return _quoted_or_word(text, value_at, enclosing=None if close_quote else enclosing)
    value_at = after.end()
    if separator == ":" or close_quote:  # "key": value, key: value, header: value
        return _quoted_or_word(text, value_at, enclosing=enclosing, bare=_MAPPING_VALUE, scheme=True)
    if before and before in "?&;":  # a query parameter
        return _quoted_or_word(text, value_at, enclosing=enclosing, bare=_QUERY_VALUE)
    value = _without_separator(text, _quoted_or_word(text, value_at, enclosing=enclosing))  # --name=v, NAME=v, name=v
    if value is not None and text[value[0] : value[1]].lower() in _SCHEME_WORDS:  # `Authorization=Basic <b64>`
        token = _scheme_value(text, value[1])  # a token's shape, as after a bare `Bearer`: not `TOKEN=token --port 1`
        if token is not None and text[token[0]] != "-":
            return _without_separator(text, token)
    return value


def _without_separator(text: str, span: tuple[int, int] | None) -> tuple[int, int] | None:
    """A bare `name=value` word less the separator it ends with: the `, ` between a repr's fields (`Namespace(api_key=
    None, port=8000)`) and the `)` that closes the repr, not a `(` of the value's own; a comma inside a word stays."""
    if span is None or span[1] <= span[0] or text[span[0]] in "\\{[" or text[span[0] - 1] in _QUOTES:
        return span  # a quoted string's inside, a structure: their own ends
    start, end = span
    while end - start > 1 and (
        (text[end - 1] == "," and (end == len(text) or text[end] in _SPACE))
        or (text[end - 1] == ")" and "(" not in text[start:end])
    ):
        end -= 1
    return start, end


def _skip_spaces(text: str, at: int) -> int:
    return _SPACES.match(text, at).end()  # type: ignore[union-attr]


def _quoted_or_word(
    text: str, at: int, *, enclosing: str | None, bare: re.Pattern[str] = _SHELL_WORD, scheme: bool = False
) -> tuple[int, int] | None:
    """The span of the value starting at `at`: a quoted string's inside, a whole {…}/[…], or a bare word."""
    if at >= len(text):
        return None
    first = text[at]
    if first == "\\" or first in _QUOTES:
        return _quoted(text, at)
    if first in "{[":
        return at, _matching_bracket(text, at)
    word_end = bare.match(text, at).end()  # type: ignore[union-attr]
    if enclosing is not None:  # `"--api-key=abc"`: the enclosing quote ends the value
        closing = text.find(enclosing, at, word_end)
        word_end = word_end if closing == -1 else closing
    else:  # a closing quote glued to the word ends it (`bash -c "… --api-key abc"`)
        while word_end > at + 1 and text[word_end - 1] in _QUOTES:
            word_end -= 1
    if scheme and text[at:word_end].lower() in _SCHEME_WORDS:  # `Bearer abc`: keep the scheme, mask the token
        token_at = _BLANKS.match(text, word_end).end()  # type: ignore[union-attr]
        if word_end < token_at < len(text) and text[token_at] not in _SPACE:
            return _quoted_or_word(text, token_at, enclosing=enclosing, bare=bare)
    return at, word_end


def _quoted(text: str, at: int) -> tuple[int, int]:
    """The inside of the quoted string opening at `at`, which may be escaped (`\\"…\\"`); to the end when unclosed."""
    quote_at = _BACKSLASHES.match(text, at).end()  # type: ignore[union-attr]
    slashes = quote_at - at
    if quote_at >= len(text) or text[quote_at] not in _QUOTES:
        return at, _WORD.match(text, at).end()  # type: ignore[union-attr]
    quote, inside = text[quote_at], quote_at + 1
    position = inside
    while True:
        closing = text.find(quote, position)
        if closing == -1:
            return inside, len(text)
        run = closing
        while run > position and text[run - 1] == "\\":
            run -= 1
        backslashes = closing - run
        if slashes and backslashes >= slashes:  # `\\"` closes a string opened with `\\"`
            return inside, closing - slashes
        if not slashes and backslashes % 2 == 0:  # an unescaped quote
            return inside, closing
        position = closing + 1


def _matching_bracket(text: str, at: int) -> int:
    """The end of the bracketed structure opening at `at` (quotes honoured); the end of text when unclosed."""
    depth = 0
    quote: str | None = None
    escaped_at = -2  # the position a backslash escapes
    for mark in _BRACKETS.finditer(text, at):
        char, position = mark.group(), mark.start()
        if position == escaped_at:
            continue
        if char == "\\":
            escaped_at = position + 1
        elif quote is not None:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return position + 1
    return len(text)


def _scheme_value(text: str, end: int) -> tuple[int, int] | None:
    """After `Bearer`/`Basic`: the token that follows it, when one does."""
    at = _BLANKS.match(text, end).end()  # type: ignore[union-attr]
    if at == end:
        return None
    token = _SCHEME_TOKEN.match(text, at) or _CUT_SCHEME_TOKEN.match(text, at)
    return token.span() if token else None


# --- argv and mappings -----------------------------------------------------------------------

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
            if not _LONG_FLAG.match(arg + " "):  # `--api-key -abc`: a value may start with a dash
                masked = masks_value(flag, arg)
                out.append(MASK if masked else redact_text(arg))
                listing = flag if masked and flag in several_valued_secret_flags() else None
                continue
        if arg[:2] == _GLUED_SHORT_FLAG and len(arg) > 2:  # `-kVALUE`
            out.append(arg[:2] + MASK)
            continue
        name, eq, value = arg.partition("=")
        if eq and name in USER_FLAGS:  # `--user=admin:PASSWORD`
            out.append(f"{name}={user_password_masked(value)}")
            continue
        if (_looks_like_flag(arg) or (eq and _ENV_NAME.fullmatch(name))) and (
            is_secret_name(name) or _KEYLIKE.search(name)
        ):
            if not eq:
                giving = name if name.startswith("-") else None
                out.append(arg)
            else:
                out.append(f"{name}={MASK}" if masks_value(name, value) else redact_text(arg))
            continue
        out.append(redact_text(arg))
    return tuple(out)


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
