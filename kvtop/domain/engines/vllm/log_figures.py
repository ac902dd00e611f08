"""How vLLM prints a figure in its startup log, and how a handler completes the latest record (`merge`).

vLLM prints memory with `format_gib` (Python `round(x, 2)`, trailing zeros dropped: "22.5") or
`%.2f`/`%.4f`; every figure is bytes / 2**30, even where old builds label it "GB". A figure is
therefore never taken at fewer than 2 decimals. A handler appends each match to one field
(`log_dialect.single`), or completes the latest record of its process (`merge`): a multi-sentence message may be
reflowed over several lines, each sentence matched on its own (docs/engines/vllm.md §1).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from kvtop.domain.engine_log import Measured, Rounded

NUM = r"-?\d{1,15}(?:\.\d{1,12})?"
COUNT = r"(\d[\d,]{0,29})"
GIB_FIGURE = rf"({NUM})\s*GiB"
TRAILING_NUMBER = re.compile(rf"({NUM})\s*$")


@lru_cache(maxsize=4096)
def gib(text: str, unit: str = "GiB") -> Measured:
    """A vLLM figure, never at fewer than 2 decimals (format_gib drops trailing zeros); cached."""
    printed = len(text.split(".", 1)[1]) if "." in text else 0
    return Measured.from_text(text, unit=unit, decimals=max(printed, 2))


@lru_cache(maxsize=1024)
def rounded_text(text: str) -> Rounded:
    return Rounded.from_text(text)


def gib_before(pattern: re.Pattern[str], text: str) -> Measured | None:
    """The 'X' of 'X GiB <words>' where `pattern` matches 'GiB <words>' (a literal-first search is
    far faster than a number-first one on long lines)."""
    match = pattern.search(text)
    return number_before(text, match.start()) if match else None


def number_before(text: str, end: int) -> Measured | None:
    number = TRAILING_NUMBER.search(text, max(end - 32, 0), end)
    return gib(number.group(1)) if number else None


def found_gib(pattern: re.Pattern[str], text: str, group: int = 1) -> Measured | None:
    match = pattern.search(text)
    return gib(match.group(group)) if match else None


def count(text: str) -> int:
    return int(text.replace(",", ""))


def rounded(pattern: re.Pattern[str], text: str) -> Rounded | None:
    match = pattern.search(text)
    return rounded_text(match.group(1)) if match else None


def merge(items: list[Any], values: dict[str, Any], *, new: bool = False) -> bool:
    """Complete the latest record (a dict until `freeze`) with `values`, or start one when asked
    or when they clash with what it already holds."""
    stated = {key: value for key, value in values.items() if value is not None}
    if not stated:
        return False
    if not new and items and all(items[-1].get(key) is None for key in stated):
        items[-1].update(stated)
    else:
        items.append(stated)
    return True
