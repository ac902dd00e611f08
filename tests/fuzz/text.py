"""Line-oriented mutations of a real text (an engine log, a /metrics page): numbers swapped for
overflows, NaN, infinities, negative sizes and unicode digits; lines sliced, shuffled, duplicated,
dropped, borrowed from another text, blown up to a megabyte; junk and binary bytes put in."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hypothesis import strategies as st

from tests.fuzz.atoms import NUMBER_TEXT, damage_bytes

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
JUNK = st.text(alphabet=st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    [
        "\x1b[31m",
        "\x00",
        ",",
        "(",
        "[",
        "{",
        "'",
        '"',
        "=",
        "GB",
        "GiB",
        " pid=1)",
        "[12:00:00 TP",
        "\n",
        "9" * 60,
        "\\",
        "\r",
        "\t",
        "#",
        "}",
        "\ufeff",
    ]
)
OPERATIONS = (
    "number",
    "negative",
    "slice",
    "shuffle",
    "insert",
    "delete",
    "duplicate",
    "drop",
    "borrow",
    "huge",
)


@st.composite
def mangle_line(draw: st.DrawFn, line: str, pool: Sequence[str]) -> tuple[str | list[str], str]:
    """One operation on one line: the new line (or lines) and what was done."""
    operation = draw(st.sampled_from(OPERATIONS))
    numbers = list(_NUMBER.finditer(line))
    if operation in ("number", "negative") and numbers:
        match = draw(st.sampled_from(numbers))
        new = draw(NUMBER_TEXT) if operation == "number" else "-" + match.group().lstrip("-")
        return line[: match.start()] + new + line[
            match.end() :
        ], f"{operation} {match.group()!r}->{new[:20]!r}"
    start = draw(st.integers(0, len(line)))
    end = draw(st.integers(start, min(len(line), start + 200)))
    if operation == "slice":
        return line[start:end], f"slice {start}:{end}"
    if operation == "shuffle":
        return line[:start] + "".join(draw(st.permutations(list(line[start:end])))) + line[end:], "shuffle"
    if operation == "insert" or operation in ("number", "negative"):
        junk = draw(JUNK)
        return line[:start] + junk + line[start:], f"insert {junk[:20]!r}"
    if operation == "delete":
        return line[:start] + line[end:], f"delete {start}:{end}"
    if operation == "duplicate":
        return [line] * draw(st.integers(2, 50)), "duplicate"
    if operation == "drop":
        return [], "drop"
    if operation == "borrow" and pool:
        return [line, draw(st.sampled_from(pool))], "borrow a line"
    kind = draw(st.sampled_from(["long", "digits", "repeat"]))
    if kind == "long":
        return line + "x" * 1_000_000, "huge: a megabyte line"
    if kind == "digits":
        return line[:start] + "9" * 5000 + line[start:], "huge: 5000 digits"
    times = min(20_000, 4_000_000 // (len(line) + 1) + 2)  # a few megabytes at most
    return [line] * times, f"huge: the line {times:,} times"


@st.composite
def mangled_text(
    draw: st.DrawFn, text: str, pool: Sequence[str] = (), *, max_operations: int = 4
) -> tuple[bytes, tuple[str, ...]]:
    """`text` with 1..max_operations line mutations, sometimes byte damage: (bytes, what was done)."""
    lines = text.splitlines()
    done: list[str] = []
    for _ in range(draw(st.integers(1, max_operations))):
        if not lines:
            lines, what = [draw(JUNK)], "a junk line"
            done.append(what)
            continue
        index = draw(st.integers(0, len(lines) - 1))
        new, what = draw(mangle_line(lines[index], pool))
        lines[index : index + 1] = new if isinstance(new, list) else [new]
        done.append(f"line {index + 1}: {what}")
    raw = "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"
    if draw(st.integers(0, 4)) == 0:
        raw, what = draw(damage_bytes(raw))
        done.append(what)
    return raw, tuple(done)
