"""Speed of the ledger: cold `kvtop plan --json` vs a bare Python start, one ledger, a 1,000-plan sweep.

The ledger remembers its solves (kvtop/domain/memo.py): "one ledger" solves from scratch each
time; the sweep's 1,000 settings are all different (the weights book of a layout is reused).

Targets (reported, not asserted): one ledger ≤ 1 ms, the sweep ≤ 0.5 s.
Run: python benchmarks/plan_bench.py
"""

from __future__ import annotations

import itertools
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import forget_solved, predict
from kvtop.domain.model_config import model_from_config

ROOT = Path(__file__).resolve().parents[1]
PRESET = ROOT / "examples" / "models" / "llama-3-70b.json"


def wall(cmd: list[str], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    bare = wall([sys.executable, "-c", "pass"])
    cold = wall([sys.executable, "-m", "kvtop", "plan", "--json", "--model", str(PRESET), "--tp", "8"])
    print(f"bare python start           {bare * 1000:8.1f} ms")
    print(
        f"cold kvtop plan --json      {cold * 1000:8.1f} ms  (+{(cold - bare) * 1000:.1f} ms over bare python)"
    )
    model = model_from_config(json.loads(PRESET.read_text()), source=str(PRESET))
    settings = parse_flags("sglang", ["--tp", "8"])
    predict(model, settings, gpu_total_bytes=81559 << 20)
    runs = 200
    solving = 0.0
    for _ in range(runs):
        forget_solved()  # a solve from scratch: the ledger remembers what it solved
        start = time.perf_counter()
        predict(model, settings, gpu_total_bytes=81559 << 20)
        solving += time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(runs):
        predict(model, settings, gpu_total_bytes=81559 << 20)
    again = (time.perf_counter() - start) / runs
    print(f"one ledger (TP8, 8 ranks)   {solving / runs * 1000:8.3f} ms  (target ≤ 1 ms)")
    print(f"the same ledger again       {again * 1000:8.3f} ms  (remembered)")
    forget_solved()
    grid = list(
        itertools.product(("sglang", "vllm"), (1, 2, 4, 8), ("auto", "fp8_e4m3"), (0.8, 0.85, 0.9), range(21))
    )[:1000]
    start = time.perf_counter()
    for engine, tp, dtype, fraction, step in grid:
        flag = "--mem-fraction-static" if engine == "sglang" else "--gpu-memory-utilization"
        s = parse_flags(
            engine,
            [
                "--tp",
                str(tp),
                "--kv-cache-dtype",
                dtype,
                flag,
                str(fraction),
                "--context-length",
                str(4096 * (step + 1)),
            ],
        )
        predict(model, s, gpu_total_bytes=(143771 if step % 2 else 81559) << 20)
    sweep = time.perf_counter() - start
    print(f"sweep of {len(grid)} configurations {sweep * 1000:8.1f} ms  (target ≤ 500 ms)")


if __name__ == "__main__":
    main()
