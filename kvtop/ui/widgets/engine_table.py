"""The cluster's engines: one row per engine, every node's part joined, read from a frozen `ClusterView`.

```
engine                               layout        tokens per rank   tightest rank   largest cause                            where
SGLang DeepSeek-V3 @10.0.1.10:5000   TP16          498,636 live      h20-b GPU 3     other processes −75,360 (h20-b GPU 3)   h20-a TP0–TP7 (API) · h20-b TP8–TP15
SGLang llama-3-70b (sglang:82000)    TP4 decode    290,943 live      —               decode limits concurrency: 127,825 short pd-decode TP0–TP3
```

The tokens come third, the ranks' placement (the widest cell, up to 55 columns on the demo cluster) last: at
100 columns the engine, its layout and its tokens are on screen.

`engine_cells` turns one engine into tone-tagged text (pure, so the tests read it without a terminal);
`EngineTable` draws the rows keyed by the engine's name. Enter on a row opens the node of its tightest
rank (the cluster screen posts it as a node choice).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from kvtop.domain.capacity import CapacityCause
from kvtop.domain.cluster_engines import DisaggregatedGroup, JoinedEngine
from kvtop.domain.engines.registry import display_name
from kvtop.ui.widgets.cluster_table import NONE, Cell
from kvtop.ui.widgets.keyed_rows import KeyedRowsTable, ToneCell

ENGINE_COLUMNS = ("engine", "layout", "tokens per rank", "tightest rank", "largest cause", "where")


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
    tokens = Cell(NONE, "muted") if actual is None else Cell(f"{actual[0]:,} {_source_word(engine)}")
    cause = Cell(NONE, "muted")
    worst = engine.largest_loss
    if worst is not None:
        cause = Cell(worst.describe(), "error" if worst.cause is not CapacityCause.ENGINE_VS_PREDICTION else "warning")
    finding = next((g.finding for g in groups if engine in g.decode and g.finding is not None), None)
    if finding is not None:
        cause = Cell(f"decode limits concurrency: {finding.tokens_short:,} tokens short", "warning")
    return (
        Cell(engine_label(engine)),
        Cell(f"{first.layout or '?'}{role}"),
        tokens,
        tight,
        cause,
        Cell(where, "warning" if engine.missing_node_ranks or span.not_modelled else ""),
    )


def _source_word(engine: JoinedEngine) -> str | None:
    """The tokens' source in one word: 'metrics' for the engine's own series (its notes line says
    'engine metrics, the engine's own figure'), so the cell fits beside a two-node row at 160 columns."""
    return "metrics" if engine.engine_metrics_only else engine.actual_source


def no_engine_view(engine: JoinedEngine) -> str | None:
    """Why Enter opens no node for `engine` (None: it opens its tightest rank's node): an engine seen only
    through its own /metrics has no GPU series on its nodes for a node view to show."""
    if not engine.engine_metrics_only:
        return None
    return (f"no node view for {engine.name}: its series are the engine's own /metrics, which carry no GPU map "
            "(kvtop export on its nodes gives one)")  # fmt: skip


class EngineTable(KeyedRowsTable):
    """Engines as rows keyed by name; the cursor stays on its engine across refreshes."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._engines: tuple[JoinedEngine, ...] = ()
        self._groups: tuple[DisaggregatedGroup, ...] = ()

    def on_mount(self) -> None:
        for column in ENGINE_COLUMNS:
            self.add_column(column, key=column)
        self.watch(self.app, "theme", lambda: self.show_engines(self._engines, self._groups), init=False)

    @property
    def selected_engine(self) -> str | None:
        return self.selected_key

    def engine_named(self, name: str | None) -> JoinedEngine | None:
        return next((e for e in self._engines if e.name == name), None)

    def show_engines(self, engines: Sequence[JoinedEngine], groups: Sequence[DisaggregatedGroup] = ()) -> None:
        """Show the engines, keeping the cursor on the same engine; the same engines in the same order
        replace only their changed cells (`KeyedRowsTable`)."""
        self._engines, self._groups = tuple(engines), tuple(groups)
        self.show_rows({engine.name: engine_cells(engine, self._groups) for engine in self._engines}, ENGINE_COLUMNS, _text)


def _text(column: str, cell: ToneCell, styles: dict[str, str]) -> Text:
    text = Text(cell.text, style=styles.get(cell.tone, ""))
    if column == ENGINE_COLUMNS[0]:
        text.stylize("bold")
    return text
