"""Cost of one full collection (one TUI tick) over demo nodes: NVML view, attribution, endpoints,
predictions and the joined NodeSnapshot, as `DemoSource.collect_at` produces them.

Nodes: 8 GPUs with 64 processes (one SGLang TP8 engine + 56 co-tenants), 72 GPUs with 136
processes (nine TP8 engines + 64 co-tenants) and 72 GPUs with 576. The demo attributes processes
once per node (their identities never change), so a tick moves bytes, usage and live figures.
Target (reported, not asserted): ≤ 5 ms per tick for 8 GPUs.
Run: python benchmarks/tick_bench.py
"""

from __future__ import annotations

import statistics
import time

from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import generated_scenario

NODES = ((8, 64), (72, 136), (72, 576))
TICKS = 300


def measure(gpus: int, processes: int) -> tuple[float, float, float]:
    """(build ms, median tick ms, 95th-percentile tick ms)."""
    start = time.perf_counter()
    source = DemoSource(generated_scenario(gpus, processes))
    source.collect_at(0)  # first tick: predictions are made and cached
    build = time.perf_counter() - start
    times = []
    for tick in range(1, TICKS + 1):
        start = time.perf_counter()
        source.collect_at(tick)
        times.append(time.perf_counter() - start)
    times.sort()
    return build * 1000, statistics.median(times) * 1000, times[int(0.95 * len(times))] * 1000


def main() -> None:
    print(f"{'node':<26}{'first tick':>12}{'median tick':>13}{'p95 tick':>11}")
    for gpus, processes in NODES:
        build, median, p95 = measure(gpus, processes)
        label = f"{gpus} GPUs, {processes} processes"
        target = "  (target ≤ 5 ms)" if gpus == 8 else ""
        print(f"{label:<26}{build:>9.1f} ms{median:>10.2f} ms{p95:>8.2f} ms{target}")


if __name__ == "__main__":
    main()
