"""Text from outside made safe for a terminal: THE sanitiser every surface shows text through.

kvtop shows strings other people choose: process titles and command lines (a co-tenant can name
its process anything), users, model paths, Prometheus label values, scenario files, engine log
lines, error messages quoting a server's answer. A terminal obeys the control characters in them:
ESC starts a sequence that sets the window title (OSC 0), writes the clipboard (OSC 52), clears
the screen (CSI 2J) or moves the cursor; a C1 character (U+0080–U+009F) does the same in one
character on some terminals; BEL rings; a bidi override (U+202E) reorders what the eye reads.

Here every character that is not printable (`str.isprintable`: the Cc, Cf, Zl, Zp, Zs-but-space,
Cs, Co and Cn categories — C0, DEL, C1, bidi controls, zero-width characters, lone surrogates) is
shown as its Python escape (`\\x1b`, `\\x9b`, `\\u202e`), so the text stays readable and nothing in
it can drive the terminal. `safe_line` makes one line of it (a line break is escaped too);
`safe_text` keeps line breaks and tabs, for a whole rendered block. Both are pure and cheap on
text that is already safe (one `isprintable` scan).
"""

from __future__ import annotations

import re

#: Every character `safe_text` may pass besides the printable ones: the layout's own breaks.
_BLOCK_KEEPS = "\n\t"
# Characters a terminal (or the eye) acts on, whatever else is printable: used to check output.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _escaped(char: str) -> str:
    """`\\x1b`, `\\n`, `\\u202e`, `\\U000e0001`, `\\udcff`: the character as Python would write it."""
    return ascii(char)[1:-1]


def safe_line(text: str) -> str:
    """`text` as one line a terminal only displays: every non-printable character escaped (`\\x1b`)."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _escaped(char) for char in text)


def cut(text: str, limit: int) -> str:
    """`text` at most `limit` characters, a cut marked with `…`: the redactor reads a value that ends at a `…` as
    possibly cut inside a secret (`https://bob:Pw9X…`), so a bare slice must never shorten what a person sees."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def safe_text(text: str) -> str:
    """`text` (a block of lines) that a terminal only displays: line breaks and tabs kept, every
    other non-printable character escaped."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() or char in _BLOCK_KEEPS else _escaped(char) for char in text)


def first_control(text: str) -> str | None:
    """The first character in `text` a terminal would act on (C0 but a line break or tab, DEL, C1, a
    bidi or zero-width control), or None: what a test of a surface asserts is absent."""
    found = _CONTROL.search(text)
    return found.group() if found else None
