"""Helpers the UI tests share (and a few tests elsewhere): what the screen shows, opening the planner and the probe,
fake probe runners, the process panel and fake signal senders, cluster readers, and the live H200 snapshot of
tests/data/device. Kept here, not in one test module another imports: a test module holds tests. Fixtures (and the
bounded waits) are in conftest.py."""

from __future__ import annotations

import html
import json
import re
import threading

from textual import events
from textual.widgets import Input, Static

from kvtop.commands.demo_cluster import DEMO_PROMETHEUS_URL, DemoCluster, DemoClusterReader
from kvtop.domain.cluster import (
    ClusterEngine,
    ClusterNode,
    ClusterTarget,
    ClusterView,
    GpuSource,
    NodeGpus,
    TargetHealth,
)
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import NodeObservation
from kvtop.domain.ports import SignalOutcome, SignalRequest, SignalState, SnapshotSource
from kvtop.domain.probe import MeasuredPerToken, ProbeOutcome, ProbeRequest, ProbeResult
from kvtop.sources.hub import load_model
from kvtop.sources.prometheus import ClusterReader, PrometheusClient
from kvtop.sources.prometheus_node import PrometheusNodeSource
from kvtop.ui.cluster_app import ClusterApp
from kvtop.ui.screens.planner import PlannerScreen
from kvtop.ui.screens.probe import ProbeScreen
from kvtop.ui.screens.processes import ProcessScreen
from kvtop.ui.widgets.cluster_table import ClusterTable
from tests.data_paths import DATA
from tests.sources.fake_prometheus import NOW
from tests.ui.conftest import QUIET_INTERVAL_S, wait_for, wait_for_snapshot
from tests.ui.fakes import GIB, MIB, FakeSource, FixedClock, llama_snapshot

# --- the screen as the terminal shows it ---

_TEXT = re.compile(r'<text [^>]*\by="([0-9.]+)"[^>]*>([^<]*)</text>')


def screen_lines(app) -> list[str]:
    """The screen as lines of text, read from the exported screenshot (what the terminal shows)."""
    lines: dict[float, str] = {}
    for y, text in _TEXT.findall(app.export_screenshot()):
        lines[float(y)] = lines.get(float(y), "") + html.unescape(text).replace("\xa0", " ")
    return [lines[y] for y in sorted(lines)]


def screen_text(app) -> str:
    return "\n".join(screen_lines(app))


# --- the planner ---


async def open_planner(pilot) -> PlannerScreen:
    await wait_for_snapshot(pilot)
    await pilot.press("p")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, PlannerScreen))
    screen = pilot.app.screen
    await wait_for(pilot, lambda: screen.outcome is not None)
    return screen


async def retype(pilot, selector: str, text: str) -> None:
    await pilot.click(selector)
    await pilot.press("home", "ctrl+k", *text)
    await pilot.pause()


async def paste(pilot, selector: str, text: str) -> None:
    """`text` in the field as a terminal pastes it (one `Paste` event, to the focused widget): one edit, so one
    re-solve, where `retype` re-solves the plan once a character (a 75-character path: 75 solves and draws)."""
    await pilot.click(selector)
    await pilot.press("home", "ctrl+k")
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()
    assert pilot.app.screen.query_one(selector, Input).value == text


def shown(screen, selector: str) -> str:
    return screen.query_one(selector, Static).render().plain


# --- the probe (P): a fake runner, the dialog of GPU 3 ---

KV_BYTES_PER_TOKEN = 40_960


FILLED_TOKENS = 26_213  # what 1 GiB holds at 40,960 B/token, the padding page included


def filled(request: ProbeRequest) -> ProbeResult:
    """A fill of 1 GiB that measured the predicted bytes per token and gave everything back."""
    allocated = (FILLED_TOKENS + 1) * KV_BYTES_PER_TOKEN
    return ProbeResult(
        outcome=ProbeOutcome.OK, message=f"filled {FILLED_TOKENS:,} tokens, keeping the reserve free",
        device=request.device, mode="fill", tokens_allocated=FILLED_TOKENS, padding_rows=1,
        bytes_allocated=allocated, bytes_per_token_predicted=request.bytes_per_token_predicted,
        measured=MeasuredPerToken(total_bytes=allocated, tokens=FILLED_TOKENS), reserve_bytes=request.reserve_bytes,
        budget_bytes=GIB, free_before_bytes=GIB + request.reserve_bytes, chunks=1, touched=True,
        seconds=0.5, released=True, release_check="process exited",
    )  # fmt: skip


