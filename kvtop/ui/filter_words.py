"""The `/` filters' one grammar (the GPU list's and the process table's): words a row must all match.

```
key:value   key:3,5      a key the filter knows (`gpu` and `pid` take numbers, comma-separated)
gpu3   4242              a GPU by index / a bare number (a GPU index or a pid)
words                    plain text
re:PATTERN               a regular expression over what plain words match (case-insensitive)
!word                    any word negated
```
Each filter states its keys, an example per key and what else a value must be; the words, their
negation, the regular expression and the errors are read here once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

_GPU_WORD = re.compile(r"^gpu(\d+)$")
NUMBER_KEYS = ("gpu", "pid")


class FilterError(ValueError):
    """The filter text names a key or a value the filter does not know."""


@dataclass(frozen=True)
class Term:
    key: str  # one of the filter's keys, "text", or "number" (a bare number: a GPU index or a pid)
    value: str
    negated: bool = False  # `!term`: rows the term does not match
    pattern: re.Pattern[str] | None = None  # `re:…`, compiled once


def parse_terms(
    text: str,
    keys: Sequence[str],
    examples: Mapping[str, str],
    check: Callable[[str, str], None] | None = None,
) -> tuple[Term, ...]:
    """The terms `text` states; FilterError names the first word it cannot read. `examples` holds a
    whole example per key (`pid:4242`); `check(key, value)` raises for a value the filter refuses."""
    terms: list[Term] = []
    for given in text.split():
        negated = given.startswith("!") and len(given) > 1
        given = given[1:] if negated else given
        if given.lower().startswith("re:"):
            terms.append(_regex_term(given[3:], negated, examples))
            continue
        word = given.lower()
        key, colon, value = word.partition(":")
        if not colon:
            gpu = _GPU_WORD.match(word)
            kind = "gpu" if gpu else "number" if word.isdigit() else "text"
            terms.append(Term(kind, gpu.group(1) if gpu else word, negated))
            continue
        if key not in keys:
            raise FilterError(f"unknown filter key {key!r} (known: {', '.join(keys)}; or plain text)")
        if not value:
            raise FilterError(f"{key}: needs a value, e.g. {examples[key]}")
        if key in NUMBER_KEYS and not all(part.isdigit() for part in value.split(",")):
            raise FilterError(f"{key}: takes numbers (got {value!r}), e.g. {examples[key]}")
        if check is not None:
            check(key, value)
        terms.append(Term(key, value, negated))
    return tuple(terms)


def _regex_term(pattern: str, negated: bool, examples: Mapping[str, str]) -> Term:
    """`re:PATTERN`: a regular expression searched in what plain words match (case-insensitive)."""
    if not pattern:
        raise FilterError(f"re: needs a pattern, e.g. {examples['re']}")
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as error:
        raise FilterError(f"re: not a regular expression {pattern!r} ({error})") from None
    return Term("re", pattern, negated, compiled)
