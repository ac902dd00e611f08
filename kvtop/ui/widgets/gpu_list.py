"""The dashboard's GPU list: two lines per GPU (one when compact), a selection, a filter, an order,
finding marks, keys and mouse.

One scrollable widget paints every row itself (Textual's line API) rather than one widget per
GPU: a refresh tick then repaints only the cells that changed, without Textual visiting eight
more widgets. Column 0 of a row is its edge: blank, or `▌` in the tone of the finding being
looked at (`mark_gpus`); the selected row is drawn on `$row-selected`.

The list keeps the strips it drew, each under what its line shows (`_LineKey`): Textual asks
for every line of the list whenever one cell of it changes, and a tick changes a few lines,
so the others are handed back as drawn. The list has no border, padding, tint or opacity, so
a line is what `render_line` draws (with the app's line filters applied, part by part), as
Textual's own styles cache would make it (tests/ui/test_gpu_list_lines.py compares the two).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style

from kvtop.ui.filter_words import FilterError
from kvtop.ui.gpu_filter import GpuFilter, parse_filter
from kvtop.ui.widgets.row_painter import RowPainter
from kvtop.ui.widgets.row_parts import STATE_CELL_MEANS, GpuRowData, Line, render_row
from kvtop.ui.widgets.row_strips import StyleBook

FINDING_TONES = ("error", "warning", "info")
ROW_LINES = 2  # lines per GPU (one when compact)
EDGE_WIDTH = 1
EDGE_GLYPH = "▌"


@dataclass(frozen=True)
class _Pass:
    """What every line of one render pass shares."""

    width: int
    top: int  # the first line shown (scrolling)
    row_lines: int  # 2, or 1 when compact
    normal: Style
    selected: Style
    edges: dict[str | None, Segment]  # by finding tone; None: no mark


# What one line of the list shows: the GPU, the row's (body, trend) pieces of that line, whether
# the row is selected and the tone of its edge. None: a blank line below the rows.
_LineKey = tuple[int, tuple[Line, Line], bool, str | None] | None


def _columns(spans: list[tuple[int, int, int]]) -> list[Region]:
    """Changed spans (first cell, cells, line) as regions, lines below each other joined.

    The usual tick changes the trend of every line: one region down the trend column, not
    sixteen, for Textual to repaint.
    """
    regions: list[Region] = []
    for x, cells, y in sorted(spans):
        last = regions[-1] if regions else None
        if last is not None and (last.x, last.width, last.bottom) == (EDGE_WIDTH + x, cells, y):
            regions[-1] = Region(last.x, last.y, cells, last.height + 1)
        else:
            regions.append(Region(EDGE_WIDTH + x, y, cells, 1))
    return regions


class GpuList(ScrollView, can_focus=True):
    """Rows of GPUs. Up/down (or j/k) select, Enter or a click on the selected row opens its ledger."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {
        "gpu-list--selected",
        *(f"gpu-list--finding-{tone}" for tone in FINDING_TONES),
    }
    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter", "open", "Ledger"),
    ]

    selected: reactive[int | None] = reactive(None)  # the selected GPU's NVML index
    filter_text: reactive[str] = reactive("")
    compact: reactive[bool] = reactive(False)  # one line per GPU (a short or narrow terminal)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tooltip = STATE_CELL_MEANS  # what a row's '−Nk tok' answers, beside the ▶ answer's one cause
        self._painters: dict[int, RowPainter] = {}  # by GPU index, in the snapshot's order
        self._shown: tuple[int, ...] = ()  # the GPUs the filter lets through, in order
        self._order: tuple[int, ...] | None = None  # GPU indices in the order to list them (None: as given)
        self._filter = GpuFilter()
        self.filter_error: str | None = None  # why the filter text cannot be read (it then filters nothing)
        self._watched: int | None = None  # a GPU kept on screen beside the selection when both fit
        self._marked: frozenset[int] = frozenset()
        self._mark_tone = "info"
        self._styles = StyleBook()
        self._pass = _Pass(0, 0, ROW_LINES, Style(), Style(), {})
        self._drawn_pass: tuple[object, ...] = ()  # what the strips in `_drawn_lines` were drawn with
        self._drawn_lines: dict[int, tuple[_LineKey, Strip]] = {}  # by line on screen

    class Opened(Message):
        """The operator asked for the ledger of this GPU."""

        def __init__(self, gpu_index: int) -> None:
            super().__init__()
            self.gpu_index = gpu_index

    # --- what the list shows -------------------------------------------------------------------

    @property
    def shown_gpus(self) -> tuple[int, ...]:
        """The GPUs listed now (after the filter), top to bottom."""
        return self._shown

    @property
    def row_count(self) -> int:
        """GPUs in the snapshot, listed or filtered out."""
        return len(self._painters)

    @property
    def marked(self) -> frozenset[int]:
        """The GPUs marked for the finding being looked at."""
        return self._marked

    def mark_of(self, gpu_index: int) -> str | None:
        """The tone of the edge drawn on this GPU's row, None when unmarked."""
        return self._mark_tone if gpu_index in self._marked else None

    def row_text(self, gpu_index: int) -> str:
        """The row's lines as plain text, at the width and in the mode it is drawn."""
        return render_row(self._painters[gpu_index].data, self._row_width, self.compact).plain

    def row_data(self, gpu_index: int) -> GpuRowData | None:
        painter = self._painters.get(gpu_index)
        return painter.data if painter else None

    @property
    def row_lines(self) -> int:
        """Lines per GPU: 2, or 1 when compact."""
        return 1 if self.compact else ROW_LINES

    @property
    def _row_width(self) -> int:
        return max(1, self.scrollable_content_region.width - EDGE_WIDTH)

    def lines_needed(self) -> int:
        """Lines that show every listed GPU in the current mode."""
        return self.row_lines * len(self._shown)

    def visible_gpus(self) -> tuple[int, ...]:
        """The listed GPUs whose every line is inside the list's window now."""
        lines, top, height = self.row_lines, self.scroll_offset.y, self.scrollable_content_region.height
        return tuple(
            index
            for position, index in enumerate(self._shown)
            if position * lines >= top and (position + 1) * lines <= top + height
        )

    # --- updates -------------------------------------------------------------------------------

    def show_rows(self, rows: Sequence[GpuRowData]) -> None:
        """Take a snapshot's rows; repaint only the cells they change."""
        if list(self._painters) != [data.gpu.index for data in rows]:
            self._painters = {data.gpu.index: RowPainter(data) for data in rows}
        else:
            for data in rows:
                self._painters[data.gpu.index].data = data
        if rows and (self.selected is None or self.selected not in self._painters):
            self.selected = rows[0].gpu.index
        if not self._filter_rows():
            self._refresh_changed_cells()

    @property
    def order(self) -> tuple[int, ...] | None:
        """The GPU indices in the order they are listed (None: the snapshot's order)."""
        return self._order

    def set_order(self, order: Sequence[int] | None) -> None:
        """List the GPUs in this order of indices (None: the snapshot's order); GPUs not named go last."""
        self._order = None if order is None else tuple(order)
        self._filter_rows()

    def _ordered(self) -> list[int]:
        indices = list(self._painters)
        if self._order is None:
            return indices
        rank = {index: position for position, index in enumerate(self._order)}
        return sorted(indices, key=lambda index: rank.get(index, len(rank)))

    def _filter_rows(self) -> bool:
        """Apply the filter and the order; True when the rows listed changed (and the whole list was repainted)."""
        keep = self._filter.matches
        shown = tuple(index for index in self._ordered() if keep(self._painters[index].data))
        if shown == self._shown:
            return False
        self._shown = shown
        self._size_to_rows()
        self.refresh()
        self.call_after_refresh(self._keep_selection_in_view)  # rows moved under the selection
        return True

    def _size_to_rows(self) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, self.lines_needed())

    def _refresh_changed_cells(self) -> None:
        width, top, lines, compact = self._row_width, self.scroll_offset.y, self.row_lines, self.compact
        spans = [
            (x, cells, position * lines + y - top)
            for position, index in enumerate(self._shown)
            for y, x, cells in self._painters[index].changed_spans(width, compact)
        ]
        if spans:
            self.refresh(*_columns(spans))

    def _refresh_gpu(self, gpu_index: int | None) -> None:
        if gpu_index in self._shown:
            lines = self.row_lines
            self.refresh_lines(self._shown.index(gpu_index) * lines, lines)

    def mark_gpus(self, gpus: Collection[int], tone: str = "info") -> None:
        """Mark these GPUs' rows in `tone` ('error', 'warning', 'info'); no GPUs clears the marks."""
        self._marked, self._mark_tone = frozenset(gpus), tone
        self.refresh()

    def watch_selected(self, old: int | None, new: int | None) -> None:
        self._refresh_gpu(old)
        self._refresh_gpu(new)
        self._keep_selection_in_view()

    def keep_on_screen(self, gpu_index: int | None) -> None:
        """Keep this GPU on screen too (the one in the most trouble) whenever it fits beside the selection."""
        if gpu_index != self._watched:
            self._watched = gpu_index
            self.call_after_refresh(self._keep_selection_in_view)

    def _keep_selection_in_view(self) -> None:
        """Scroll so that every line of the selected GPU is on screen, and the watched GPU with it
        when both fit in the window."""
        if self.selected not in self._shown:
            return
        lines = self.row_lines
        top = self._shown.index(self.selected) * lines
        region = Region(0, top, 1, lines)
        if self._watched in self._shown and self._watched != self.selected:
            watched = self._shown.index(self._watched) * lines
            first, last = min(top, watched), max(top, watched) + lines
            if last - first <= self.scrollable_content_region.height:
                self.scroll_to_region(Region(0, first, 1, last - first), animate=False, immediate=True)
        self.scroll_to_region(region, animate=False, immediate=True)

    def watch_filter_text(self, text: str) -> None:
        try:
            self._filter, self.filter_error = parse_filter(text), None
        except FilterError as error:
            self._filter, self.filter_error = GpuFilter(), str(error)
        self._filter_rows()
        if self._shown and self.selected not in self._shown:
            self.selected = self._shown[0]

    def watch_compact(self) -> None:
        self._size_to_rows()
        self._drawn_lines = {}
        self.refresh()
        self.call_after_refresh(self._keep_selection_in_view)

    # --- drawing -------------------------------------------------------------------------------

    def _resolve_pass(self) -> _Pass:
        """What every line of a render pass shares (width, scroll, styles), resolved once per pass."""
        book = self._styles
        book.check(self)
        normal = self.visual_style
        edges: dict[str | None, Segment] = {None: Segment(" " * EDGE_WIDTH, normal.rich_style)}
        for tone in FINDING_TONES:
            edges[tone] = Segment(EDGE_GLYPH, self.get_visual_style(f"gpu-list--finding-{tone}").rich_style)
        edges = dict(zip(edges, book.filtered(list(edges.values())), strict=True))
        self._pass = _Pass(
            self.scrollable_content_region.width,
            self.scroll_offset.y,
            self.row_lines,
            normal,
            self.get_visual_style("gpu-list--selected"),
            edges,
        )
        return self._pass

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines in `crop`: each drawn again only when what it shows changed (see the module doc)."""
        drawing = self._resolve_pass()
        width = self.size.width
        drawn_pass = (drawing, self._styles.generation, width)
        if drawn_pass != self._drawn_pass:
            self._drawn_pass, self._drawn_lines = drawn_pass, {}
        drawn_lines, keys = self._drawn_lines, self._line_keys(crop, drawing)
        strips: list[Strip] = []
        for y, key in zip(crop.line_range, keys, strict=True):
            drawn = drawn_lines.get(y)
            if drawn is None or drawn[0] != key:
                drawn = drawn_lines[y] = (key, self._drawn_line(y, drawing, width))
            strips.append(drawn[1])
        if crop.column_span != (0, width):
            strips = [strip.crop(*crop.column_span) for strip in strips]
        return strips

    def _line_keys(self, crop: Region, drawing: _Pass) -> list[_LineKey]:
        """What each line in `crop` shows (the selection read once: a reactive is slow to read)."""
        shown, painters, selected = self._shown, self._painters, self.selected
        row_width, compact = drawing.width - EDGE_WIDTH, drawing.row_lines == 1
        keys: list[_LineKey] = []
        for y in crop.line_range:
            position, line = divmod(y + drawing.top, drawing.row_lines)
            if position >= len(shown):
                keys.append(None)
                continue
            index = shown[position]
            pieces = painters[index].parts(row_width, compact).lines[line]
            keys.append((index, pieces, index == selected, self.mark_of(index)))
        return keys

    def _drawn_line(self, y: int, drawing: _Pass, width: int) -> Strip:
        """Line `y` across the whole widget, filtered, as Textual's styles cache would make it."""
        strip = self.render_line(y)
        if strip.cell_length < width:  # the column under the scrollbar: background only
            gutter = Segment(
                " " * (width - strip.cell_length), RichStyle(bgcolor=drawing.normal.rich_style.bgcolor)
            )
            strip = Strip([*strip, *self._styles.filtered([gutter])], width)
        return strip

    def render_line(self, y: int) -> Strip:
        """Line `y` of the list (its app line filters applied: see row_strips.py)."""
        drawing = self._pass
        position, line = divmod(y + drawing.top, drawing.row_lines)
        if position >= len(self._shown) or drawing.width <= EDGE_WIDTH:
            blank = Segment(" " * drawing.width, drawing.normal.rich_style)
            return Strip(self._styles.filtered([blank]), drawing.width)
        index = self._shown[position]
        base = drawing.selected if index == self.selected else drawing.normal
        row_width = drawing.width - EDGE_WIDTH
        compact = drawing.row_lines == 1
        segments, cells = self._painters[index].line(self, line, row_width, base, self._styles, compact)
        strip = Strip([drawing.edges[self.mark_of(index)], *segments], EDGE_WIDTH + cells)
        return strip if cells <= row_width else strip.crop(0, drawing.width)  # too narrow: cut, never wrap

    def on_resize(self) -> None:
        self._size_to_rows()
        self.call_after_refresh(self._keep_selection_in_view)

    # --- keys and mouse ------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        if not self._shown:
            return
        position = self._shown.index(self.selected) if self.selected in self._shown else 0
        self.selected = self._shown[max(0, min(len(self._shown) - 1, position + step))]
        self._keep_selection_in_view()  # also when the selection stays (the wheel may have moved away)

    def action_jump(self, position: int) -> None:
        if self._shown:
            self.selected = self._shown[position]
            self._keep_selection_in_view()

    def action_open(self) -> None:
        if self.selected in self._shown:  # not a GPU the filter hides
            self.post_message(self.Opened(self.selected))

    def gpu_at(self, y: int) -> int | None:
        """The GPU whose row is drawn on line `y` of the list (as on screen, scrolling included)."""
        position = (y + self.scroll_offset.y) // self.row_lines
        return self._shown[position] if 0 <= position < len(self._shown) else None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        gpu_index = None if offset is None else self.gpu_at(offset.y)
        if gpu_index is None:
            return
        if gpu_index == self.selected or event.chain > 1:
            self.post_message(self.Opened(gpu_index))
        self.selected = gpu_index