class FakeRunner:
    """Answers with `answer(request)`; with `gate`, first waits until the test opens it (or cancel)."""

    def __init__(self, answer=filled, *, gate: bool = False) -> None:
        self.answer = answer
        self.gate = threading.Event() if gate else None
        self.requests: list[ProbeRequest] = []
        self.cancels: list[threading.Event] = []
        self.started = threading.Event()
        self.returned = threading.Event()

    def __call__(self, request: ProbeRequest, cancel: threading.Event) -> ProbeResult:
        self.requests.append(request)
        self.cancels.append(cancel)
        self.started.set()
        try:
            if self.gate is not None:
                while not self.gate.is_set():
                    if cancel.wait(0.01):
                        return ProbeResult.unmeasured(
                            request, ProbeOutcome.CANCELLED, "the probe was cancelled and killed"
                        ).model_copy(update={"released": True, "release_check": "process exited"})
            return self.answer(request)
        finally:
            self.returned.set()


async def open_probe_of_gpu_3(pilot) -> ProbeScreen:
    await wait_for_snapshot(pilot)
    await pilot.press("down", "down", "down", "P")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ProbeScreen))
    return pilot.app.screen


async def wait_for_result(pilot, screen: ProbeScreen, *, rounds: int = 200) -> None:
    """Until the dialog shows the result and the app has kept it (the message reaches the app after)."""
    await wait_for(
        pilot, lambda: screen.phase == "done" and screen.gpu_index in pilot.app.probe_results, rounds=rounds
    )


# --- the process panel (X) and its signals ---


def text(screen, selector: str) -> str:
    """The text the widget `selector` of `screen` renders, its whitespace collapsed."""
    return " ".join(screen.query_one(selector).render().plain.split())


async def open_node_table(pilot) -> ProcessScreen:
    """`X`: the process panel over every GPU."""
    await wait_for_snapshot(pilot)
    await pilot.press("X")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ProcessScreen))
    return pilot.app.screen


async def select(pilot, panel: ProcessScreen, pid: int) -> None:
    """The cursor on `pid`'s row of the panel."""
    panel.query_one("#processes-table").move_cursor(row=[row.pid for row in panel._rows].index(pid))
    await pilot.pause()


CO_TENANT_PID = 9001


class FakeSignalSender:
    """Records every request; answers SENT (or what `state` says) and names a log it did not write."""

    def __init__(self, state: SignalState = SignalState.SENT) -> None:
        self.requests: list[SignalRequest] = []
        self.state = state
        self.sent = threading.Event()

    def send(self, request: SignalRequest) -> SignalOutcome:
        self.requests.append(request)
        self.sent.set()
        message = f"{request.signal.value} sent to pid {request.pid}"
        return SignalOutcome(
            request=request, state=self.state, message=message, log_path="/tmp/kvtop-test.log"
        )


# --- the H200 read live with no engine (tests/data/device) ---

H200_SNAPSHOT = DATA / "device" / "h200_foreign_no_engine.snapshot.json"


def h200_snapshot():  # type: ignore[no-untyped-def]
    said = json.loads(H200_SNAPSHOT.read_text())
    observation = NodeObservation.model_validate(
        {key: said[key] for key in ("taken_at", "gpus", "engines")}
        | {"driver_version": said["nvml"]["driver_version"]}
    )
    return build_snapshot(observation, {}, source="nvml")


# --- the cluster view (--prometheus): three nodes, a scripted reader ---

URL = "http://prometheus.test:9090"


def _kvtop_gpus(snapshot: NodeSnapshot) -> NodeGpus:
    """The node's GPUs as Prometheus sums kvtop's exporter's series (`count by`, `sum by`)."""
    gpus = snapshot.observation.gpus
    return NodeGpus(source=GpuSource.KVTOP, count=len(gpus), used_bytes=sum(g.used_bytes or 0 for g in gpus),
                    total_bytes=sum(g.total_bytes or 0 for g in gpus))  # fmt: skip


