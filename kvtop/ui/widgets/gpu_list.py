"""The dashboard's GPU list: one `GpuRow` per GPU, a selection, a filter, keys and mouse.

`mark_gpus` marks the GPUs of the finding the operator is looking at (a coloured left edge,
`-finding` and `-finding-<tone>`), independent of the selection.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from textual import events
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.message import Message
from textual.reactive import reactive

from kvtop.ui.widgets.gpu_row import GpuRow, GpuRowData

FINDING_TONES = ("error", "warning", "info")


class GpuList(VerticalScroll, can_focus=True):
    """Rows of GPUs. Up/down (or j/k) select, Enter or a click on the selected row opens its ledger."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter", "open", "Ledger"),
    ]

    selected: reactive[int | None] = reactive(None)  # the selected GPU's NVML index
    filter_text: reactive[str] = reactive("")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._marked: frozenset[int] = frozenset()
        self._mark_tone = "info"

    class Opened(Message):
        """The operator asked for the ledger of this GPU."""

        def __init__(self, gpu_index: int) -> None:
            super().__init__()
            self.gpu_index = gpu_index

    def show_rows(self, rows: Sequence[GpuRowData]) -> None:
        """Update rows in place; rebuild only when the set of GPUs changes."""
        existing = list(self.query(GpuRow))
        rebuilt = [row.gpu_index for row in existing] != [data.gpu.index for data in rows]
        if rebuilt:
            self.remove_children()
            self.mount_all([GpuRow(data) for data in rows])
        else:
            for widget, data in zip(existing, rows, strict=False):
                widget.data = data
        if rows and (self.selected is None or self.selected not in {d.gpu.index for d in rows}):
            self.selected = rows[0].gpu.index
        if rebuilt or self.filter_text.strip():  # new rows, or rows whose text the filter may now match
            self.call_after_refresh(self._apply_marks)

    def _visible_rows(self) -> list[GpuRow]:
        return [row for row in self.query(GpuRow) if row.display]

    @property
    def marked(self) -> frozenset[int]:
        """The GPUs marked for the finding being looked at."""
        return self._marked

    def mark_gpus(self, gpus: Collection[int], tone: str = "info") -> None:
        """Mark these GPUs' rows in `tone` ('error', 'warning', 'info'); no GPUs clears the marks."""
        self._marked, self._mark_tone = frozenset(gpus), tone
        self._apply_marks()

    def _apply_marks(self) -> None:
        needle = self.filter_text.strip().lower()
        for row in self.query(GpuRow):
            row.display = not needle or (row.data is not None and needle in row.data.search_text())
            row.set_class(row.gpu_index == self.selected, "-selected")
            marked = row.gpu_index in self._marked
            row.set_class(marked, "-finding")
            for tone in FINDING_TONES:
                row.set_class(marked and tone == self._mark_tone, f"-finding-{tone}")

    def watch_selected(self, _old: int | None, new: int | None) -> None:
        self._apply_marks()
        if new is not None:
            matches = [row for row in self.query(GpuRow) if row.gpu_index == new]
            if matches:
                self.scroll_to_widget(matches[0], animate=False)

    def watch_filter_text(self) -> None:
        self._apply_marks()
        visible = self._visible_rows()
        if visible and self.selected not in {row.gpu_index for row in visible}:
            self.selected = visible[0].gpu_index

    def action_move(self, step: int) -> None:
        visible = self._visible_rows()
        if not visible:
            return
        indexes = [row.gpu_index for row in visible]
        position = indexes.index(self.selected) if self.selected in indexes else 0
        self.selected = indexes[max(0, min(len(indexes) - 1, position + step))]

    def action_jump(self, position: int) -> None:
        visible = self._visible_rows()
        if visible:
            self.selected = visible[position].gpu_index

    def action_open(self) -> None:
        if self.selected is not None:
            self.post_message(self.Opened(self.selected))

    def on_click(self, event: events.Click) -> None:
        node: DOMNode | None = event.widget
        while node is not None and node is not self and not isinstance(node, GpuRow):
            node = node.parent
        row = node
        if isinstance(row, GpuRow):
            if row.gpu_index == self.selected or event.chain > 1:
                self.post_message(self.Opened(row.gpu_index))
            self.selected = row.gpu_index
