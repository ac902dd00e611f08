"""The values and mutations every fuzzed input shares: wrong types, deletions, overflows, unicode,
truncation, huge values, flipped bytes (first written for configs, `tests/domain/config_mutations.py`).

`mutate_document` changes one place of a JSON document (preferring the keys a reader reads);
`damage_bytes` truncates, flips or inserts raw bytes.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from hypothesis import strategies as st

UNICODE = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    [
        "模型",
        "🦙",
        "\x00",
        "\u202e",
        "１２８",
        "٣٢",
        "ｆｐ８",
        "NaN",
        "Infinity",
        "1e309",
        "-0",
        "0x20",
        " 32 ",
        "",
    ]
)
NUMBERS = (
    st.sampled_from(
        [0, -1, 1, 2, 3, 7, -(2**63), 2**63, 2**64 + 1, 10**30, 10**400, 2**31 - 1, 1 << 20, 1 << 40]
    )
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers()
)
SCALARS = NUMBERS | UNICODE | st.booleans() | st.none()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(UNICODE, inner, max_size=4),
    max_leaves=8,
)
HUGE = st.sampled_from(
    [
        lambda: "x" * 1_000_000,
        lambda: ["sliding_attention"] * 200_000,
        lambda: list(range(100_000)),
        lambda: {f"k{i}": i for i in range(50_000)},
        lambda: json.loads("[" * 30 + "1" + "]" * 30),
    ]
).map(lambda make: make())  # built per draw: a later mutation may edit it in place
# Numbers as text, where a reader parses digits: overflow, NaN, unicode digits, signs, exponents.
NUMBER_TEXT = st.sampled_from(
    [
        "0",
        "-1",
        "-0",
        "1e30",
        "1e400",
        "-1e400",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "Infinity",
        "10" + "0" * 30,
        "9" * 400,
        "١٢٣",
        "１２８",
        "٣٢.٥",
        "1_000",
        "0x1F",
        "1.5.2",
        "",
        " ",
        "+",
        "−5",
        "1e-400",
        "4.2e",
        "²",
    ]
) | NUMBERS.map(str)


def _paths(node: Any, prefix: tuple[Any, ...] = (), out: list[tuple[Any, ...]] | None = None) -> list[tuple[Any, ...]]:
    """Every place in `node`, depth first (a parent before its children), into one list: a config has thousands, and
    each mutation walks them (no list copied per level, no call per scalar)."""
    out = [] if out is None else out
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        if isinstance(node, list) and key > 3:
            break  # a list's first items stand for the rest (exclusion lists run to thousands)
        path = (*prefix, key)
        out.append(path)
        if isinstance(child, (dict, list)):
            _paths(child, path, out)
    return out


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


@st.composite
def mutate_document(draw: st.DrawFn, doc: Any, read_keys: Collection[str] = ()) -> tuple[Any, str]:
    """One mutation of `doc` (in place where it can be): the new document and what was done.

    Half the time a key in `read_keys` (the fields the reader reads) is chosen where there is one."""
    paths = _paths(doc)
    keys = frozenset(read_keys)  # a reader's hundreds of keys: looked up by hash for each of the thousands of paths
    read = [p for p in paths if isinstance(p[-1], str) and p[-1] in keys]
    if not paths:
        return draw(VALUES), "replaced the whole document"
    path = draw(st.sampled_from(read)) if read and draw(st.booleans()) else draw(st.sampled_from(paths))
    parent, key = _parent(doc, path), path[-1]
    where = ".".join(map(str, path))
    kind = draw(st.sampled_from(["type", "delete", "number", "unicode", "huge", "rename", "wrap"]))
    if kind == "delete":
        del parent[key]
    elif kind == "number":
        parent[key] = draw(NUMBERS)
    elif kind == "unicode":
        parent[key] = draw(UNICODE)
    elif kind == "huge":
        parent[key] = draw(HUGE)
    elif kind == "rename" and isinstance(parent, dict):
        parent[draw(UNICODE)] = parent.pop(key)
    elif kind == "wrap":  # a list or an object where a scalar was: the 'not subscriptable' family
        parent[key] = draw(st.sampled_from([[parent[key]], {"0": parent[key]}, [parent[key]] * 2]))
    else:
        kind, parent[key] = "type", draw(VALUES)
    return doc, f"{kind} at {where}"


def dumps(doc: Any) -> bytes:
    """`doc` as JSON bytes, written even where Python's json would refuse (as a file could hold it)."""
    try:
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except ValueError:  # an integer beyond str()'s digit limit: write it anyway, as a file could hold it
        return b'{"hidden_size": ' + b"9" * 5000 + b"}"


JUNK_BYTES = st.binary(max_size=8) | st.sampled_from(
    [b"NaN", b"-Infinity", b"\xff\xfe", b"]]]", b'"\\u', b"\x00"]
)


@st.composite
def damage_bytes(draw: st.DrawFn, raw: bytes) -> tuple[bytes, str]:
    """`raw` truncated, with a byte flipped, or with junk inserted; and what was done."""
    kind = draw(st.sampled_from(["truncate", "flip", "insert"]))
    at = draw(st.integers(0, max(0, len(raw) - 1)))
    if kind == "truncate":
        return raw[:at], f"truncated at byte {at}"
    if kind == "flip" and raw:
        return raw[:at] + bytes([raw[at] ^ draw(st.integers(1, 255))]) + raw[at + 1 :], f"flipped byte {at}"
    junk = draw(JUNK_BYTES)
    return raw[:at] + junk + raw[at:], f"inserted {junk!r} at byte {at}"
