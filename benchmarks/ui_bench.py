"""How fast and how light the TUI is, measured headless on the demo node (no GPU needed).

  start-up      wall time from opening the source to the first frame drawn with the GPU rows in it
  refresh tick  CPU (all threads) to take one 8-GPU snapshot and redraw, averaged over --ticks:
                snapshots are posted one per 50 ms, and the CPU of the same loop without
                snapshots (its own wakeups, the idle app) is taken off
  idle          CPU share while the app polls the demo node at 1 Hz for --duration seconds (the
                script sleeps throughout; collect and diagnose in the worker thread included),
                from 2 s after the first snapshot: until then the app is still starting (Textual
                lays out the footer's keys, the first findings mount), ≈ 0.1 s of CPU

It first calibrates the machine: pure-Python speed, what one idle event-loop wakeup costs (in a
small VM a few tenths of a millisecond, paid for each wakeup the app needs) and what a Textual
app that repaints a single cell per tick costs (the framework's floor for any refresh).

Numbers only, no assertions: `python benchmarks/ui_bench.py --duration 10`.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import timeit
from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import Footer

from kvtop.commands.node_source import DemoSource
from kvtop.domain.diagnose import diagnose
from kvtop.domain.node import NodeSnapshot
from kvtop.sources.hub import load_model
from kvtop.sources.scenario import DEFAULT_SCENARIO
from kvtop.ui.app import KvtopApp
from kvtop.ui.heap import settle_heap
from kvtop.ui.messages import SnapshotArrived
from kvtop.ui.widgets.gpu_list import GpuList

SIZE = (160, 48)
REDRAW_WAIT_S = 0.05


class _Replay:
    """A source that hands out precomputed snapshots, so a tick costs only the UI."""

    def __init__(self, label: str, snapshots: list[NodeSnapshot]) -> None:
        self.label = label
        self._snapshots = snapshots
        self._next = 0

    def collect(self) -> NodeSnapshot:
        snapshot = self._snapshots[self._next % len(self._snapshots)]
        self._next += 1
        return snapshot


async def _until(pilot: object, condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        await pilot.pause(0.001)  # type: ignore[attr-defined]


async def start_up(scenario: str) -> float:
    """Wall time from opening the demo source to the first frame with its GPUs (heap settled, as `kvtop` does)."""
    started = time.perf_counter()
    source = DemoSource.open(scenario)
    settle_heap()
    app = KvtopApp(source, load_model, interval_s=1.0)
    drawn: list[float] = []
    display = app._display

    def timed_display(screen: object, update: object) -> None:
        display(screen, update)  # type: ignore[arg-type]
        if not drawn and app.screen.query(GpuList) and app.screen.query_one(GpuList).shown_gpus:
            drawn.append(time.perf_counter())

    app._display = timed_display  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: bool(drawn))
        return drawn[0] - started


async def _wakeup_cost_s(wakeups: int = 200) -> float:
    """CPU this machine charges for one idle event-loop wakeup (a bare asyncio sleep)."""
    cpu_before = time.process_time()
    for _ in range(wakeups):
        await asyncio.sleep(REDRAW_WAIT_S)
    return (time.process_time() - cpu_before) / wakeups


class _OneCell(Widget):
    """A widget showing a counter: the least a Textual app can repaint."""

    count = 0

    def render(self) -> str:
        return str(self.count)


class _Floor(App[None]):
    CSS = "_OneCell { height: 1; width: 8; }"

    def compose(self) -> ComposeResult:
        yield _OneCell()
        yield Footer()


async def textual_floor(ticks: int) -> float:
    """CPU per tick of a Textual app that repaints one cell per tick, net of the same pacing."""
    app = _Floor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        cell = app.query_one(_OneCell)
        cpu_before = time.process_time()
        for _ in range(ticks):
            await asyncio.sleep(REDRAW_WAIT_S)
        pacing = (time.process_time() - cpu_before) / ticks
        cpu_before = time.process_time()
        for tick in range(ticks):
            cell.count = tick
            cell.refresh()
            await asyncio.sleep(REDRAW_WAIT_S)
        return (time.process_time() - cpu_before) / ticks - pacing


async def refresh_tick(scenario: str, ticks: int) -> tuple[float, float, int]:
    """Mean CPU per snapshot (the message, the findings handed over, the redraw), net of the pacing.

    Snapshots are posted one per `REDRAW_WAIT_S` with no polling in between; the same loop
    without snapshots is measured on the same app, and its CPU (the loop's own wakeups, the
    idle app) is subtracted. Returns (net per tick, pacing loop per tick, GPUs).
    """
    demo = DemoSource.open(scenario)
    snapshots = [demo.collect_at(tick) for tick in range(ticks)]
    findings = [tuple(diagnose(snapshot)) for snapshot in snapshots]  # the worker's job, not the tick's
    settle_heap()  # as `kvtop` does before it runs the app
    app = KvtopApp(_Replay(demo.label, snapshots[:1]), load_model, interval_s=3600.0)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.node.snapshot is not None)
        await pilot.pause()
        cpu_before = time.process_time()
        for _ in snapshots:
            await asyncio.sleep(REDRAW_WAIT_S)
        pacing = (time.process_time() - cpu_before) / ticks
        cpu_before = time.process_time()
        for snapshot, found in zip(snapshots, findings, strict=True):
            app.post_message(SnapshotArrived(snapshot, found))
            await asyncio.sleep(REDRAW_WAIT_S)  # the screen redraws within a frame (1/60 s)
            if app.node.snapshot is not snapshot:
                raise RuntimeError(
                    f"a snapshot was not shown within {REDRAW_WAIT_S} s: the figures would be wrong"
                )
        cpu = (time.process_time() - cpu_before) / ticks
        return cpu - pacing, pacing, len(snapshots[0].observation.gpus)


class _Counting:
    """The demo source, counting its collects."""

    def __init__(self, source: DemoSource) -> None:
        self.label = source.label
        self._source = source
        self.collects = 0

    def collect(self) -> NodeSnapshot:
        self.collects += 1
        return self._source.collect()


SETTLE_S = 2.0


async def idle(scenario: str, duration_s: float) -> tuple[float, int]:
    """CPU share of the app polling the demo node at 1 Hz; the script itself sleeps throughout."""
    source = _Counting(DemoSource.open(scenario))
    settle_heap()
    app = KvtopApp(source, load_model, interval_s=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.node.snapshot is not None)
        await asyncio.sleep(SETTLE_S)  # the rest of start-up (see the module docstring)
        collects_before = source.collects
        wall_before, cpu_before = time.perf_counter(), time.process_time()
        await asyncio.sleep(duration_s)
        wall, cpu = time.perf_counter() - wall_before, time.process_time() - cpu_before
        return cpu / wall, source.collects - collects_before


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, help="demo scenario (default: %(default)s)")
    parser.add_argument("--ticks", type=int, default=50, help="snapshots for the refresh-tick measurement")
    parser.add_argument(
        "--duration", type=float, default=60.0, help="seconds of idle polling at 1 Hz (default 60)"
    )
    args = parser.parse_args()
    print(f"kvtop UI benchmark · demo:{args.scenario} · {SIZE[0]}×{SIZE[1]} headless")
    wakeup = asyncio.run(_wakeup_cost_s())
    python_us = min(timeit.repeat("sum(range(1000))", number=2000, repeat=5)) / 2000 * 1e6
    floor = asyncio.run(textual_floor(args.ticks))
    print(
        f"this machine: sum(range(1000)) takes {python_us:.1f} µs (pure-Python speed, to compare machines);"
    )
    print(f"  one idle event-loop wakeup costs {wakeup * 1000:.3f} ms CPU (bare asyncio);")
    print(f"  a Textual app repainting one cell per tick costs {floor * 1000:.2f} ms per tick")
    print(f"start-up to first frame   {asyncio.run(start_up(args.scenario)) * 1000:8.1f} ms wall")
    per_tick, pacing, gpus = asyncio.run(refresh_tick(args.scenario, args.ticks))
    print(
        f"CPU per refresh tick      {per_tick * 1000:8.2f} ms ({gpus} GPUs, mean of {args.ticks};"
        f" the pacing loop's {pacing * 1000:.2f} ms taken off)"
    )
    share, collects = asyncio.run(idle(args.scenario, args.duration))
    print(
        f"idle CPU at 1 Hz          {share * 100:8.2f} % of one core over {args.duration:g} s"
        f" ({collects} collects, collect and diagnose included; from {SETTLE_S:g} s after the first snapshot)"
    )


if __name__ == "__main__":
    main()
