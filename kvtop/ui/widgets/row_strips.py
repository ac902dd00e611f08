"""A GPU row's strips, cached by what they show: a tick that moves only the trend redraws only the trend.

Both parts of a row (the body: identity, rank, state, bars, figures; the trend: KV % and two
sparklines) are lines of (text, style) pieces. They become strips straight from segments, in
rich styles Textual resolved once per piece style, base style and theme (`StyleBook`, probed by
rendering one cell), so the strips equal what Textual draws for the same `Content`.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.widget import Widget

from kvtop.ui.widgets.row_parts import Line, RowParts, parts_content


class StyleBook:
    """The rich style a piece style ('bold $warning') resolves to on a base style, per theme.

    `generation` changes when the theme or the widget's own style does, which voids every
    strip drawn with the old styles.
    """

    def __init__(self) -> None:
        self.generation = 0
        self._context: object = None
        self._styles: dict[tuple[Style, str], RichStyle] = {}

    def check(self, widget: Widget) -> None:
        """Forget resolved styles when the theme or the widget's style changed."""
        context = (widget.app.theme, widget.visual_style)
        if context != self._context:
            self._context, self._styles = context, {}
            self.generation += 1

    def resolve(self, widget: Widget, base: Style, style: str) -> RichStyle:
        resolved = self._styles.get((base, style))
        if resolved is None:
            probe = Content.styled("x", style) if style else Content("x")
            cell = Visual.to_strips(widget, probe, 1, 1, base)[0]
            resolved = self._styles[(base, style)] = next(iter(cell)).style or RichStyle()
        return resolved


class RowStrips:
    """One row's cache: each line's body and trend strips, by what they show and how."""

    def __init__(self) -> None:
        self._strips: dict[tuple[int, int], tuple[object, Strip]] = {}  # (y, x) → (pieces and style, strip)

    def line(self, widget: Widget, parts: RowParts, y: int, base: Style, book: StyleBook) -> Strip:
        """Line `y` (0 or 1) of the row as `parts` describe it, drawn on `base`."""
        if not parts.fits:  # too narrow to split: the whole row, as Textual draws any Content
            return Visual.to_strips(widget, parts_content(parts), parts.width, 2, base)[y]
        body, trend = parts.lines[y]
        strips = [self._cached(widget, body, 0, y, base, book)]
        if trend:
            strips.append(self._cached(widget, trend, parts.body_width, y, base, book))
        return Strip.join(strips) if len(strips) > 1 else strips[0]

    def _cached(self, widget: Widget, line: Line, x: int, y: int, base: Style, book: StyleBook) -> Strip:
        key = (line, base, book.generation)
        cached = self._strips.get((y, x))
        if cached is None or cached[0] != key:
            segments = [Segment(text, book.resolve(widget, base, style)) for text, style in line if text]
            cached = self._strips[(y, x)] = (key, Strip(segments))
        return cached[1]
