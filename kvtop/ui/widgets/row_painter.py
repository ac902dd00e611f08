"""One GPU of the dashboard's list: its data, its parts at the list's width, and what was drawn.

```
 0 H100 80GB sglang TP0 obs  █████▓▓▓▓▓▓▓▓▓▓▒▒▚··  77.6 GiB  KV  42% ▂▃▅▆
   79.6 GiB  OK ★tight pred █████▓▓▓▓▓▓▓▓▓▓▒▒▒··  79.6 GiB  mem     ▅▅▅▅
```

`changed_spans` compares a new snapshot's parts with what the screen shows, so the list
repaints nothing, a line's trend cells, a line, or the whole row (the usual tick moves only the
KV % and the sparklines).
"""

from __future__ import annotations

from textual.style import Style
from textual.widget import Widget

from kvtop.ui.widgets.row_parts import GpuRowData, RowParts, compact_row_parts, row_parts
from kvtop.ui.widgets.row_strips import Drawn, RowStrips, StyleBook

Span = tuple[int, int, int]  # line (0 or 1), first cell, cells


class RowPainter:
    """Draws one GPU's lines (two, or one when compact); keeps the parts it drew to tell what a new
    snapshot changes."""

    def __init__(self, data: GpuRowData) -> None:
        self.data = data
        self._parts: tuple[GpuRowData, bool, RowParts] | None = None  # the parts of `data` at the last width
        self._strips = RowStrips()
        self._drawn: RowParts | None = None  # what the screen shows now

    def parts(self, width: int, compact: bool = False) -> RowParts:
        """The parts of the current data at `width` (computed once per data, width and mode)."""
        kept = self._parts
        if kept is None or kept[0] is not self.data or kept[1] != compact or kept[2].width != width:
            parts = compact_row_parts(self.data, width) if compact else row_parts(self.data, width)
            self._parts = kept = (self.data, compact, parts)
        return kept[2]

    def changed_spans(self, width: int, compact: bool = False) -> list[Span]:
        """What differs between the current data at `width` and what is drawn."""
        drawn, parts = self._drawn, self.parts(width, compact)
        if drawn is None or parts.body_width != drawn.body_width or len(parts.lines) != len(drawn.lines):
            return [(y, 0, width) for y in range(len(parts.lines))]
        spans: list[Span] = []
        for y, ((body, trend), (old_body, old_trend)) in enumerate(
            zip(parts.lines, drawn.lines, strict=True)
        ):
            if body != old_body:
                spans.append((y, 0, width))
            elif trend != old_trend:
                spans.append((y, parts.body_width, width - parts.body_width))
        return spans

    def line(
        self, widget: Widget, y: int, width: int, base: Style, book: StyleBook, compact: bool = False
    ) -> Drawn:
        """Line `y` of the row at `width` cells on the `base` style: its segments and cells."""
        parts = self.parts(width, compact)
        self._drawn = parts
        return self._strips.line(widget, parts, y, base, book)
