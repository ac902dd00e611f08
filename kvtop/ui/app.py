"""KvtopApp: receives its source and model loader, streams snapshots in one thread worker, routes keys.

The worker posts frozen snapshots (or the reason collect() failed) as messages; the handlers
replace the app's `node` state, which every node screen mirrors. Nothing here does I/O on the
event loop, so a slow or failing source never freezes a keypress.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive

from kvtop.domain.calibration.node import NodeMeasure
from kvtop.domain.host_tier_fit import host_origin
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.node import EngineView
from kvtop.domain.node_failure import NodeFailure
from kvtop.domain.ports import (
    ModelLoader,
    PreferencesStore,
    SignalOutcome,
    SignalRequest,
    SignalSender,
    SignalState,
    SnapshotSource,
)
from kvtop.domain.preferences import Preferences
from kvtop.domain.probe import ProbeResult
from kvtop.ui.attention import worst_gpu
from kvtop.ui.base_app import KvtopBaseApp
from kvtop.ui.freshness import reading
from kvtop.ui.messages import SnapshotArrived, SourceFailed
from kvtop.ui.polling import diagnose_quietly, failure_reason, poll
from kvtop.ui.process_rows import gpus_of_pid
from kvtop.ui.screens.base import NodeScreen
from kvtop.ui.screens.dashboard import DashboardScreen, PreferencesChanged
from kvtop.ui.screens.engines import EngineTreeScreen
from kvtop.ui.screens.help import HelpScreen
from kvtop.ui.screens.ledger import RankLedgerScreen
from kvtop.ui.screens.planner import PlannerScreen
from kvtop.ui.screens.planner_basis import PlanBasis, PlannerDraft
from kvtop.ui.screens.probe import ProbeFinished, ProbeRunner, ProbeScreen
from kvtop.ui.screens.probe_confirm import NO_SNAPSHOT_YET, PlannedLaunch, ProbePlan, plan_probe
from kvtop.ui.screens.processes import ProcessScreen, SignalRequested
from kvtop.ui.state import GpuHistory, NodeState
from kvtop.ui.widgets.findings import FindingLike, FindingsPane
from kvtop.ui.widgets.gpu_list import GpuList


def _no_plan_reason(view: EngineView | None) -> str:
    """Why `p` opens no planner, and what the operator can do instead: an engine whose launch settings are not read
    here (Prometheus exports its figures, not its command line; a command line kvtop could not parse) is planned on
    its node or from its flags; one whose settings are read but whose model is not resolved, by why not."""
    if view is None:
        return "no engine with known settings on this node to plan from"
    engine = view.engine
    if engine.settings is None:
        reason = view.ledger_error or engine.settings_message or "its command line could not be read"
        on_node = f"run kvtop on {engine.host}, or " if view.exported is not None else ""  # the reason says the ledger's there
        model = engine.model or "<its model>"
        return (f"no plan for {engine.engine_id} here: its launch settings are not known ({reason}); {on_node}plan "
                f"the launch with `kvtop plan --engine {engine.kind} --model {model} -- <its engine flags>`")  # fmt: skip
    # settings read, no ledger (`_plan_basis`' only other None): no plan without a model, said which and why
    return f"no plan for {engine.engine_id} without a model: {view.ledger_error or 'its model could not be resolved'}"


class SignalAnswered(Message):
    """The signal sender's answer (posted by its worker thread)."""

    def __init__(self, outcome: SignalOutcome) -> None:
        super().__init__()
        self.outcome = outcome


