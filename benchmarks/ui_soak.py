"""Does the TUI grow while it runs? Drive it headless through every screen and watch RSS and live objects.

The node app (`--app node`, the default) runs as `kvtop --demo SCENARIO` builds it: a probe
runner on the simulated node, a signal sender, the heap settled (`gc.freeze()`) before it starts.
Its worker collects once; then the script takes each snapshot the way the worker does (the demo
node at the next tick, `collect_at(tick)`, then the real diagnose), posts it as `SnapshotArrived`,
and lets the app handle it and draw a frame: one refresh. Between refreshes it opens and closes
the screens in turn: the rank ledger (Enter), the planner (p, with an edit), the probe dialog (P,
cancelled: no fill runs), the process panel (x, sorted, with the T, K and I dialogs opened and
cancelled: nothing is sent), the findings pane (f, a move, Enter on a fix and back), the filter
(/), the help (?), the command palette (ctrl+p), pause (z), the sort (s) and the theme (t).

The cluster view (`--app cluster`, `kvtop --prometheus` with every demo scenario as a node) is
refreshed by its refresh action (what `r` runs): the app's own workers read the cluster and
collect the open node again. Its visits: a node's dashboard (its findings and filter), the help,
the command palette and the theme.

Every `--every` refreshes it collects garbage and reads RSS (psutil) and `len(gc.get_objects())`
(what the collector tracks, less what was frozen before the app started), and prints a row; at
the end, the growth from the first `--baseline` refreshes on.

  python benchmarks/ui_soak.py                          # 10,000 refreshes, every screen
  python benchmarks/ui_soak.py --refreshes 2000 --screens ledger,processes
  python benchmarks/ui_soak.py --screens none           # refreshes only (the flat baseline)
  python benchmarks/ui_soak.py --app cluster --refreshes 3000
  python benchmarks/ui_soak.py --visits 400 --every 200 --baseline 200 --limit-mib 5   # issue 25: 400 screens

Numbers only, no assertions (goal, issue 17: < 5 MB of RSS and flat live objects after GC).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import gc
import itertools
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import psutil
from textual import events
from textual.app import App
from textual.pilot import Pilot

from kvtop.commands.node_source import DemoSource
from kvtop.domain.cluster import (
    ClusterEngine,
    ClusterNode,
    ClusterTarget,
    ClusterView,
    GpuSource,
    NodeGpus,
    TargetHealth,
    rank_nodes,
)
from kvtop.domain.diagnose import diagnose
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.ports import SignalOutcome, SignalRequest
from kvtop.domain.probe import ProbeRequest, ProbeResult
from kvtop.sources.hub import load_model
from kvtop.sources.scenario import scenario_names
from kvtop.ui.app import KvtopApp
from kvtop.ui.cluster_app import ClusterApp
from kvtop.ui.heap import settle_heap
from kvtop.ui.messages import SnapshotArrived
from kvtop.ui.polling import diagnose_quietly

SCENARIO = "llama70b-tp8-foreign-gpu3"  # the co-tenant node of the issue
SIZE = (160, 48)
MIB = 1 << 20
QUIET_S = 3600.0  # the workers' interval: only the first collect (and `r`) happen by themselves
#: Keys by their characters where Textual names them otherwise, and the character of named keys.
_KEY_NAMES = {":": "colon", "/": "slash", "?": "question_mark"}
_CHARS = {
    "slash": "/",
    "colon": ":",
    "question_mark": "?",
    "backspace": "\x08",
    "enter": "\r",
    "escape": "\x1b",
}


class _NeverSends:
    """A signal sender the soak never reaches (no dialog is confirmed)."""

    def send(self, request: SignalRequest) -> SignalOutcome:
        raise RuntimeError("the soak confirmed a signal: it must only open and cancel the dialog")


def _never_probes(request: ProbeRequest, cancel: threading.Event) -> ProbeResult:
    raise RuntimeError("the soak ran a probe: it must only open and cancel the dialog")


class _Ticking:
    """A demo node one tick further on each collect (a fresh snapshot every time, as a live node)."""

    def __init__(self, demo: DemoSource) -> None:
        self.label = demo.label
        self._demo = demo
        self._ticks = itertools.count()

    def collect(self) -> NodeSnapshot:
        return self._demo.collect_at(next(self._ticks))


class DemoCluster:
    """Every demo scenario as one node of a cluster, as kvtop's exporters would report them to Prometheus."""

    def __init__(self) -> None:
        self.nodes = {name: _Ticking(DemoSource.open(name)) for name in scenario_names()}

    def read(self) -> ClusterView:
        return ClusterView(
            prometheus_url="http://prometheus.demo:9090",
            taken_at=time.time(),
            nodes=rank_nodes(self._node(name, source.collect()) for name, source in self.nodes.items()),
        )

    def _node(self, name: str, snapshot: NodeSnapshot) -> ClusterNode:
        instance = f"{name}:9401"
        observed = snapshot.observation.gpus
        gpus = NodeGpus(source=GpuSource.KVTOP, count=len(observed), used_bytes=sum(g.used_bytes or 0 for g in observed),
                        total_bytes=sum(g.total_bytes or 0 for g in observed))  # as Prometheus sums them (`sum by`)
        engines = tuple(
            ClusterEngine(
                instance=instance, engine=view.engine.engine_id, source="kvtop",
                predicted_token_capacity=min((r.predicted.token_capacity for r in view.ranks if r.predicted),
                                             default=None),
                live_token_capacity=view.engine.live.token_capacity,
            )
            for view in snapshot.engines
        )  # fmt: skip
        findings = Counter(str(finding.severity.value) for finding in diagnose(snapshot))
        return ClusterNode(
            name=name, gpu_summary=gpus, engines=engines, findings=findings, demo_scenario=name,
            targets=(ClusterTarget(job="kvtop", instance=instance, health=TargetHealth.UP, age_seconds=1.0),),
        )  # fmt: skip

    def source_of(self, name: str) -> _Ticking:
        return self.nodes[name]


