"""Argument lists as engines print them: `ServerArgs(k=v, …)`, `Namespace(…)`, `{'k': v, …}`.

One left-to-right pass over the text (quotes, escapes and brackets tracked as it goes), so a line
of a million quotes costs a million steps, never a million squared. Nothing here raises on odd
text: an item it cannot read is left out, a value it cannot read stays its raw text.
"""

from __future__ import annotations

import ast
import re

ArgValue = str | int | float | bool | None

_CALL_ITEM = re.compile(r"\s*([A-Za-z_]\w{0,100})\s*=")
_DICT_KEY = re.compile(r"""\s*(['"])([^'"\n]{1,200})\1\s*:""")
_PLAIN_NUMBER = re.compile(r"-?\d{1,18}(?:\.\d{1,18})?(?:[eE][-+]?\d{1,3})?")
MAX_VALUE_CHARS = 4000
MAX_ITEMS = 2000


def _value(raw: str) -> ArgValue:
    """A scalar from its repr ('x', 3, 0.9, None, True); anything else stays the raw text."""
    text = raw.strip()
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if len(text) <= 40 and _PLAIN_NUMBER.fullmatch(text):
        return int(text) if text.lstrip("-").isdigit() else float(text)
    if len(text) > MAX_VALUE_CHARS or not text or text[0] not in "'\"":
        return text
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, str) else text


def top_level_items(text: str, start: int) -> list[str]:
    """Comma-separated items of text[start:] at bracket depth 0, up to the closing bracket (linear)."""
    items: list[str] = []
    depth, item_start, quote, index, end = 0, start, "", start, len(text)
    while index < end and len(items) < MAX_ITEMS:
        char = text[index]
        if quote:
            if char == "\\":
                index += 1  # the escaped character is part of the string
            elif char == quote or char == "\n":
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                items.append(text[item_start:index])
                return items
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[item_start:index])
            item_start = index + 1
        index += 1
    items.append(text[item_start:])
    return items


def parse_call_args(text: str, start: int = 0) -> dict[str, ArgValue]:
    """`k=v, k2='a, b', k3=[1, 2]` (a dataclass or Namespace repr) from `start`; never raises."""
    args: dict[str, ArgValue] = {}
    for item in top_level_items(text, start):
        match = _CALL_ITEM.match(item)
        if match:
            args.setdefault(match.group(1), _value(item[match.end() :]))
    return args


def parse_dict_args(text: str, start: int = 0) -> dict[str, ArgValue]:
    """`{'k': v, …}` (a python dict literal) from the `{` at or after `start`; never raises."""
    brace = text.find("{", start)
    if brace < 0:
        return {}
    args: dict[str, ArgValue] = {}
    for item in top_level_items(text, brace + 1):
        match = _DICT_KEY.match(item)
        if match:
            args.setdefault(match.group(2), _value(item[match.end() :]))
    return args
