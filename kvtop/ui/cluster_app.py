"""ClusterApp: `kvtop --prometheus URL`, every node worst-first, and one node's dashboard on Enter.

It receives its reader (a `ClusterReaderPort`), a factory of per-node snapshot sources and a
model loader; it never imports a concrete source. One thread worker reads the cluster every
interval and posts the frozen view (or why the read failed); while a node is open, a second
worker streams that node's snapshots into the same dashboard the local view uses. Read-only:
no probe; Enter on a GPU offers no rank ledger (its ledger stays on the node: `wording.LEDGER_ON_NODE`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive

from kvtop.domain.cluster import ClusterFailure, ClusterView, PrometheusError
from kvtop.domain.cluster_findings import ExportedCounts
from kvtop.domain.cluster_node_engines import with_cluster_engines
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.node_failure import NodeFailure
from kvtop.domain.ports import ClusterReaderPort, ModelLoader, SnapshotSource
from kvtop.domain.wording import LEDGER_ON_NODE
from kvtop.ui.base_app import KvtopBaseApp
from kvtop.ui.freshness import reading
from kvtop.ui.keys import CLUSTER_KEYS, CLUSTER_SECTIONS
from kvtop.ui.polling import diagnose_quietly, failure_reason, poll
from kvtop.ui.screens.base import NodeScreen
from kvtop.ui.screens.cluster import ClusterNodeScreen, ClusterScreen
from kvtop.ui.screens.help import HelpScreen, help_text
from kvtop.ui.state import GpuHistory, NodeState
from kvtop.ui.widgets.cluster_table import ClusterState
from kvtop.ui.widgets.findings import FindingsPane
from kvtop.ui.widgets.gpu_list import GpuList

NodeSourceFactory = Callable[[str], SnapshotSource]


class ClusterArrived(Message):
    """A fresh, frozen view of the cluster; only the newest one matters."""

    def __init__(self, view: ClusterView) -> None:
        super().__init__()
        self.view = view

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ClusterArrived)


class ClusterFailed(Message):
    """The reader raised instead of answering; the UI keeps the last good view."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        state = error.state if isinstance(error, PrometheusError) else None  # Prometheus's named failure, typed
        self.failure = ClusterFailure(failure_reason(error), state)


class NodeArrived(Message):
    """A snapshot of the open node; `generation` tells a late message of a closed node apart.

    `findings` is None when the snapshot has no prediction to diagnose against."""

    def __init__(self, generation: int, snapshot: NodeSnapshot, findings: tuple[object, ...] | None) -> None:
        super().__init__()
        self.generation = generation
        self.snapshot = snapshot
        self.findings = findings


class NodeFailed(Message):
    def __init__(self, generation: int, reason: str) -> None:
        super().__init__()
        self.generation = generation
        self.reason = reason


class LatestView:
    """The cluster view handed to the open node's worker: the app sets each view it receives (on its own thread),
    the worker takes the latest at each read. Threads never read the app's reactive state (docs/design.md)."""

    def __init__(self, view: ClusterView | None) -> None:
        self._lock = threading.Lock()
        self._view = view

    def set(self, view: ClusterView | None) -> None:
        with self._lock:
            self._view = view

    def get(self) -> ClusterView | None:
        with self._lock:
            return self._view


