"""The cluster's node list: one row per node, worst first, read from a frozen `ClusterView`.

```
node         health       tokens per rank now / clean     findings              engine        unexplained  GPUs  used / total GiB
10.0.0.3     ▼ down 4 s   —                               —                     —             —               —  —
node-b       ● up 5 s     1,127,125 / 1,255,785 (−10.2%)  1 warning · 2 advice  sglang:4242   -55.27 GiB      8  633.9 / 637.2 GiB
node-c       ● up 5 s     …
```

The tokens come third and the findings fourth, before the wider cells: at 100 columns the node, its health,
its tokens and its findings are on screen whole (the demo cluster's widest, 23 + 10 + 38 + 23 = 94 columns with
padding), the engine the tokens are of (also in the engine list below) and the rest a horizontal scroll away.
Where the table fits the width without the engine column, that column gives way (`shown_columns`): at 160 columns
the demo's last cell was cut mid-number.
A shortfall under 0.05 % is stated in tokens ('(−464 tokens)'): '(−0.0%)' would say nothing
(`ClusterEngine.shortfall_said`, which `kvtop cluster` text reads too).

Tokens are per rank of one engine, never summed across engines (a rank of another model holds
tokens of another size): the cell shows the engine missing the largest share of its clean capacity.

`ClusterState` is what the screen shows; `node_cells` turns one node into tone-tagged text
(pure, so the tests read it without a terminal); `ClusterTable` draws them in a DataTable whose
colours come from the app's theme.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from rich.cells import cell_len
from rich.text import Text

from kvtop.domain.cluster import (
    ClusterFailure,
    ClusterNode,
    ClusterView,
    TargetHealth,
)
from kvtop.domain.cluster_findings import ExportedCounts, has_kvtop
from kvtop.domain.diagnose_findings import Severity
from kvtop.ui.widgets.keyed_rows import KeyedRowsTable, ToneCell
from kvtop.units import fmt_gib, fmt_gib_figure, fmt_tokens

COLUMNS = ("node", "health", "tokens per rank now / clean", "findings", "engine", "unexplained", "GPUs", "used / total")
_RIGHT = {"GPUs", "used / total", "unexplained"}
NONE = "—"
#: A findings cell's tone by the worst fault counted (None: no fault, advice aside).
_TONE = {Severity.CRITICAL: "error", Severity.WARNING: "warning", None: "success"}


@dataclass(frozen=True)
class ClusterState:
    """The cluster as the UI knows it now: the last good view, when it came, and the last failure."""

    source_label: str
    view: ClusterView | None = None
    received_at: float | None = None  # app clock when the view arrived
    failure: ClusterFailure | None = None  # why the latest read failed (None: it answered)
    failed_at: float | None = None

    def age_s(self, now: float) -> float | None:
        return None if self.received_at is None else max(0.0, now - self.received_at)

    @property
    def failure_said(self) -> str | None:
        """The latest failure as every view shows it ('prometheus unreachable: …'; None while it answers)."""
        return None if self.failure is None else self.failure.said


class Cell(NamedTuple):
    """One cell's text and tone (`error`, `warning`, `success`, `muted` or plain); a named tuple, as a
    1,000-node refresh builds 10,500 of them (a frozen dataclass took 4× longer to build)."""

    text: str
    tone: str = ""


def _age(seconds: float | None) -> str:
    return "" if seconds is None else f" {seconds:.0f} s"


def health_cell(node: ClusterNode) -> Cell:
    """'▼ down 4 s', '▲ stale 300 s', '● up 5 s': the worst target and the oldest sample's age."""
    age, health = _age(node.age_seconds), node.health
    if health is TargetHealth.DOWN:
        return Cell(f"▼ down{age}", "error")
    if health is TargetHealth.INVALID:
        return Cell(f"✗ invalid{age}", "error")
    if health is TargetHealth.STALE:
        return Cell(f"▲ stale{age}", "warning")
    return Cell(f"● up{age}", "success")


def memory_cell(node: ClusterNode) -> Cell:
    """Used over total GiB, summed over the GPUs that report both (`NodeGpus`)."""
    gpus = node.gpu_summary
    if gpus is None or gpus.used_bytes is None or gpus.total_bytes is None:
        return Cell(NONE, "muted")
    return Cell(f"{fmt_gib_figure(gpus.used_bytes, 1)} / {fmt_gib(gpus.total_bytes, 1)}")


def unexplained_cell(node: ClusterNode) -> Cell:
    value = node.unexplained_bytes
    if value is None:
        return Cell(NONE, "muted")
    return Cell(("+" if value > 0 else "") + fmt_gib(value), "warning" if value > 0 else "")


def findings_cell(node: ClusterNode) -> Cell:
    """'1 error · 2 warning', 'none', or '—' without kvtop's exporter; words and severity from `ExportedCounts`."""
    exported = ExportedCounts.of(node.name, node)
    if exported.counts is None:
        return Cell(NONE, "muted")
    return Cell(exported.cell(), _TONE[exported.worst])


def engine_cell(node: ClusterNode) -> Cell:
    """The engine whose tokens the tokens cell shows, 'sglang:4242 (+1 engine)' when the node runs more."""
    engine = node.worst_engine
    if engine is None or engine.now_token_capacity is None:
        return Cell(NONE, "muted")
    more = len(node.engines) - 1
    return Cell(engine.engine + (f" (+{more} engine{'s' if more > 1 else ''})" if more > 0 else ""))


