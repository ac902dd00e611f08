"""Secret redaction in free text: `redact_text` masks values by the name they are given and by their shape.

- by the *name* a value is given (`--api-key`, `HF_TOKEN`, `"hf_token":`, `?sig=`; `secret_names` judges it);
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

from kvtop.domain.secret_names import (
    KEYLIKE_NAME,
    glued_secret_flag,
    has_trigger,
    is_secret_name,
    masks_value,
    several_valued_secret_flags,
    short_secret_flags,
)
from kvtop.domain.secret_shapes import mask_secret_shapes
from kvtop.domain.secret_userinfo import MASK

_SCHEME_WORDS = frozenset({"bearer", "basic", "token", "digest", "negotiate"})  # `Authorization: Bearer x`
_RUN = re.compile(r"[A-Za-z0-9_.\-]+")  # a name: maximal, so finditer never backtracks
_QUOTES = "\"'`"
_SPACE = " \t\r\n\f\v"
_FLAG_START_AFTER = _SPACE + _QUOTES + "([{,="  # a run starting with '-' after one of these is a flag
_AFTER_KEY = re.compile(r"(\\*[\"'`])?(\])?([ \t]*)(?:(=|:(?!//))|(,)(?=\s*\\*[\"']))?([ \t]*)")
_SPACES = re.compile(r"\s*")
_BLANKS = re.compile(r"[ \t]*")  # spaces within one line
LONG_FLAG = re.compile(r"--[A-Za-z][A-Za-z0-9_-]*(?:=|\s|$)")
_WORD = re.compile(r"\S*")
_SHELL_WORD = re.compile(r"[^\s;|&]*")  # a bare value in a line of text ends where a shell word would
_QUERY_VALUE = re.compile(r"[^\s\"'`&#;]*")
_MAPPING_VALUE = re.compile(r"[^\s\"'`,;}\])]*")
_SCHEME_TOKEN = re.compile(r"[A-Za-z0-9+/=._~-]{8,}")  # what follows a bare `Bearer`
_CUT_SCHEME_TOKEN = re.compile(r"[A-Za-z0-9+/=._~-]+(?=…|\Z)")  # ...however short, where a cut (…) or the text ends it
_BRACKETS = re.compile(r"[\[\]{}\"'\\]")
_BACKSLASHES = re.compile(r"\\*")
_FLAG_WORD = re.compile(r"(?:--[A-Za-z][A-Za-z0-9_-]*|-[A-Za-z])(?=[=\s\"'`]|$)")  # `--port`, `--tp=2`, `-p`


def redact_text(text: str) -> str:
    """Redact secrets inside one free-text string (a shell line, a header, a URL, JSON, a message): URL
    user-info, tokens of a known shape, and values by the name they are given."""
    text = mask_secret_shapes(text)  # URL user-info and `curl -u name:password` too (secret_userinfo.py)
    if has_trigger(text):
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
        elif (glued := _glued_value(text, start, name)) is not None:  # `-hftVALUE`, `-kVALUE`: a key glued to its flag
            span = glued
        elif is_secret_name(name) or KEYLIKE_NAME.search(name):
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


_ENDS_FLAG = _SPACE + _QUOTES + "=,;)]}"  # after a bare short secret flag: nothing glued to it


def _glued_value(text: str, start: int, name: str) -> tuple[int, int] | None:
    """The span of the value glued to a short secret flag at a flag's place (`-hftVALUE`, `"-kVALUE"`, `-hft=VALUE`,
    `glued_secret_flag`): to the end of its shell word or quoted string, whatever it looks like."""
    before = text[start - 1] if start else ""
    if before and before not in _FLAG_START_AFTER:
        return None
    flag = glued_secret_flag(name)
    after = text[start + len(name) : start + len(name) + 1]
    if flag is None and name in short_secret_flags() and after and after not in _ENDS_FLAG:
        flag = name  # `-hft/a+b`: the key's first character ends the name's run
    if flag is None:
        return None
    value_at = start + len(flag) + (1 if text[start + len(flag)] == "=" else 0)
    if before and before in _QUOTES:  # `"-hftSEC RET"`: the whole quoted word is the flag's, to its closing quote
        closing = text.find(before, value_at)
        return value_at, len(text) if closing == -1 else closing
    span = _without_separator(text, _quoted_or_word(text, value_at, enclosing=None))  # `-hftKEY, -kKEY`: not the comma
    return span if span is not None and span[0] < len(text) else None


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
            or LONG_FLAG.match(text, value_at)
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
        if token is not None:
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
        if word_end < token_at < len(text) and text[token_at] not in _SPACE and not _FLAG_WORD.match(text, token_at):
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
    """After `Bearer`/`Basic`: the token that follows it, when one does; a flag (`Bearer --port 1`) is none."""
    at = _BLANKS.match(text, end).end()  # type: ignore[union-attr]
    if at == end or _FLAG_WORD.match(text, at):
        return None
    token = _SCHEME_TOKEN.match(text, at) or _CUT_SCHEME_TOKEN.match(text, at)
    return token.span() if token else None
