"""The cluster view: every node worst-first, every engine with its parts on every node; Enter opens one
node's dashboard (read-only).

`ClusterScreen` mirrors the app's `cluster` state (a `ClusterState`); choosing a node row posts
`NodeChosen`, and so does choosing an engine row, for the node of its tightest rank. The app pushes a
`ClusterNodeScreen`, the local dashboard fed by that node's Prometheus series, where Esc comes back
(after clearing a filter, as on the local dashboard). `e` and `n` move between the two tables.
"""

from __future__ import annotations

from dataclasses import replace

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from kvtop.domain.cluster import rank_nodes
from kvtop.gc_pause import collector_paused
from kvtop.ui.freshness import Wording
from kvtop.ui.freshness import freshness as shared_freshness
from kvtop.ui.screens.dashboard import DashboardScreen
from kvtop.ui.widgets.cluster_table import ClusterState, ClusterTable, no_node_view
from kvtop.ui.widgets.engine_table import EngineTable, no_engine_view
from kvtop.ui.widgets.footer import Footer

_WORDING = Wording(silent="prometheus has not answered", first="the first answer")
#: A cluster whose every node is a demo (`kvtop --demo-cluster`) is never "live", as a demo node is not.
_DEMO_WORDING = replace(_WORDING, fresh="simulated")


def freshness(state: ClusterState, now: float, interval_s: float) -> Content:
    """'● live · every 5 s' ('● simulated · …' when every node is a demo), '▲ STALE · prometheus unreachable: … ·
    showing data 12 s old', or waiting."""
    view = state.view
    demo = view is not None and view.simulated
    return shared_freshness(state.age_s(now), state.failure_said, interval_s, _DEMO_WORDING if demo else _WORDING)


def header_text(state: ClusterState, now: float, interval_s: float) -> Content:
    view = state.view
    source = view.prometheus_url if view else state.source_label
    parts: list[str | tuple[str, str] | Content] = [("kvtop cluster", "bold $primary"), f" │ {source} │ "]
    if view is not None:
        not_up = view.nodes_not_up
        simulated = view.nodes_simulated
        parts += [
            f"{len(view.nodes)} nodes",
            # a mixed cluster stays "live" for its real nodes and says how many are demos (each row says which)
            (f" ({simulated} simulated)" if 0 < simulated < len(view.nodes) else "", "bold $warning"),
            (f" · {not_up} not up" if not_up else " · all up", "bold $error" if not_up else "$success"),
            " │ ",
        ]
    parts.append(freshness(state, now, interval_s))
    return Content.assemble(*parts)


