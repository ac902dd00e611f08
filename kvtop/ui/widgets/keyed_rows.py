"""A table of rows keyed by name whose refresh replaces only the cells that changed.

The cluster's node and engine tables are refreshed every few seconds with 1,000+ rows that mostly keep their
text (ages move): rebuilding every row cost about twice the reader's own CPU (benchmarks/README.md,
cluster_scale_bench.py). When the rows are the same names in the same order and the theme is unchanged, only
the changed cells are replaced; else the table is rebuilt with the cursor kept on its row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from rich.text import Text
from textual.widgets import DataTable


class ToneCell(Protocol):
    """A cell as the tables draw it: its text and its tone (a key of `TONES`)."""

    @property
    def text(self) -> str: ...

    @property
    def tone(self) -> str: ...


# a cell's tone → the theme variable that styles it
TONES = {"error": "error", "warning": "warning", "success": "success", "muted": "text-muted"}

Render = Callable[[str, ToneCell, dict[str, str]], Text]


class KeyedRowsTable(DataTable[Text]):
    """Rows keyed by name; the cursor stays on its row across refreshes."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._rows: dict[str, tuple[ToneCell, ...]] = {}  # the cells shown, by row name, in row order
        self._styles: dict[str, str] = {}  # the theme's styles they were drawn with

    @property
    def selected_key(self) -> str | None:
        """The name of the row under the cursor."""
        if self.row_count == 0:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def set_columns(self, columns: Sequence[str]) -> None:
        """Replace the columns, each keyed by its name: every row goes, and the next `show_rows` draws them afresh
        (a subclass whose columns come and go with the width calls this, never writes the rows it keeps)."""
        self.clear(columns=True)
        for column in columns:
            self.add_column(column, key=column)
        self._rows = {}

    def show_rows(
        self, rows: Mapping[str, Sequence[ToneCell]], columns: Sequence[str], render: Render
    ) -> None:
        """Show `rows` (name → cells, in order) under `columns`, each cell drawn by `render`."""
        variables = self.app.get_css_variables()
        styles = {tone: variables.get(name, "") for tone, name in TONES.items()}
        shown = {name: tuple(cells) for name, cells in rows.items()}
        if styles == self._styles and list(shown) == list(self._rows) and len(shown) == self.row_count:
            for name, cells in shown.items():
                for column, cell, before in zip(columns, cells, self._rows[name], strict=True):
                    if cell != before:
                        self.update_cell(name, column, render(column, cell, styles), update_width=True)
            self._rows = shown
            return
        selected = self.selected_key
        self._styles, self._rows = styles, shown
        self.clear()
        for name, cells in shown.items():
            self.add_row(*(render(column, cell, styles) for column, cell in zip(columns, cells, strict=True)), key=name)
        names = list(shown)
        if selected in names:
            self.move_cursor(row=names.index(selected), animate=False)
