"""The node dashboard: header, one row per GPU (observed over predicted), findings, filter."""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Footer, Input, Static

from kvtop.domain.observe import ProcessRole
from kvtop.ui.screens.base import NodeScreen
from kvtop.ui.state import GpuTrend, NodeState
from kvtop.ui.widgets.box import Box
from kvtop.ui.widgets.findings import TITLE as FINDINGS_TITLE
from kvtop.ui.widgets.findings import FindingLike, FindingsPane, finding_tone
from kvtop.ui.widgets.gpu_list import GpuList
from kvtop.ui.widgets.memory_bar import (
    LEGEND_ORDER,
    ORPHAN,
    SERVER,
    WORKER,
    SegmentKind,
    legend,
    observed_segments,
)
from kvtop.ui.widgets.node_header import NodeHeader
from kvtop.ui.widgets.row_parts import GpuRowData
from kvtop.ui.widgets.typed_input import TypedInput


def shows_unsplit_worker(row: GpuRowData) -> bool:
    """Whether the row's observed bar has an "engine worker" segment (a worker no figure splits)."""
    if row.rank is None or row.rank.predicted is not None:
        return False  # no worker, or one its predicted ledger splits
    segments = observed_segments(row.gpu, row.rank)
    return segments is not None and dict(segments).get(WORKER, 0) > 0


def shows_orphan(row: GpuRowData) -> bool:
    """Whether the row's observed bar has an "orphan worker" segment (asked every tick: no bar is built)."""
    return any(p.role is ProcessRole.ORPHAN and p.used_bytes for p in row.gpu.processes)


def shows_server(row: GpuRowData) -> bool:
    """Whether the row's observed bar has an "engine server" segment (an engine server's own memory)."""
    return any(p.role is ProcessRole.ENGINE_SERVER and p.used_bytes for p in row.gpu.processes)


def gpu_rows(state: NodeState) -> list[GpuRowData]:
    snapshot = state.snapshot
    if snapshot is None:
        return []
    tightest = {
        view.tightest_rank.gpu_index
        for view in snapshot.engines
        if view.tightest_rank and len(view.ranks) > 1
    }
    return [
        GpuRowData(
            gpu=gpu,
            rank=snapshot.rank_on_gpu(gpu.index),
            engine=snapshot.engine_of_gpu(gpu.index),
            tightest=gpu.index in tightest,
            trend=state.trends.get(gpu.index, GpuTrend()),
        )  # fmt: skip
        for gpu in snapshot.observation.gpus
    ]


class DashboardScreen(NodeScreen):
    """The first screen; the GPU list has the focus."""

    BLANK = True  # its widgets cover it: drawn as blank lines when a tick repaints (see widgets/box.py)

    _legend_extra: tuple[SegmentKind, ...] = ()  # kinds the legend adds because some row shows them

    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("f", "findings", "Findings"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def compose(self) -> ComposeResult:
        # What is above and below the GPU list sits in two boxes: a tick that repaints GPU rows
        # leaves what is inside them alone (Textual repaints every child of the screen, and
        # within a box only the children whose place overlaps the change).
        with Box(id="top-box"):
            yield NodeHeader(self.interval_s, id="header").data_bind(
                state=NodeScreen.node, now=NodeScreen.now
            )
            yield Static(id="legend")
        yield GpuList(id="gpus")
        yield Static(id="empty")
        with Box(id="findings-box"):
            yield Static(FINDINGS_TITLE, id="findings-title")
            yield FindingsPane(id="findings")
            yield TypedInput(
                placeholder="filter GPUs: index, name, engine, state (Enter keeps, Esc clears)", id="filter"
            )
            yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#filter", Input).display = False
        self.query_one(GpuList).focus()

    def on_resize(self) -> None:
        self.query_one("#legend", Static).update(self._legend())

    def _legend(self) -> Content:
        compact = self.size.width < 100
        head = f"{'GPU':<13}{'engine rank':<11}     "
        kinds = (*LEGEND_ORDER, *self._legend_extra)
        return Content.assemble(
            (head, "bold $text-muted"), legend(compact, kinds), ("│ NVML used │ KV · history", "$text-muted")
        )

    def show_node(self, state: NodeState) -> None:
        rows = gpu_rows(state)
        self.query_one(GpuList).show_rows(rows)
        extra = (
            *((ORPHAN,) if any(shows_orphan(row) for row in rows) else ()),
            *((WORKER,) if any(shows_unsplit_worker(row) for row in rows) else ()),
            *((SERVER,) if any(shows_server(row) for row in rows) else ()),
        )
        if extra != self._legend_extra:
            self._legend_extra = extra
            self.query_one("#legend", Static).update(self._legend())
        self._say_why_empty(state, bool(rows))

    def _say_why_empty(self, state: NodeState, has_rows: bool) -> None:
        """Where the list shows no GPU, one line saying why (no data yet, a failing source, the filter)."""
        gpus = self.query_one(GpuList)
        empty = self.query_one("#empty", Static)
        filtered_out = has_rows and not gpus.shown_gpus
        if empty.display != (not has_rows or filtered_out):
            empty.display = not has_rows or filtered_out
        if filtered_out:
            empty.update(f"no GPU matches {gpus.filter_text!r} (Esc clears the filter)")
        elif not has_rows:
            reason = (
                "no GPUs in this snapshot"
                if state.snapshot is not None
                else f"waiting for {state.source_label}…"
            )
            if state.failure:
                reason = f"source failing: {state.failure}"
            empty.update(reason)

    @property
    def selected_gpu(self) -> int | None:
        """The selected GPU, None when the filter hides it (or there are no GPUs)."""
        gpus = self.query_one(GpuList)
        return gpus.selected if gpus.selected in gpus.shown_gpus else None

    def show_findings(self, findings: Sequence[FindingLike]) -> None:
        self.query_one(FindingsPane).show_findings(findings)

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.display = False
        self.query_one(GpuList).focus()

    def action_findings(self) -> None:
        pane = self.query_one(FindingsPane)
        if pane.has_focus:
            self.query_one(GpuList).focus()
        else:
            pane.focus()

    @on(FindingsPane.Selected)
    def mark_finding_gpus(self, message: FindingsPane.Selected) -> None:
        """The GPUs of the finding being looked at get a coloured edge in the GPU list."""
        finding = message.finding
        gpus = self.query_one(GpuList)
        if finding is None:
            gpus.mark_gpus(())
        else:
            gpus.mark_gpus(finding.gpus, finding_tone(finding))

    @on(Input.Changed, "#filter")
    def apply_filter(self, event: Input.Changed) -> None:
        gpus = self.query_one(GpuList)
        gpus.filter_text = event.value
        self._say_why_empty(self.node, gpus.row_count > 0)

    @on(Input.Submitted, "#filter")
    def keep_filter(self) -> None:
        self.query_one(GpuList).focus()