def capacity_cell(node: ClusterNode) -> Cell:
    """The worst engine's tokens per rank now over its clean prediction and the share missing (engines are
    never summed: their ranks hold tokens of different sizes; `engine_cell` names the engine)."""
    engine = node.worst_engine
    if engine is None or engine.now_token_capacity is None:
        return Cell(NONE, "muted")
    now = fmt_tokens(engine.now_token_capacity)
    # "now" is the engine's figure where the node reports one, else kvtop's prediction (a multi-node engine's
    # second node): the cell says which, never a prediction as if it were live
    live = engine.live_token_capacity is not None
    said = "engine metrics" if engine.from_engine_metrics else "live" if live else "predicted"
    if engine.clean_token_capacity is None:
        return Cell(f"{now} {said}")
    text = f"{now}{' predicted' if said == 'predicted' else ''} / {fmt_tokens(engine.clean_token_capacity)}"
    share = engine.shortfall_said  # '−13.8%', '−464 tokens': the domain's one spelling (`kvtop cluster` reads it too)
    return Cell(f"{text} ({share})", "warning") if share is not None else Cell(text)


def no_node_view(node: ClusterNode) -> str | None:
    """Why Enter opens no dashboard for `node` (None: it opens one): a node seen only through its engines'
    own /metrics has no GPU series for a node view to show."""
    if node.gpu_summary is not None or has_kvtop(node) or not node.engines:
        return None
    if not all(engine.from_engine_metrics for engine in node.engines):
        return None
    return (f"no node view for {node.name}: its only series are its engines' own /metrics, which carry no GPU map "
            "(kvtop export or DCGM on it gives one)")  # fmt: skip


def gpus_cell(node: ClusterNode) -> Cell:
    """'8', or '8 (1 lost)' when kvtop's exporter reports a GPU lost or failing."""
    gpus = node.gpu_summary
    if gpus is None or not gpus.count:
        return Cell(NONE, "muted")
    if gpus.lost:
        return Cell(f"{gpus.count} ({gpus.lost} lost)", "error")
    return Cell(str(gpus.count))


def node_cells(node: ClusterNode) -> tuple[Cell, ...]:
    """The row of one node, in COLUMNS order."""
    return (
        Cell(f"{node.name} (demo)", "warning") if node.demo_scenario is not None else Cell(node.name),
        health_cell(node),
        capacity_cell(node),
        findings_cell(node),
        engine_cell(node),
        unexplained_cell(node),
        gpus_cell(node),
        memory_cell(node),
    )


class ClusterTable(KeyedRowsTable):
    """Nodes as rows keyed by name; the cursor stays on its node across refreshes."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cluster_nodes: tuple[ClusterNode, ...] = ()
        self._columns: tuple[str, ...] = ()  # the columns drawn (`shown_columns`)

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda: self.show_nodes(self._cluster_nodes), init=False)

    def on_resize(self) -> None:
        """The columns follow the width (`shown_columns`)."""
        self.show_nodes(self._cluster_nodes)

    @property
    def selected_node(self) -> str | None:
        """The name of the node under the cursor."""
        return self.selected_key

    def node_named(self, name: str | None) -> ClusterNode | None:
        return next((n for n in self._cluster_nodes if n.name == name), None)

    def show_nodes(self, nodes: Sequence[ClusterNode]) -> None:
        """Show the nodes (in the order given), keeping the cursor on the same node; only changed cells are
        replaced when the rows are the same nodes in the same order (`KeyedRowsTable`)."""
        self._cluster_nodes = tuple(nodes)
        cells = {node.name: node_cells(node) for node in self._cluster_nodes}
        width = self.scrollable_content_region.width or self.app.size.width
        columns = shown_columns(cells.values(), width, self.cell_padding)
        if columns != self._columns:  # a column gone or back: the table is rebuilt, the cursor kept on its node
            selected = self.selected_key
            self.set_columns(columns)
            self._columns = columns
            self.show_rows(_only(cells, columns), columns, _text)
            names = list(cells)
            if selected in names:
                self.move_cursor(row=names.index(selected), animate=False)
            return
        self.show_rows(_only(cells, columns), columns, _text)


#: The column that gives way first where the table does not fit: the engine list below names every engine.
GIVES_WAY = "engine"


def shown_columns(rows: Iterable[Sequence[Cell]], width: int, padding: int = 1) -> tuple[str, ...]:
    """COLUMNS, less `GIVES_WAY` where the table is wider than `width` and fits without it: at 160 columns the demo
    cluster's last cell was cut mid-number ('462.3 / 557.', session 67's walk). A table wider still keeps every
    column and scrolls sideways (at 100 columns the node, health, tokens and findings are whole)."""
    widths = [len(column) + 2 * padding for column in COLUMNS]
    for row in rows:
        widths = [max(w, cell_len(cell.text) + 2 * padding) for w, cell in zip(widths, row, strict=True)]
    total, gives = sum(widths), widths[COLUMNS.index(GIVES_WAY)]
    if total > width >= total - gives:
        return tuple(column for column in COLUMNS if column != GIVES_WAY)
    return COLUMNS


def _only(rows: dict[str, tuple[Cell, ...]], columns: Sequence[str]) -> dict[str, tuple[Cell, ...]]:
    """Each row's cells of `columns` alone."""
    if len(columns) == len(COLUMNS):
        return rows
    keep = [COLUMNS.index(column) for column in columns]
    return {name: tuple(cells[i] for i in keep) for name, cells in rows.items()}


def _text(column: str, cell: ToneCell, styles: dict[str, str]) -> Text:
    text = Text(cell.text, style=styles.get(cell.tone, ""), justify="right" if column in _RIGHT else "left")
    if column == COLUMNS[0]:
        text.stylize("bold")
    return text
