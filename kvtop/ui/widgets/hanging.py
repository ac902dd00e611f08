"""Lines that wrap under their own text: a finding's summary, evidence and fix continue at their indent, not at
column 0 (Textual wraps a `Content` back to the widget's left edge)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions


class Hanging(Content):
    """`Content` of lines, each with its hang: the cells its first line keeps before the text (the indent and a
    label such as 'fix: '), under which its wrapped lines continue. Its plain text is the lines unwrapped."""

    def __init__(self, lines: Sequence[tuple[Content, int]]) -> None:
        joined = Content("\n").join(line for line, _ in lines)
        super().__init__(joined.plain, list(joined.spans))
        self._hangs = tuple(lines)

    def wrapped(self, width: int) -> Content:
        """The lines wrapped to `width`, each continuation under its line's text (a hang that leaves fewer than
        ten cells is dropped: the line wraps from column 0)."""
        out: list[Content] = []
        for line, hang in self._hangs:
            hang = hang if width - hang >= 10 else 0
            head, body = line[:hang], line[hang:]
            pieces = body.wrap(width - hang) if width - hang > 0 and body.plain else [body]
            if len(pieces) == 1:
                out.append(line)  # it fits: drawn as it is
                continue
            out.append(head + pieces[0])
            out += [Content(" " * hang) + piece for piece in pieces[1:]]
        return Content("\n").join(out)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self.wrapped(width).get_height(rules, width)

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return self.wrapped(width).render_strips(width, height, style, options)