def three_nodes() -> ClusterView:
    """Healthy-but-squeezed node-01 first, then stale node-03, then down node-02: the UI must reorder."""
    squeezed = llama_snapshot(co_tenant_gpu=3)
    node_01 = ClusterNode(
        name="gpu-node-01",
        targets=(ClusterTarget(job="kvtop", instance="10.0.0.1:9401", health=TargetHealth.UP, age_seconds=5.0),),
        gpu_summary=_kvtop_gpus(squeezed),
        engines=(ClusterEngine(instance="10.0.0.1:9401", engine="sglang:4242", source="kvtop",
                               clean_token_capacity=1_255_785, predicted_token_capacity=1_127_125,
                               live_token_capacity=1_127_125),),
        unexplained_bytes=2 * GIB, findings={"warning": 1, "info": 2},
    )  # fmt: skip
    node_03 = ClusterNode(
        name="gpu-node-03",
        targets=(ClusterTarget(job="dcgm", instance="10.0.0.4:9400", health=TargetHealth.STALE, age_seconds=300.0),),
        gpu_summary=NodeGpus(source=GpuSource.DCGM, count=1, used_bytes=0, total_bytes=46067 * MIB),  # one L40S
        notes=("no kvtop exporter: predictions and findings unavailable",
               "target 10.0.0.4:9400 (dcgm) stale, last sample 300 s ago"),
    )  # fmt: skip
    node_02 = ClusterNode(
        name="gpu-node-02",
        targets=(ClusterTarget(job="kvtop", instance="10.0.0.2:9401", health=TargetHealth.DOWN, age_seconds=4.0),),
        notes=("target 10.0.0.2:9401 (kvtop) down, last sample 4 s ago",),
    )  # fmt: skip
    return ClusterView(prometheus_url=URL, taken_at=NOW, nodes=(node_01, node_03, node_02))


class FakeReader:
    """A ClusterReaderPort that answers what its script says: views, or exceptions to raise."""

    def __init__(self, *script: ClusterView | Exception) -> None:
        self._script = list(script)
        self._lock = threading.Lock()

    def push(self, item: ClusterView | Exception) -> None:
        with self._lock:
            self._script = [item]

    def read(self) -> ClusterView:
        with self._lock:
            item = self._script[0] if len(self._script) == 1 else self._script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


class Factory:
    """Records which nodes were opened and hands each the same source."""

    def __init__(self, source: SnapshotSource) -> None:
        self.source = source
        self.opened: list[str] = []

    def __call__(self, name: str) -> SnapshotSource:
        self.opened.append(name)
        return self.source


def make_cluster_app(reader: FakeReader, factory: Factory | None = None) -> ClusterApp:
    """A ClusterApp on `reader`'s views; each node opened through `factory` (default: the healthy Llama node)."""
    factory = factory or Factory(FakeSource(llama_snapshot()))
    return ClusterApp(reader, factory, load_model, theme="dark", interval_s=QUIET_INTERVAL_S, clock=FixedClock(),
                      label=URL)  # fmt: skip


def rows(app: ClusterApp) -> dict[str, list[str]]:
    table = app.cluster_screen.query_one(ClusterTable)
    return {str(key.value): [cell.plain for cell in table.get_row(key)] for key in table.rows}


def header(app: ClusterApp) -> str:
    return app.cluster_screen.query_one("#cluster-header").render().plain


# --- the demo cluster (--demo-cluster) ---

CLOCK = 1_750_000_000.0


def make_demo_cluster_app() -> tuple[ClusterApp, PrometheusClient]:
    """A ClusterApp on the default demo cluster (`kvtop cluster --demo-cluster`) at the fixed `CLOCK`, and its client."""
    cluster = DemoCluster.open("demo", clock=lambda: CLOCK)
    client = PrometheusClient(DEMO_PROMETHEUS_URL, transport=cluster.transport())
    reader = DemoClusterReader(cluster, ClusterReader(client, clock=lambda: CLOCK))
    app = ClusterApp(reader, lambda name: PrometheusNodeSource(client, name), load_model, theme="dark",
                     interval_s=QUIET_INTERVAL_S, label=DEMO_PROMETHEUS_URL)  # fmt: skip
    return app, client