class ClusterApp(KvtopBaseApp):
    TITLE = "kvtop cluster"
    BINDINGS = [
        Binding("q", "quit_unless_typing", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("t", "next_theme", "Next theme"),
        Binding("r", "refresh", "Refresh"),
        # the node TUI's planner key, answered here rather than ignored (the cluster view only reads)
        Binding("p", "no_planner_key", "Planner", show=False),
    ]

    cluster: reactive[ClusterState] = reactive(ClusterState(source_label=""), init=False, repaint=False)
    node: reactive[NodeState] = reactive(NodeState(source_label=""), init=False, repaint=False)

    def __init__(self, reader: ClusterReaderPort, node_source_factory: NodeSourceFactory, model_loader: ModelLoader,
                 *, theme: str | None = None, interval_s: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 label: str = "prometheus", themes_dir: Path | None = None) -> None:  # fmt: skip
        super().__init__(theme=theme, interval_s=interval_s, clock=clock, themes_dir=themes_dir)
        self._reader = reader
        self._node_source_factory = node_source_factory
        self.model_loader = model_loader  # kept for a planner: Prometheus carries no launch settings yet
        self._reading = threading.Event()
        self._node_collecting = threading.Event()
        self._node_name: str | None = None
        self._node_generation = 0
        self._node_screen: ClusterNodeScreen | None = None
        self._node_view = LatestView(None)  # the open node's worker's cluster view (`LatestView`)
        self._history = GpuHistory()
        self.set_reactive(ClusterApp.cluster, ClusterState(source_label=label))
        self.cluster_screen = ClusterScreen(self.cluster, self.now, interval_s)

    def get_default_screen(self) -> ClusterScreen:
        return self.cluster_screen

    def on_mount(self) -> None:
        self.stream_cluster()
        self.set_interval(1.0, self._tick)

    @work(thread=True, exclusive=True, group="cluster", exit_on_error=False)
    def stream_cluster(self) -> None:
        """The one long-lived worker of the reader: read, post, wait an interval (or cancellation)."""
        poll(
            self, lambda: ClusterArrived(self._reader.read()), ClusterFailed, self._reading, self._interval_s
        )

    @work(thread=True, exclusive=True, group="node", exit_on_error=False)
    def stream_node(self, name: str, generation: int, views: LatestView) -> None:
        """The open node's worker: build its source, then collect, diagnose, post, wait. `views` hands it the
        cluster views the app receives (it reads nothing of the app's state)."""
        source: SnapshotSource | None = None  # built by the first read, so its failure is shown too
        factory = self._node_source_factory

        def read() -> NodeArrived:
            nonlocal source
            source = source or factory(name)
            # the engines on the node are the cluster join's answer, as the engine table has them
            snapshot = with_cluster_engines(source.collect(), views.get(), name)
            findings = diagnose_quietly(snapshot) if any(e.ledger for e in snapshot.engines) else None
            return NodeArrived(generation, snapshot, findings)

        poll(
            self, read, lambda err: NodeFailed(generation, failure_reason(err)), self._node_collecting, self._interval_s
        )

    @on(ClusterArrived)
    def show_cluster(self, message: ClusterArrived) -> None:
        # `now` stays, as in the node app: fresh data reads "live" at any earlier clock
        self.cluster = ClusterState(
            source_label=self.cluster.source_label, view=message.view, received_at=self._clock()
        )
        self._node_view.set(message.view)

    @on(ClusterFailed)
    def show_cluster_failure(self, message: ClusterFailed) -> None:
        self.cluster = replace(self.cluster, failure=message.failure, failed_at=self._clock())

    @on(NodeArrived)
    def show_node(self, message: NodeArrived) -> None:
        if message.generation != self._node_generation or self._node_screen is None:
            return  # a late answer for a node no longer open
        self._history.record(message.snapshot)
        exported = None
        if message.findings is None:  # nothing to diagnose against here: what the node's exporter counted
            view, name = self.cluster.view, self._node_name or ""
            exported = ExportedCounts.of(name, next((n for n in view.nodes if n.name == name), None) if view else None)
        self.node = NodeState(
            source_label=self.node.source_label, snapshot=message.snapshot, received_at=self._clock(),
            trends=self._history.view(), findings=tuple(message.findings or ()),  # type: ignore[arg-type]
            exported=exported,
        )  # fmt: skip
        # the header's sentence and the pane read the same counts (`ExportedCounts`)
        findings = message.findings if exported is None else exported.entries()
        self._node_screen.show_findings(findings)  # type: ignore[arg-type]

    @on(NodeFailed)
    def show_node_failure(self, message: NodeFailed) -> None:
        if message.generation == self._node_generation:
            self.node = replace(self.node, failure=NodeFailure(message.reason), failed_at=self._clock())

    def watch_cluster(self, state: ClusterState) -> None:
        self.cluster_screen.cluster = state

    def watch_node(self, state: NodeState) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, NodeScreen):
                screen.node = state

    def freshness_reading(self, now: float) -> object:
        cluster = reading(self.cluster.age_s(now), self.cluster.failure_said, self._interval_s)
        if self._node_screen is None:
            return cluster
        return cluster, reading(self.node.age_s(now), self.node.failure_said, self._interval_s)

    def watch_now(self, now: float) -> None:
        self.cluster_screen.now = now
        for screen in self.screen_stack:
            if isinstance(screen, NodeScreen):
                screen.now = now

    @on(ClusterScreen.NodeChosen)
    def open_node(self, message: ClusterScreen.NodeChosen) -> None:
        """Push the node's dashboard and start its worker."""
        self._node_generation += 1
        self._node_name = message.name
        self._history = GpuHistory()
        self.node = NodeState(source_label=f"{message.name} through {self.cluster.source_label}")
        self._node_screen = ClusterNodeScreen(self.node, self.now, self._interval_s)
        self.push_screen(self._node_screen)
        self._node_view = LatestView(self.cluster.view)
        self.stream_node(message.name, self._node_generation, self._node_view)

    @on(ClusterNodeScreen.Closed)
    def close_node(self) -> None:
        """Back to the node list: the node's worker stops, its late answers are dropped."""
        self._node_generation += 1
        self._node_name = None
        self.workers.cancel_group(self, "node")
        if self.screen is self._node_screen:
            self.pop_screen()
        self._node_screen = None

    @on(GpuList.Opened)
    def no_ledger(self) -> None:
        self.notify(
            f"no rank ledger here: {LEDGER_ON_NODE} (Prometheus carries its figures only); run kvtop on the node to see it",
            timeout=4,
        )

    @on(FindingsPane.FixChosen)
    def no_planner(self, message: FindingsPane.FixChosen) -> None:
        self.notify(f"no planner here: run kvtop on the node to plan {message.finding.fix!r}", timeout=4)

    def action_no_planner_key(self) -> None:
        where = f"kvtop on {self._node_name}" if self._node_name else "kvtop on a node"
        self.notify(f"no planner here (the cluster view only reads): run {where} to plan", timeout=4)

    @on(FindingsPane.ProcessesChosen)
    def no_processes(self, message: FindingsPane.ProcessesChosen) -> None:
        self.notify(
            f"no process panel here (read-only): run kvtop on the node to {message.finding.fix}", timeout=4
        )

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            note = "The cluster view only reads: run kvtop on a node to plan, probe or signal there."
            self.push_screen(HelpScreen(True, help_text(True, CLUSTER_KEYS, CLUSTER_SECTIONS, note)))

    def action_refresh(self) -> None:
        """Read now: restart the workers unless a read is already under way."""
        if self._reading.is_set() or self._node_collecting.is_set():
            self.notify("a refresh is already under way", timeout=2)
            return
        self.stream_cluster()
        if self._node_name is not None:
            self.stream_node(self._node_name, self._node_generation, self._node_view)