class ClusterScreen(Screen[None]):
    """The node list; the app assigns `cluster` on every message and `now` on every tick."""

    DEFAULT_CSS = """
    #cluster-header { height: auto; padding: 0 1; background: $panel; }
    #cluster-table { height: 1fr; }
    #engine-table { height: auto; max-height: 12; border-top: solid $panel-lighten-2; }
    #cluster-empty { height: 1fr; content-align: center middle; color: $text-muted; }
    #cluster-notes { height: auto; max-height: 6; padding: 0 1; background: $panel; color: $text-muted; }
    """

    BINDINGS = [
        Binding("e", "focus_engines", "Engines"),
        Binding("n", "focus_nodes", "Nodes"),
    ]

    cluster: reactive[ClusterState] = reactive(ClusterState(source_label=""), repaint=False)
    now: reactive[float] = reactive(0.0, repaint=False)

    class NodeChosen(Message):
        """The operator asked for one node's dashboard."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, state: ClusterState, now: float, interval_s: float) -> None:
        super().__init__()
        self.interval_s = interval_s
        self.set_reactive(ClusterScreen.cluster, state)
        self.set_reactive(ClusterScreen.now, now)

    def compose(self) -> ComposeResult:
        yield Static(id="cluster-header")
        yield ClusterTable(id="cluster-table")
        yield EngineTable(id="engine-table")
        yield Static(id="cluster-empty")
        yield Static(id="cluster-notes")
        yield Footer()

    def on_mount(self) -> None:
        self.show_cluster(self.cluster)
        self.query_one(ClusterTable).focus()

    def watch_cluster(self, state: ClusterState) -> None:
        if self.is_mounted:  # before mount, `on_mount` draws what is set by then
            self.show_cluster(state)

    def watch_now(self) -> None:
        if self.is_mounted:  # the clock may tick between the screen's push and its compose (a loaded machine)
            self._show_header()

    def _show_header(self) -> None:
        self.query_one("#cluster-header", Static).update(header_text(self.cluster, self.now, self.interval_s))

    def show_cluster(self, state: ClusterState) -> None:
        with collector_paused():  # a row per node: thousands of acyclic values (kvtop/gc_pause.py)
            self._show_cluster(state)

    def _show_cluster(self, state: ClusterState) -> None:
        self._show_header()
        table = self.query_one(ClusterTable)
        nodes = rank_nodes(state.view.nodes) if state.view else ()
        table.show_nodes(nodes)
        table.display = bool(nodes)
        engines = self.query_one(EngineTable)
        engines.show_engines(state.view.engines if state.view else (), state.view.disaggregated if state.view else ())
        engines.display = bool(engines.row_count)
        empty = self.query_one("#cluster-empty", Static)
        empty.display = not nodes
        if state.failure_said is not None and state.view is None:
            empty.update(Content(state.failure_said))
        elif state.view is not None:
            empty.update("Prometheus lists no node: no kvtop, DCGM or engine series, no target down")
        else:
            empty.update(Content(f"waiting for {state.source_label}…"))
        if self.query_one(EngineTable).has_focus:
            self._show_engine_notes(self.query_one(EngineTable).selected_engine)
        else:
            self._show_notes(table.selected_node)

    def _show_notes(self, name: str | None) -> None:
        node = self.query_one(ClusterTable).node_named(name)
        notes = self.query_one("#cluster-notes", Static)
        notes.display = node is not None
        if node is not None:
            lines = [
                f"{node.name}: " + (" · ".join(node.notes) if node.notes else "no notes"),
                no_node_view(node) or "Enter: its dashboard",
            ]
            notes.update(Content("\n").join(Content(line) for line in lines))

    def _show_engine_notes(self, name: str | None) -> None:
        engine = self.query_one(EngineTable).engine_named(name)
        notes = self.query_one("#cluster-notes", Static)
        notes.display = engine is not None
        if engine is None:
            return
        lines = [f"{engine.name}: {engine.describe_waterfall()}"]
        if engine.span.not_modelled:
            lines.append(f"not joined across nodes: {engine.span.not_modelled}")
        groups = self.cluster.view.disaggregated if self.cluster.view else ()
        for group in groups:
            if engine in (*group.prefill, *group.decode):
                transfer = " / ".join(group.transfer) or "no transfer path named"
                lines.append(f"{group.served_model}: prefill {len(group.prefill)} · decode {len(group.decode)} · KV over {transfer}")
                if group.finding is not None:
                    lines.append(f"decode_pool_limits_concurrency: {group.finding.message}")
        why_not = no_engine_view(engine)
        lines.append(why_not or f"Enter: the dashboard of {self._node_of(engine.name) or '?'} (its tightest rank's node)")
        notes.update(Content("\n").join(Content(line) for line in lines))

    def _node_of(self, engine_name: str | None) -> str | None:
        engine = self.query_one(EngineTable).engine_named(engine_name)
        if engine is None:
            return None
        tightest = engine.tightest
        return tightest.node if tightest is not None else engine.pieces[0].node

    def action_focus_engines(self) -> None:
        table = self.query_one(EngineTable)
        if table.display:
            table.focus()
            self._show_engine_notes(table.selected_engine)

    def action_focus_nodes(self) -> None:
        table = self.query_one(ClusterTable)
        table.focus()
        self._show_notes(table.selected_node)

    @on(DataTable.RowHighlighted, "#engine-table")
    def _engine_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.query_one(EngineTable).has_focus:  # a refresh re-highlights rows of an unfocused table too
            self._show_engine_notes(event.row_key.value)

    @on(DataTable.RowSelected, "#engine-table")
    def _engine_selected(self, event: DataTable.RowSelected) -> None:
        engine = self.query_one(EngineTable).engine_named(event.row_key.value)
        why_not = no_engine_view(engine) if engine is not None else None
        if why_not is not None:  # opening it would show a source failing for want of GPU series
            self.notify(why_not, timeout=6)
            return
        node = self._node_of(event.row_key.value)
        if node is not None:
            self.post_message(self.NodeChosen(node))

    @property
    def selected_node(self) -> str | None:
        return self.query_one(ClusterTable).selected_node

    @on(DataTable.RowHighlighted, "#cluster-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not self.query_one(EngineTable).has_focus:
            self._show_notes(event.row_key.value)

    @on(DataTable.RowSelected, "#cluster-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        node = self.query_one(ClusterTable).node_named(event.row_key.value)
        why_not = no_node_view(node) if node is not None else None
        if why_not is not None:
            self.notify(why_not, timeout=6)
        elif event.row_key.value is not None:
            self.post_message(self.NodeChosen(event.row_key.value))


class ClusterNodeScreen(DashboardScreen):
    """One node's dashboard inside the cluster view; Esc clears a filter, else goes back."""

    BINDINGS = [Binding("escape", "back", "Cluster")]

    class Closed(Message):
        """The operator went back to the node list."""

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.display or box.value:
            self.action_clear_filter()
        else:
            self.post_message(self.Closed())