@dataclass
class Driver:
    """The app, its pilot, and how it refreshes (`refresh_once`)."""

    app: App[int]
    pilot: Pilot[int]
    refresh_once: Callable[[Driver], Awaitable[None]]
    stay: int = 1  # refreshes on each screen a visit opens
    refreshes: int = 0

    async def settle(self, delay: float = 0) -> None:
        """Until the screen handled what was posted, then draw it (Pilot.pause), in a task of its own:
        drawing from the script's task would leave the screens under a dialog in that task's context
        (Textual's `visible_screen_stack`), and in the cancelled 30 s timers its waits leave."""
        await asyncio.create_task(self.pilot.pause(delay), context=contextvars.copy_context())

    async def refresh(self) -> None:
        await self.refresh_once(self)
        self.refreshes += 1

    async def linger(self) -> None:
        """Stay on the screen for `stay` refreshes."""
        for _ in range(self.stay):
            await self.refresh()

    async def press(self, *keys: str) -> None:
        """Keys as the terminal sends them, each handled before the next (Pilot.press, without its
        20 ms idle waits per key: 10,000 refreshes' worth of keys would take hours)."""
        for key in keys:
            self.app.post_message(
                events.Key(_KEY_NAMES.get(key, key), _CHARS.get(key, key if len(key) == 1 else None))
            )
            await self.settle()
            await self.settle()  # what the key started (a screen pushed, a message posted)

    async def until(self, condition: Callable[[], bool], what: str) -> None:
        for _ in range(5000):
            if condition():
                return
            await self.settle(0.001)
        raise RuntimeError(f"the app did not get there: {what} (screen {type(self.app.screen).__name__})")

    async def on(self, screen: str) -> None:
        await self.until(lambda: type(self.app.screen).__name__ == screen, screen)

    async def opens(self, key: str, screen: str, *then: str, back_to: str = "DashboardScreen") -> None:
        """`key` opens `screen`; `stay` refreshes there; `then` closes it (Esc if none)."""
        await self.press(key)
        await self.on(screen)
        await self.linger()
        await self.press(*(then or ("escape",)))
        await self.on(back_to)


# --- the node app ---


async def post_snapshot(d: Driver) -> None:
    """One refresh as the worker makes it: the demo node at the next tick, diagnosed, posted, drawn."""
    app = d.app
    assert isinstance(app, KvtopApp) and isinstance(app.soak_demo, _Ticking)  # type: ignore[attr-defined]
    snapshot = app.soak_demo.collect()  # type: ignore[attr-defined]
    app.post_message(SnapshotArrived(snapshot, diagnose_quietly(snapshot)))
    await d.settle()  # the app handled it (the screens' watchers ran) and drew a frame
    shown = app._held if app.paused else app.node  # paused: held, not shown
    if shown is None or shown.snapshot is not snapshot:
        raise RuntimeError(f"refresh {d.refreshes + 1}: the snapshot was not taken in")


async def visit_processes(d: Driver) -> None:
    await d.press("x")
    await d.on("ProcessScreen")
    await d.press("s", "down")
    await d.linger()
    for key, close in (("T", "escape"), ("K", "n"), ("I", "escape")):
        await d.opens(key, "SignalScreen", close, back_to="ProcessScreen")
    await d.press("escape")
    await d.on("DashboardScreen")


