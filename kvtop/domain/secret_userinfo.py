"""A URL's user-info is a secret by its place: `scheme://user:password@host` (any scheme and case, a password
holding `/` or `@`), `user:pass@host` without a scheme, and a URL cut short inside it (`https://bob:Pw9X…`); so is
the password of curl's `-u/--user NAME:PASSWORD` (`mask_user_flag_password`).

A shape like an issuer's token (`kvtop.domain.secret_shapes`, which applies this): it needs no name beside
it, so it is masked wherever text leaves kvtop too (the CLI's output, the TUI's lines), not only where a
value from outside is built (`kvtop.domain.redact`).
"""

from __future__ import annotations

import re

MASK = "***"  # what stands where a secret was: the one mask every redaction writes (secret_shapes, redact)

_LAST_BOUND = re.compile(r"[\s\"'`][^\s\"'`]*\Z")  # searched up to an '@': where its word begins
_AUTHORITY_END = re.compile(r"[/?#]")
_PLAUSIBLE_HOST = re.compile(
    r"(?:\[[0-9A-Fa-f:.]+\]|localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)(?::\d+)?", re.IGNORECASE
)
_ASSIGNED = re.compile(r"-{0,2}[A-Za-z_][A-Za-z0-9_.-]*=")  # `--db-url=` or `DATABASE_URL=` before a value
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_URL_WORD_END = re.compile(r"[^\s\"'`]*")
# A URL cut short (`…`, or the text's end) inside its user-info, before the '@' that would mark it (`https://bob:Pw9X…`):
# what follows the colon is no port (digits), so it is a password's start.
_CUT_USERINFO = re.compile(r"(?<=://)(?!\[)[^\s\"'`/?#@:…]*:(?!\d*(?:…|\Z))[^\s\"'`/?#@…]+(?=…|\Z)")


def mask_userinfo(text: str) -> str:
    """`scheme://user:password@host` → `scheme://***@host`, also without a scheme (`user:pass@host`), and a
    URL cut short inside its user-info (`https://bob:Pw9X…`) → `https://***…`."""
    if "@" in text:
        text = _mask_full(text)
    return _CUT_USERINFO.sub(MASK, text) if "://" in text else text


def _mask_full(text: str) -> str:
    """Every whole user-info: the word around each '@' read as a URL or `user:pass@host`."""
    out: list[str] = []
    done = 0
    for at in re.finditer("@", text):
        if at.start() < done:
            continue
        bound = _LAST_BOUND.search(text, done, at.start())
        word_start = bound.start() + 1 if bound else done
        word_end = _URL_WORD_END.match(text, at.start()).end()  # type: ignore[union-attr]
        span = _userinfo_span(text[word_start:word_end])
        if span is None:
            out.append(text[done:word_end])
        else:
            out += (text[done : word_start + span[0]], MASK, text[word_start + span[1] : word_end])
        done = word_end
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _userinfo_span(word: str) -> tuple[int, int] | None:
    """The span of the user-info in one word holding an '@', or None when it has none."""
    last_at = word.rfind("@")
    assigned = _ASSIGNED.match(word)
    start = assigned.end() if assigned else 0  # `--db-url=…`, `DATABASE_URL=…`
    scheme = _SCHEME.match(word, start)
    if scheme is not None and scheme.end() <= last_at:
        start = scheme.end()
        found = _AUTHORITY_END.search(word, start)
        authority_end = found.start() if found else len(word)
        at_in_authority = word.rfind("@", start, authority_end)
        if at_in_authority != -1:  # `TOKEN@host`, `:pass@host`, `user:p@ss@host`
            has_password = word.find(":", start, at_in_authority) != -1
            return start, last_at if has_password else at_in_authority  # `user:p@s/s@host`: to the last '@'
        # an '@' after a '/': a password holding '/' (`user:pa/ss@host`), unless a real host came first
        if start == authority_end or _PLAUSIBLE_HOST.fullmatch(word, start, authority_end):
            return None
        return start, last_at
    colon = word.find(":", start, last_at)  # `user:pass@host` without a scheme
    if colon == -1 or "/" in word[start:colon] or last_at + 1 >= len(word) or not word[last_at + 1].isalnum():
        return None
    return start, last_at


# curl's `-u/--user <user:password>` and `-U/--proxy-user <user:password>` (curl's manual page, curl.se/docs/manpage.html):
# a password by its place after the colon, under a name that is no secret's. Figures are no password (`docker run -u
# 1000:1000`: a uid:gid). One rule (`user_password_masked`) for an argument (redact.py) and a line of text.
USER_FLAGS = frozenset({"-u", "-U", "--user", "--proxy-user"})
_USER_VALUE = re.compile(
    r"(?P<keep>(?:(?<=[\s\"'`])|^)(?:" + "|".join(map(re.escape, sorted(USER_FLAGS))) + r")(?:=|[ \t]+)[\"']?)"
    r"(?P<value>[^\s\"'`]+)"
)


def mask_user_flag_password(text: str) -> str:
    """`curl -u admin:PASSWORD …` → `curl -u admin:*** …` in a line of text (`--user=`, `-U` alike)."""
    if not any(flag in text for flag in USER_FLAGS):
        return text
    return _USER_VALUE.sub(lambda match: match.group("keep") + user_password_masked(match.group("value")), text)


def user_password_masked(value: str) -> str:
    """One argument after a `USER_FLAGS` flag (`NAME:PASSWORD`) with its password masked; figures, a bare name as given."""
    name, colon, password = value.partition(":")
    return f"{name}:{MASK}" if colon and name and password and not password.isdigit() else value
