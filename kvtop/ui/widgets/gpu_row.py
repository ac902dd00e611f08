"""One GPU on the dashboard: the `GpuRow` widget, drawn from `row_parts` through cached strips.

```
 0 H100 80GB sglang TP0 obs  █████▓▓▓▓▓▓▓▓▓▓▒▒▚··  77.6 GiB  KV  42% ▂▃▅▆
   79.6 GiB  OK ★tight pred █████▓▓▓▓▓▓▓▓▓▓▒▒▒··  79.6 GiB  mem     ▅▅▅▅
```
"""

from __future__ import annotations

from textual.content import Content
from textual.geometry import Region
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from kvtop.ui.widgets.row_parts import (
    GpuRowData,
    RowParts,
    rank_label,
    render_row,
    row_parts,
    short_gpu_name,
    trend_width,
)
from kvtop.ui.widgets.row_strips import RowStrips

__all__ = ["GpuRow", "GpuRowData", "rank_label", "render_row", "short_gpu_name", "trend_width"]


class GpuRow(Widget):
    """A GPU's two lines; the list marks the selected one with the `-selected` class.

    Drawn line by line from cached strips: a new snapshot whose body draws the same cells
    (the usual case: only the KV % and the sparklines move) repaints only the trend cells.
    """

    data: reactive[GpuRowData | None] = reactive(None, layout=False, repaint=False)

    def __init__(self, data: GpuRowData) -> None:
        super().__init__(classes="gpu-row")
        self.set_reactive(GpuRow.data, data)
        self._parts: tuple[GpuRowData, RowParts] | None = None  # the parts of `data` at the current width
        self._strips = RowStrips()
        self._drawn: RowParts | None = None  # what the screen shows now

    @property
    def gpu_index(self) -> int:
        assert self.data is not None
        return self.data.gpu.index

    def render(self) -> Content:
        if self.data is None:
            return Content("")
        return render_row(self.data, self.content_size.width)

    def row_parts(self) -> RowParts | None:
        """The parts of the current data at the current width (computed once per data and width)."""
        data, width = self.data, self.content_size.width
        if data is None or width <= 0:
            return None
        if self._parts is None or self._parts[0] is not data or self._parts[1].width != width:
            self._parts = (data, row_parts(data, width))
        return self._parts[1]

    def watch_data(self) -> None:
        """Repaint what changed: nothing, a line's trend cells, a line, or the whole row."""
        drawn, parts = self._drawn, self.row_parts()
        if drawn is None or parts is None or parts.body_width != drawn.body_width:
            self.refresh()
            return
        for y, ((body, trend), (old_body, old_trend)) in enumerate(
            zip(parts.lines, drawn.lines, strict=True)
        ):
            if body != old_body:
                self.refresh(Region(0, y, parts.width, 1))
            elif trend != old_trend:
                self.refresh(Region(parts.body_width, y, parts.width - parts.body_width, 1))

    def render_line(self, y: int) -> Strip:
        parts = self.row_parts()
        if parts is None or y > 1:
            return Strip.blank(self.content_size.width, self.visual_style.rich_style)
        self._drawn = parts if parts.fits and self.text_selection is None else None
        return self._strips.line(self, parts, y)
