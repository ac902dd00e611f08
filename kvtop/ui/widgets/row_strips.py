"""A GPU row's segments, cached by what they show: a tick that moves only the trend redraws only the trend.

Both parts of a row (the body: identity, rank, state, bars, figures; the trend: KV % and two
sparklines) are lines of (text, style) pieces. They become segments straight away, in
rich styles Textual resolved once per piece style, base style and theme (`StyleBook`, probed by
rendering one cell), so the lines equal what Textual draws for the same `Content`. The app's
line filters (which turn ANSI colours into true colour, or drop colour under NO_COLOR) work
segment by segment, so they are applied to each part once, when it is drawn, not to every line
every tick.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.color import Color
from textual.content import Content
from textual.filter import LineFilter
from textual.style import Style
from textual.visual import Visual
from textual.widget import Widget

from kvtop.ui.widgets.row_parts import Line, RowParts


class StyleBook:
    """The rich style a piece style ('bold $warning') resolves to on a base style, per theme,
    and the app's line filters that the drawn segments go through.

    `generation` changes when the theme, the widget's own style or the filters do, which voids
    every strip drawn with the old ones.
    """

    def __init__(self) -> None:
        self.generation = 0
        self._context: object = None
        self._styles: dict[tuple[Style, str], RichStyle] = {}
        self._filters: tuple[LineFilter, ...] = ()
        self._background = Color(0, 0, 0)

    def check(self, widget: Widget) -> None:
        """Forget resolved styles when the theme, the widget's style or the line filters changed."""
        filters, background = tuple(widget.get_line_filters()), widget.background_colors[1]
        context = (widget.app.theme, widget.visual_style, filters, background)
        if context != self._context:
            self._context, self._styles = context, {}
            self._filters, self._background = filters, background
            self.generation += 1

    def filtered(self, segments: list[Segment]) -> list[Segment]:
        """The segments as the app's line filters make them (as Textual filters a widget's lines)."""
        for line_filter in self._filters:
            segments = line_filter.apply(segments, self._background)
        return segments

    def resolve(self, widget: Widget, base: Style, style: str) -> RichStyle:
        resolved = self._styles.get((base, style))
        if resolved is None:
            probe = Content.styled("x", style) if style else Content("x")
            cell = Visual.to_strips(widget, probe, 1, 1, base)[0]
            resolved = self._styles[(base, style)] = next(iter(cell)).style or RichStyle()
        return resolved


Drawn = tuple[list[Segment], int]  # a line's segments and the cells they span


class RowStrips:
    """One row's cache: each line's body and trend segments, by what they show and how.

    Cell counts are the texts' lengths: every glyph a row draws (digits, letters, block
    elements, sparkline bars, ★) is one cell wide, and counting them this way spares Textual
    measuring each new sparkline character by character.
    """

    def __init__(self) -> None:
        self._drawn: dict[tuple[int, int], tuple[object, Drawn]] = {}  # (y, x) → (key, drawn)

    def line(self, widget: Widget, parts: RowParts, y: int, base: Style, book: StyleBook) -> Drawn:
        """Line `y` (0 or 1) of the row as `parts` describe it, drawn on `base` (maybe wider than the row)."""
        body, trend = parts.lines[y]
        segments, cells = self._cached(widget, body, 0, y, base, book)
        if not trend:
            return segments, cells
        trend_segments, trend_cells = self._cached(widget, trend, parts.body_width, y, base, book)
        return segments + trend_segments, cells + trend_cells

    def _cached(self, widget: Widget, line: Line, x: int, y: int, base: Style, book: StyleBook) -> Drawn:
        key = (line, base, book.generation)
        cached = self._drawn.get((y, x))
        if cached is None or cached[0] != key:
            segments = book.filtered(
                [Segment(text, book.resolve(widget, base, style)) for text, style in line if text]
            )
            cached = self._drawn[(y, x)] = (key, (segments, sum(len(text) for text, _ in line)))
        return cached[1]