async def visit_findings(d: Driver) -> None:
    await d.press("f", "down")
    await d.linger()
    await d.press("up", "enter")  # the worst finding's fix: the planner or the process panel
    await d.until(lambda: type(d.app.screen).__name__ != "DashboardScreen", "the fix's screen")
    await d.linger()
    await d.press("escape")
    await d.on("DashboardScreen")
    await d.press("f")


async def visit_filter(d: Driver) -> None:
    await d.press("slash", *"gpu:3")
    await d.linger()
    await d.press("escape")  # clears the filter (the input does not keep Esc)


async def visit_pause(d: Driver) -> None:
    await d.press("z")
    await d.linger()
    await d.press("z")


async def visit_sort(d: Driver) -> None:
    for _ in range(5):  # every order, back to GPU index
        await d.press("s")
        await d.refresh()


async def visit_theme(d: Driver) -> None:
    await d.press("t")
    await d.linger()


NODE_VISITS: dict[str, Callable[[Driver], Awaitable[None]]] = {
    "ledger": lambda d: d.opens("enter", "RankLedgerScreen", "down", "escape"),
    "planner": lambda d: d.opens(
        "p", "PlannerScreen", "backspace", "4", "ctrl+r", "escape"
    ),  # TP 8 → 4, reset
    "probe": lambda d: d.opens("P", "ProbeScreen", "n"),
    "processes": visit_processes,
    "findings": visit_findings,
    "filter": visit_filter,
    "help": lambda d: d.opens("question_mark", "HelpScreen"),
    "palette": lambda d: d.opens("ctrl+p", "CommandPalette", "s", "o", "escape"),
    "pause": visit_pause,
    "sort": visit_sort,
    "theme": visit_theme,
}


# --- the cluster view ---


async def read_again(d: Driver) -> None:
    """What `r` runs (called, not typed: in a field or the palette `r` is a letter): the app's workers
    read the cluster and collect the open node again, in their threads.

    It does nothing while a read is under way (it says so); the worker a node's opening started
    may not have begun its read yet, so it is asked again until the new data is in."""
    app = d.app
    assert isinstance(app, ClusterApp)
    cluster, node, node_open = app.cluster, app.node, app._node_screen is not None

    def arrived() -> bool:
        return app.cluster is not cluster and (not node_open or app.node is not node)

    for _ in range(100):
        await d.until(lambda: not app._reading.is_set() and not app._node_collecting.is_set(), "idle workers")
        app.action_refresh()
        for _ in range(200):
            if arrived():
                return
            await d.settle(0.002)
    raise RuntimeError("the cluster was not read again")


async def visit_node(d: Driver) -> None:
    await d.press("down", "enter")  # the next node down the list (from the top after the last)
    await d.on("ClusterNodeScreen")
    await d.linger()
    await d.press("f", "down")
    await d.linger()
    await d.press("f", "slash", *"gpu:1")
    await d.linger()
    await d.press("escape", "escape")  # the filter clears, then back to the list
    await d.on("ClusterScreen")


CLUSTER_VISITS: dict[str, Callable[[Driver], Awaitable[None]]] = {
    "node": visit_node,
    "help": lambda d: d.opens("question_mark", "HelpScreen", back_to="ClusterScreen"),
    "palette": lambda d: d.opens("ctrl+p", "CommandPalette", "r", "escape", back_to="ClusterScreen"),
    "theme": visit_theme,
}


# --- measuring ---


@dataclass(frozen=True)
class Sample:
    refreshes: int
    rss_bytes: int
    objects: int
    seconds: float


def sample(refreshes: int, started: float) -> Sample:
    gc.collect()
    rss = psutil.Process().memory_info().rss
    return Sample(refreshes, rss, len(gc.get_objects()), time.perf_counter() - started)


def by_type() -> Counter[str]:
    gc.collect()
    return Counter(type(o).__qualname__ for o in gc.get_objects())


def build(
    kind: str, scenario: str
) -> tuple[App[int], Callable[[Driver], Awaitable[None]], Callable[[], bool]]:
    """The app as kvtop builds it, how it refreshes, and when its first data is in."""
    if kind == "cluster":
        cluster = DemoCluster()
        app = ClusterApp(cluster, cluster.source_of, load_model, theme="dark", interval_s=QUIET_S,
                         label="http://prometheus.demo:9090")  # fmt: skip
        return app, read_again, lambda: app.cluster.view is not None
    source = _Ticking(DemoSource.open(scenario))
    node_app = KvtopApp(
        source, load_model, theme="dark", interval_s=QUIET_S,
        probe_runner=_never_probes, probe_simulated=True, signal_sender=_NeverSends(),
    )  # fmt: skip
    node_app.soak_demo = source  # type: ignore[attr-defined]
    return node_app, post_snapshot, lambda: node_app.node.snapshot is not None


