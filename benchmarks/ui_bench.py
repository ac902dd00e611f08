"""How fast and how light the TUI is, measured headless on the demo node (no GPU needed).

  start-up      wall time from constructing the app to the dashboard showing the first snapshot
  refresh tick  CPU (all threads) to take one 8-GPU snapshot and redraw, averaged over --ticks;
                the app's own cost (the loop sleeps while the screen redraws), and, for comparison
                with older figures, paced by the test pilot (whose pause() visits every widget and
                costs ≈ 5 ms of its own)
  idle          CPU share while the app polls the demo node at 1 Hz for --duration seconds (the
                loop sleeps; collect and diagnose in the worker thread included)

Numbers only, no assertions: `python benchmarks/ui_bench.py --duration 10`.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable

from kvtop.domain.diagnose import diagnose
from kvtop.domain.node import NodeSnapshot
from kvtop.sources.demo import DemoSource
from kvtop.sources.hub import load_model
from kvtop.sources.scenario import DEFAULT_SCENARIO
from kvtop.ui.app import KvtopApp
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
    started = time.perf_counter()
    app = KvtopApp(DemoSource.open(scenario), load_model, interval_s=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: bool(app.screen.query_one(GpuList).shown_gpus))
        await pilot.pause()
        return time.perf_counter() - started


async def _sleep_until(condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    """Wait without waking the app (a pilot pause visits every widget, which costs CPU of its own)."""
    deadline = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.001)


async def refresh_tick(scenario: str, ticks: int, *, paced_by_pilot: bool = False) -> tuple[float, int]:
    """Mean CPU per snapshot: the message, the diagnose findings handed over, and the redraw."""
    demo = DemoSource.open(scenario)
    snapshots = [demo.collect_at(tick) for tick in range(ticks)]
    findings = [tuple(diagnose(snapshot)) for snapshot in snapshots]  # the worker's job, not the tick's
    app = KvtopApp(_Replay(demo.label, snapshots[:1]), load_model, interval_s=3600.0)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.node.snapshot is not None)
        await pilot.pause()
        cpu_before = time.process_time()
        for snapshot, found in zip(snapshots, findings, strict=True):
            app.post_message(SnapshotArrived(snapshot, found))
            if paced_by_pilot:
                await _until(pilot, lambda s=snapshot: app.node.snapshot is s)
                await pilot.pause()
            else:
                await _sleep_until(lambda s=snapshot: app.node.snapshot is s)
                await asyncio.sleep(REDRAW_WAIT_S)  # the screen redraws within a frame (1/60 s)
        cpu = time.process_time() - cpu_before
        return cpu / ticks, len(snapshots[0].observation.gpus)


async def idle(scenario: str, duration_s: float) -> tuple[float, int]:
    source = DemoSource.open(scenario)
    app = KvtopApp(source, load_model, interval_s=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.node.snapshot is not None)
        seen: list[NodeSnapshot] = []
        wall_before, cpu_before = time.perf_counter(), time.process_time()
        while time.perf_counter() - wall_before < duration_s:
            await asyncio.sleep(0.25)
            if app.node.snapshot is not None and (not seen or seen[-1] is not app.node.snapshot):
                seen.append(app.node.snapshot)
        wall, cpu = time.perf_counter() - wall_before, time.process_time() - cpu_before
        return cpu / wall, len(seen)


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
    print(f"start-up to first frame   {asyncio.run(start_up(args.scenario)) * 1000:8.1f} ms wall")
    per_tick, gpus = asyncio.run(refresh_tick(args.scenario, args.ticks))
    print(f"CPU per refresh tick      {per_tick * 1000:8.2f} ms ({gpus} GPUs, mean of {args.ticks})")
    paced, _ = asyncio.run(refresh_tick(args.scenario, args.ticks, paced_by_pilot=True))
    print(f"  the same, pilot-paced   {paced * 1000:8.2f} ms (the pilot's own waits included)")
    share, snapshots = asyncio.run(idle(args.scenario, args.duration))
    print(
        f"idle CPU at 1 Hz          {share * 100:8.2f} % of one core over {args.duration:g} s ({snapshots} snapshots, collect included)"
    )


if __name__ == "__main__":
    main()
