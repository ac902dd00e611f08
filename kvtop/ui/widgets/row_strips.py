"""A GPU row's strips, cached by what they show: a tick that moves only the trend redraws only the trend.

Both parts of a row (the body: identity, rank, state, bars, figures; the trend: KV % and two
sparklines) are lines of (text, style) pieces. They become strips straight from segments, in
styles Textual resolved once per style string, theme and row style (probed by rendering one
cell), so the strips equal what Textual draws for the same `Content`. Offsets are applied as
Textual applies them, so mouse text selection keeps working.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from kvtop.ui.widgets.row_parts import Line, RowParts, parts_content


class RowStrips:
    """One row's cache: each line's body and trend strips, and the resolved styles."""

    def __init__(self) -> None:
        self._strips: dict[tuple[int, int], tuple[object, Strip]] = {}  # (y, x) → (pieces and style, strip)
        self._styles: tuple[object, dict[str, RichStyle]] = (None, {})
        self._placed: dict[tuple[str, int, int], RichStyle] = {}  # a style with its offset, by (style, x, y)

    def line(self, widget: Widget, parts: RowParts, y: int) -> Strip:
        """Line `y` (0 or 1) of the row as `parts` describe it, drawn in the widget's style."""
        if widget.text_selection is not None or not parts.fits:
            # Selected text, or too narrow to split: the whole row, as Textual draws any Content.
            return Visual.to_strips(widget, parts_content(parts), parts.width, 2, widget.visual_style)[y]
        context = (widget.visual_style, widget.app.theme)
        if self._styles[0] != context:
            self._styles, self._placed, self._strips = (context, {}), {}, {}
        body, trend = parts.lines[y]
        strips = [self._cached(widget, body, 0, y)]
        if trend:
            strips.append(self._cached(widget, trend, parts.body_width, y))
        return Strip.join(strips) if len(strips) > 1 else strips[0]

    def _cached(self, widget: Widget, line: Line, x: int, y: int) -> Strip:
        cached = self._strips.get((y, x))
        if cached is None or cached[0] != line:
            cached = self._strips[(y, x)] = (line, self._strip(widget, line, x, y))
        return cached[1]

    def _strip(self, widget: Widget, line: Line, x: int, y: int) -> Strip:
        """The segments Textual renders for `line` at column `x` of line `y` (offsets included)."""
        segments = []
        for text, style in line:
            if text:
                segments.append(Segment(text, self._placed_style(widget, style, x, y)))
                x += len(text)
        return Strip(segments)

    def _placed_style(self, widget: Widget, style: str, x: int, y: int) -> RichStyle:
        """`style` as Textual resolves it for this row, with the text-selection offset of (x, y)."""
        placed = self._placed.get((style, x, y))
        if placed is None:
            resolved = self._styles[1].get(style)
            if resolved is None:
                probe = Content.styled("x", style) if style else Content("x")
                cell = Visual.to_strips(widget, probe, 1, 1, widget.visual_style)[0]
                resolved = self._styles[1][style] = next(iter(cell)).style or RichStyle()
            placed = self._placed[(style, x, y)] = resolved + RichStyle.from_meta({"offset": (x, y)})
        return placed