async def soak(args: argparse.Namespace, names: list[str]) -> list[Sample]:
    app, refresh_once, ready = build(args.app, args.scenario)
    visits = CLUSTER_VISITS if args.app == "cluster" else NODE_VISITS
    plan = itertools.cycle([visits[name] for name in names] or [Driver.linger])
    settle_heap()  # as `kvtop` does before it runs the app
    samples: list[Sample] = []
    started = time.perf_counter()
    print(f"{'refreshes':>10} {'RSS MiB':>8} {'live objects':>13} {'elapsed s':>10}", flush=True)
    async with app.run_test(size=SIZE) as pilot:
        d = Driver(app, pilot, refresh_once, args.stay)
        await d.until(ready, "the first data")
        before: Counter[str] | None = None
        next_sample = args.every
        visited = 0
        while d.refreshes < args.refreshes and (args.visits is None or visited < args.visits):
            await next(plan)(d)
            visited += 1
            if d.refreshes >= next_sample:
                samples.append(s := sample(d.refreshes, started))
                print(
                    f"{s.refreshes:>10,} {s.rss_bytes / MIB:>8.1f} {s.objects:>13,} {s.seconds:>10.0f}",
                    flush=True,
                )
                next_sample += args.every
                if args.types and before is None:
                    before = by_type()
        if args.types and before is not None:
            grown = by_type()
            grown.subtract(before)
            print(f"live objects by type, growth from {samples[0].refreshes:,} refreshes to the end:")
            for name, count in grown.most_common(args.types):
                print(f"  {count:+8,}  {name}")
        samples.append(s := sample(d.refreshes, started))  # where it stopped
        print(f"{s.refreshes:>10,} {s.rss_bytes / MIB:>8.1f} {s.objects:>13,} {s.seconds:>10.0f}  ({visited:,} visits)")
    return samples


def report(samples: list[Sample], baseline: int, limit_mib: float | None) -> int:
    """Print the growth; with `limit_mib`, exit 1 when RSS grew more (the issue's goal: < 5 MB)."""
    first = next((s for s in samples if s.refreshes >= baseline), samples[0])
    last = samples[-1]
    grown_mib = (last.rss_bytes - first.rss_bytes) / MIB
    print(
        f"growth from {first.refreshes:,} to {last.refreshes:,} refreshes: "
        f"RSS {grown_mib:+.1f} MiB, "
        f"live objects {last.objects - first.objects:+,} ({first.objects:,} → {last.objects:,})"
    )
    if limit_mib is not None and grown_mib >= limit_mib:
        print(f"RSS grew {grown_mib:.1f} MiB: at or over the limit of {limit_mib:g} MiB")
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--app", choices=("node", "cluster"), default="node", help="which TUI (default: node)"
    )
    parser.add_argument(
        "--scenario", default=SCENARIO, help="the node app's demo scenario (default: %(default)s)"
    )
    parser.add_argument("--refreshes", type=int, default=10_000, help="refreshes (default: %(default)s)")
    parser.add_argument(
        "--screens", help="comma-separated visits in turn, or 'none' (default: all of the app's)"
    )
    parser.add_argument(
        "--stay", type=int, default=2, help="refreshes on each screen a visit opens (default: 2)"
    )
    parser.add_argument("--every", type=int, default=1000, help="refreshes between samples (default: 1000)")
    parser.add_argument("--baseline", type=int, default=1000, help="growth is counted from this refresh")
    parser.add_argument("--types", type=int, default=0, help="also list the N types that grew most")
    parser.add_argument("--visits", type=int, default=None,
                        help="stop after this many screen visits (e.g. 400), whatever --refreshes says")  # fmt: skip
    parser.add_argument("--limit-mib", type=float, default=None, help="exit 1 when RSS grew this much or more")
    args = parser.parse_args()
    visits = CLUSTER_VISITS if args.app == "cluster" else NODE_VISITS
    screens = args.screens if args.screens is not None else ",".join(visits)
    names = [] if screens == "none" else [name.strip() for name in screens.split(",") if name.strip()]
    unknown = [name for name in names if name not in visits]
    if unknown:
        parser.error(f"--screens: unknown {', '.join(unknown)} (known: {', '.join(visits)}, or none)")
    where = "the cluster of every demo scenario" if args.app == "cluster" else f"demo:{args.scenario}"
    print(
        f"kvtop UI soak · {args.app} app · {where} · {SIZE[0]}×{SIZE[1]} headless · {args.refreshes:,} refreshes"
        f" · {args.stay} per screen · visits: {', '.join(names) or 'none'}"
    )
    raise SystemExit(report(asyncio.run(soak(args, names)), args.baseline, args.limit_mib))


if __name__ == "__main__":
    main()
