"""The cluster's engines: one row per engine, every node's part joined, read from a frozen `ClusterView`.

```
engine                               layout        where                                    tightest rank       tokens per rank       largest cause
SGLang DeepSeek-V3 @10.0.1.10:5000   TP16          h20-a TP0–TP7 (API) · h20-b TP8–TP15     h20-b GPU 3         498,636 live          other processes −75,360 (h20-b GPU 3)
SGLang llama-3-70b (sglang:82000)    TP4 decode    pd-decode TP0–TP3                        —                   290,943 live          decode limits concurrency: 127,825 short
```

`engine_cells` turns one engine into tone-tagged text (pure, so the tests read it without a terminal);
`EngineTable` draws the rows keyed by the engine's name. Enter on a row opens the node of its tightest
rank (the cluster screen posts it as a node choice).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

from kvtop.domain.capacity import CapacityCause
from kvtop.domain.cluster_engines import DisaggregatedGroup, JoinedEngine
from kvtop.domain.engines.registry import display_name
from kvtop.ui.widgets.cluster_table import NONE, Cell

ENGINE_COLUMNS = ("engine", "layout", "where", "tightest rank", "tokens per rank", "largest cause")
_TONES = {"error": "error", "warning": "warning", "success": "success", "muted": "text-muted"}


def engine_label(engine: JoinedEngine) -> str:
    span, first = engine.span, engine.pieces[0]
    model = (span.served_model or "?").rsplit("/", 1)[-1]
    where = f"@{span.rendezvous}" if span.spans_nodes else f"({first.engine_id})"
    return f"{display_name(span.kind)} {model} {where}"


def engine_cells(engine: JoinedEngine, groups: Sequence[DisaggregatedGroup] = ()) -> tuple[Cell, ...]:
    """The row of one engine, in ENGINE_COLUMNS order."""
    span, first = engine.span, engine.pieces[0]
    role = f" {span.role.value}" if span.role.value != "whole" else ""
    where = " · ".join(
        f"{p.node} {p.ranks_label or '?'}" + (" (API)" if span.spans_nodes and p.span.serves_api else "")
        for p in engine.pieces
    )
    if engine.missing_node_ranks:
        where += f" · node rank {', '.join(map(str, engine.missing_node_ranks))} unseen"
    tightest, actual = engine.tightest, engine.actual
    tight = Cell(NONE, "muted")
    if tightest is not None and tightest.clear:
        where_gpu = f" GPU {tightest.gpu}" if tightest.gpu else (f" {tightest.rank}" if tightest.rank else "")
        tight = Cell(f"{tightest.node}{where_gpu}", "warning")
    elif engine.tightest_unknown:
        tight = Cell("not known from metrics", "muted")
    tokens = Cell(NONE, "muted") if actual is None else Cell(f"{actual[0]:,} {engine.actual_source}")
    losses = [t for t in engine.terms if t.tokens < 0]
    cause = Cell(NONE, "muted")
    if losses:
        worst = min(losses, key=lambda t: t.tokens)
        cause = Cell(worst.describe(), "error" if worst.cause is not CapacityCause.UNEXPLAINED else "warning")
    finding = next((g.finding for g in groups if engine in g.decode and g.finding is not None), None)
    if finding is not None:
        cause = Cell(f"decode limits concurrency: {finding.tokens_short:,} tokens short", "warning")
    return (
        Cell(engine_label(engine)),
        Cell(f"{first.layout or '?'}{role}"),
        Cell(where, "warning" if engine.missing_node_ranks or span.not_modelled else ""),
        tight,
        tokens,
        cause,
    )


class EngineTable(DataTable[Text]):
    """Engines as rows keyed by name; the cursor stays on its engine across refreshes."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._engines: tuple[JoinedEngine, ...] = ()
        self._groups: tuple[DisaggregatedGroup, ...] = ()
        self._rows: dict[str, tuple[Cell, ...]] = {}  # the cells shown, by engine name, in row order
        self._styles: dict[str, str] = {}

    def on_mount(self) -> None:
        for column in ENGINE_COLUMNS:
            self.add_column(column, key=column)
        self.watch(self.app, "theme", lambda: self.show_engines(self._engines, self._groups), init=False)

    @property
    def selected_engine(self) -> str | None:
        if self.row_count == 0:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def engine_named(self, name: str | None) -> JoinedEngine | None:
        return next((e for e in self._engines if e.name == name), None)

    def show_engines(self, engines: Sequence[JoinedEngine], groups: Sequence[DisaggregatedGroup] = ()) -> None:
        """Show the engines, keeping the cursor on the same engine; the same engines in the same order
        replace only their changed cells (as `ClusterTable.show_nodes`)."""
        self._engines, self._groups = tuple(engines), tuple(groups)
        variables = self.app.get_css_variables()
        styles = {tone: variables.get(name, "") for tone, name in _TONES.items()}
        rows = {engine.name: engine_cells(engine, self._groups) for engine in self._engines}
        if styles == self._styles and list(rows) == list(self._rows) and len(rows) == self.row_count:
            for name, cells in rows.items():
                for column, cell, shown in zip(ENGINE_COLUMNS, cells, self._rows[name], strict=True):
                    if cell != shown:
                        self.update_cell(name, column, _text(column, cell, styles), update_width=True)
            self._rows = rows
            return
        selected = self.selected_engine
        self._styles, self._rows = styles, rows
        self.clear()
        for name, cells in rows.items():
            self.add_row(*(_text(column, cell, styles) for column, cell in zip(ENGINE_COLUMNS, cells, strict=True)), key=name)
        names = list(rows)
        if selected in names:
            self.move_cursor(row=names.index(selected), animate=False)


def _text(column: str, cell: Cell, styles: dict[str, str]) -> Text:
    text = Text(cell.text, style=styles.get(cell.tone, ""))
    if column == ENGINE_COLUMNS[0]:
        text.stylize("bold")
    return text