class KvtopApp(KvtopBaseApp):
    TITLE = "kvtop"
    BINDINGS = [
        Binding("q", "quit_unless_typing", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("p", "planner", "Planner"),
        Binding("P", "probe", "Probe"),
        Binding("x", "processes", "Processes"),
        Binding("X", "node_processes", "All processes", show=False, tooltip="every GPU's processes in one table"),
        Binding("g", "engine_tree", "Tree", tooltip="engines → processes → ranks"),
        # in the help, the command palette and the footer of a wide terminal's … menu: not in the footer
        Binding("z", "pause", "Pause", show=False),
        Binding("t", "next_theme", "Next theme", show=False),
        Binding("r", "refresh", "Refresh", show=False),
    ]

    node: reactive[NodeState] = reactive(NodeState(source_label=""), init=False, repaint=False)

    def __init__(
        self,
        source: SnapshotSource,
        model_loader: ModelLoader,
        *,
        theme: str | None = None,
        read_only: bool = False,
        interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        themes_dir: Path | None = None,
        probe_runner: ProbeRunner | None = None,
        probe_simulated: bool = False,
        probe_unavailable: str | None = None,
        signal_sender: SignalSender | None = None,
        preferences: Preferences | None = None,
        preferences_store: PreferencesStore | None = None,
        node_measures: tuple[NodeMeasure, ...] = (),
        startup_notice: str | None = None,
    ) -> None:
        super().__init__(theme=theme, interval_s=interval_s, clock=clock, themes_dir=themes_dir)
        # said once the screen is up (e.g. a calibration store with unreadable lines): a line printed before the
        # app starts is hidden behind its screen until the operator quits
        self._startup_notice = startup_notice
        self.preferences = preferences or Preferences()  # what the operator chose, kept by the store
        self._preferences_store = preferences_store
        self._node_measures = node_measures  # this node's earlier starts, for the planner (calibration store)
        self._source = source
        self._signal_sender = None if read_only else signal_sender
        self._held: NodeState | None = None  # the newest state while the screen is paused
        self._model_loader = model_loader
        self._read_only = read_only
        self._history = GpuHistory()
        self._collecting = threading.Event()
        self._probe_runner = None if read_only else probe_runner
        self._probe_simulated = probe_simulated  # a demo node: probe on the CPU within the GPU's free memory
        self._probe_unavailable = probe_unavailable  # why no probe can run here (torch missing)
        self._probe_cancel: threading.Event | None = None  # the latest probe's; set on exit
        self.probe_results: dict[int, ProbeResult] = {}  # the last probe of each GPU
        self._planner_drafts: dict[str, PlannerDraft] = {}  # by engine: edits kept when the planner closes
        self.set_reactive(KvtopApp.node, NodeState(source_label=source.label))
        self.dashboard = DashboardScreen(self.node, self.now, interval_s)

    def get_default_screen(self) -> DashboardScreen:
        return self.dashboard

    def on_mount(self) -> None:
        self.dashboard.apply_preferences(self.preferences)
        if self._startup_notice:
            self.notify(self._startup_notice, title="note", severity="warning", timeout=20)
        self.stream_snapshots()
        self.set_interval(1.0, self._tick)

    @on(PreferencesChanged)
    def keep_preferences(self) -> None:
        self._remember(self.dashboard.preferences(self.preferences))

    def action_next_theme(self) -> None:
        super().action_next_theme()
        self._remember(self.preferences.model_copy(update={"theme": self.theme}))

    def _remember(self, preferences: Preferences) -> None:
        """Keep what the operator chose for the next run (a file write: in a worker, never on the loop)."""
        if preferences == self.preferences:
            return
        self.preferences = preferences
        if self._preferences_store is not None:
            self._save_preferences(self._preferences_store, preferences)

    @work(thread=True, exclusive=True, group="preferences", exit_on_error=False)
    def _save_preferences(self, store: PreferencesStore, preferences: Preferences) -> None:
        failure = store.save(preferences)
        if failure is not None:
            self.call_from_thread(self.notify, failure, severity="warning", timeout=6)

    def on_unmount(self) -> None:
        if self._probe_cancel is not None:
            self._probe_cancel.set()

    @work(thread=True, exclusive=True, group="source", exit_on_error=False)
    def stream_snapshots(self) -> None:
        """The one long-lived worker of the source: collect, post, wait an interval (or cancellation)."""

        def read() -> SnapshotArrived:
            snapshot = self._source.collect()
            return SnapshotArrived(snapshot, diagnose_quietly(snapshot))

        poll(self, read, lambda err: SourceFailed(failure_reason(err)), self._collecting, self._interval_s)

    @on(SnapshotArrived)
    def show_snapshot(self, message: SnapshotArrived) -> None:
        self._history.record(message.snapshot)
        now = self._clock()
        state = NodeState(
            source_label=self._source.label,
            snapshot=message.snapshot,
            received_at=now,
            trends=self._history.view(),
            findings=tuple(message.findings),  # type: ignore[arg-type]
        )
        if self._held is not None:  # paused: keep polling, show nothing new
            self._held = state
            return
        self.node = state
        # `now` stays: a snapshot that just arrived reads "live" at any earlier clock (its age
        # counts as 0), and the clock tick moves `now` once the marker would read otherwise.
        self.show_findings(message.findings)  # type: ignore[arg-type]

    @on(SourceFailed)
    def show_failure(self, message: SourceFailed) -> None:
        if self._held is not None:
            self._held = replace(self._held, failure=NodeFailure(message.reason), failed_at=self._clock())
            return
        self.node = replace(self.node, failure=NodeFailure(message.reason), failed_at=self._clock())

    @property
    def read_only(self) -> bool:
        """`--read-only`: no probe, no signals (the header says so)."""
        return self._read_only

    @property
    def paused(self) -> bool:
        return self._held is not None

    def action_pause(self) -> None:
        """Freeze what the screens show (polling goes on); again: show the newest state."""
        if self._held is None:
            self._held = self.node
            self.node = replace(self.node, paused=True)
            return
        held, self._held = self._held, None
        self.node = replace(held, paused=False)
        self.show_findings(held.findings)

    def watch_node(self, state: NodeState) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, NodeScreen):
                screen.node = state

    def freshness_reading(self, now: float) -> object:
        if self.node.paused:
            return "paused"  # the marker says so and counts nothing: no redraw while paused
        return reading(self.node.age_s(now), self.node.failure_said, self._interval_s)

    def watch_now(self, now: float) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, NodeScreen):
                screen.now = now

    def show_findings(self, findings: Sequence[FindingLike]) -> None:
        """Fill the dashboard's findings pane (the diagnose hook)."""
        self.dashboard.show_findings(findings)

    def focused_gpu(self) -> int | None:
        """The GPU of the ledger on top, else the dashboard's selection."""
        if isinstance(self.screen, RankLedgerScreen):
            return self.screen.gpu_index
        return self.dashboard.selected_gpu

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "probe" and self._read_only:
            return False
        if action == "quit_unless_typing":
            return super().check_action(action, parameters)
        screen = self.action_screen
        if action in ("processes", "node_processes"):
            return isinstance(screen, DashboardScreen | RankLedgerScreen)
        if action == "engine_tree":
            return isinstance(screen, DashboardScreen)
        if action == "planner" and isinstance(screen, PlannerScreen):
            return False  # `p` in the planner opened a second planner over it, one Esc from the first (session 67)
        return not (action in ("planner", "probe", "help", "pause") and not isinstance(screen, NodeScreen))

    def action_engine_tree(self) -> None:
        """The node as a tree: engines → processes → ranks (nvitop's tree view)."""
        self.push_screen(EngineTreeScreen(self.node, self.now, self._interval_s))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self._read_only))

    def action_processes(self) -> None:
        """The process panel of the focused GPU."""
        gpu = self.focused_gpu()
        if gpu is None:
            self.notify("no GPU is selected", severity="warning")
            return
        self.open_processes(gpu)

    def action_node_processes(self) -> None:
        """Every GPU's processes in one table (nvitop's); `a` there narrows it to one GPU."""
        self.open_processes(None)

    def open_processes(self, gpu_index: int | None, pid: int | None = None) -> None:
        self.push_screen(
            ProcessScreen(
                gpu_index,
                self.node,
                self.now,
                self._interval_s,
                select_pid=pid,
                can_signal=self._signal_sender is not None,
                simulated=self._probe_simulated,
            )
        )

    @on(FindingsPane.ProcessesChosen)
    def open_finding_processes(self, message: FindingsPane.ProcessesChosen) -> None:
        """A fix that stops processes: the panel of its (worst) GPU, its first pid selected there."""
        finding = message.finding
        pids: tuple[int, ...] = getattr(finding, "pids", ())
        snapshot = self.node.snapshot
        gpu = worst_gpu(finding, snapshot)
        if snapshot is not None and pids:  # where the fix's first pid runs, among the finding's GPUs
            gpu = next((g for g in finding.gpus if g in gpus_of_pid(snapshot, pids[0])), gpu)
        if gpu is not None:
            self.open_processes(gpu, pids[0] if pids else None)

    @on(SignalRequested)
    def send_signal(self, message: SignalRequested) -> None:
        if self._signal_sender is not None:
            self._send_signal(self._signal_sender, message.request)

    @work(thread=True, group="signals", exit_on_error=False)
    def _send_signal(self, sender: SignalSender, request: SignalRequest) -> None:
        """The sender blocks (psutil, the action log): never on the event loop."""
        self.post_message(SignalAnswered(sender.send(request)))

    @on(SignalAnswered)
    def show_signal_outcome(self, message: SignalAnswered) -> None:
        """Say what happened (and where it is logged); collect again so the panel shows the change."""
        outcome = message.outcome
        logged = (
            f" · logged in {outcome.log_path}" if outcome.log_path else f" · NOT LOGGED: {outcome.log_error}"
        )
        severity = "information" if outcome.state in (SignalState.SENT, SignalState.SIMULATED) else "error"
        self.notify(outcome.message + logged, severity=severity, timeout=8)  # type: ignore[arg-type]
        if outcome.state is SignalState.SENT and not self._collecting.is_set():
            self.stream_snapshots()

    @on(GpuList.Opened)
    def open_ledger(self, message: GpuList.Opened) -> None:
        self.push_screen(
            RankLedgerScreen(
                message.gpu_index, self.node, self.now, self._interval_s,
                probe_result=self.probe_results.get(message.gpu_index),
            )
        )  # fmt: skip

    def action_planner(self) -> None:
        gpu, snapshot = self.focused_gpu(), self.node.snapshot
        if snapshot is None:  # not 'no engine on this node': nothing has been read yet (the probe's words)
            self.notify(NO_SNAPSHOT_YET, severity="warning")
            return
        if gpu is not None and snapshot.engine_of_gpu(gpu) is None:
            engines = ", ".join(view.engine.engine_id for view in snapshot.engines)
            where = f": select a GPU of {engines}" if engines else ""
            self.notify(f"GPU {gpu} runs no engine, so there is nothing to plan on it{where}", severity="warning")
            return
        view = self._engine_to_plan()
        basis = self._plan_basis(view)
        if basis is None:
            self.notify(_no_plan_reason(view), severity="warning")
            return
        self._open_planner(basis, self._planner_drafts.get(basis.engine_label))

    def _open_planner(self, basis: PlanBasis, draft: PlannerDraft | None) -> None:
        def keep(draft: PlannerDraft | None) -> None:
            if draft is None:
                self._planner_drafts.pop(basis.engine_label, None)
            else:
                self._planner_drafts[basis.engine_label] = draft

        self.push_screen(
            PlannerScreen(basis, self._model_loader, self.node, self.now, self._interval_s, draft=draft, keep_draft=keep,
                          node_measures=self._node_measures)  # fmt: skip
        )  # fmt: skip

    @on(FindingsPane.FixChosen)
    def plan_fix(self, message: FindingsPane.FixChosen) -> None:
        """The planner from the finding's engine: before = its live settings, after = the fix applied."""
        finding = message.finding
        fixed: LaunchSettings | None = getattr(finding, "fix_settings", None)
        basis = self._plan_basis(self._engine_of_finding(finding))
        if fixed is None or basis is None:
            self.notify(f"no engine with known settings to apply {finding.fix!r} to", severity="warning")
            return
        basis = replace(basis, start_settings=fixed, start_label=f"fix of “{finding.title}”")
        self._open_planner(basis, None)  # a fix starts afresh (and replaces the engine's kept edits)

    def action_probe(self) -> None:
        """The probe's confirmation for the focused GPU (or why it cannot run)."""
        if self._read_only:
            self.notify("the probe allocates memory and is disabled by --read-only", severity="warning")
            return
        gpu = self.focused_gpu()
        plan: ProbePlan | str | None = self._probe_unavailable
        if self._probe_runner is not None:
            planned = self._planned_launch()
            plan = plan_probe(self.node.snapshot, gpu, simulated=self._probe_simulated, planned=planned)
        self._probe_cancel = threading.Event()
        self.push_screen(ProbeScreen(gpu, plan, self._probe_runner, self._probe_cancel))

    def _planned_launch(self) -> PlannedLaunch | None:
        """`P` in the planner probes the planned KV pool (its edit's ledger), as the help says; elsewhere None."""
        screen = self.screen
        if not isinstance(screen, PlannerScreen):
            return None
        outcome = screen.outcome
        if outcome is None or outcome.after is None:
            why = outcome.error if outcome is not None and outcome.error else "the planner's edit has not solved yet"
            return PlannedLaunch(screen.basis.engine_label, None, why)
        return PlannedLaunch(screen.basis.engine_label, outcome.after)

    @on(ProbeFinished)
    def keep_probe_result(self, message: ProbeFinished) -> None:
        """Remember the GPU's last probe and show it in its open rank ledger."""
        self.probe_results[message.gpu_index] = message.result
        for screen in self.screen_stack:
            if isinstance(screen, RankLedgerScreen) and screen.gpu_index == message.gpu_index:
                screen.show_probe(message.result)

    def action_refresh(self) -> None:
        """Collect now: restart the worker unless a collect is already under way."""
        if self._collecting.is_set():
            self.notify("a refresh is already under way", timeout=2)
            return
        self.stream_snapshots()

    def _engine_to_plan(self) -> EngineView | None:
        """The engine of the focused GPU, else the node's first engine."""
        snapshot = self.node.snapshot
        if snapshot is None:
            return None
        gpu = self.focused_gpu()
        return (snapshot.engine_of_gpu(gpu) if gpu is not None else None) or next(
            iter(snapshot.engines), None
        )

    def _engine_of_finding(self, finding: FindingLike) -> EngineView | None:
        """The engine a finding names (by id, else by its first GPU)."""
        snapshot = self.node.snapshot
        if snapshot is None:
            return None
        engine_id = getattr(finding, "engine_id", None)
        named = next((view for view in snapshot.engines if view.engine.engine_id == engine_id), None)
        return named or next((v for g in finding.gpus if (v := snapshot.engine_of_gpu(g))), None)

    def _plan_basis(self, view: EngineView | None) -> PlanBasis | None:
        """The planner starts from the engine as measured: its explained ledger (its release's rules, what
        others hold on its GPUs, what it reports), the same basis every finding's fix is priced on."""
        snapshot = self.node.snapshot
        if snapshot is None or view is None or view.engine.settings is None:
            return None
        basis = view.explained or view.ledger
        if basis is None:
            return None
        return PlanBasis(
            engine_label=view.engine.label,
            settings=basis.settings,
            model=basis.model,
            gpu_total_bytes=basis.gpu_total_bytes,
            gpu_name=basis.gpu_name,
            live=view.engine.live,
            live_source=view.capacity_source,
            measured=basis.measured,
            node_gpus=len(snapshot.observation.gpus),
            draft=basis.draft,
            host_memory=snapshot.observation.host_memory,
            host_origin=host_origin(snapshot.source),
            version=basis.version,
        )
