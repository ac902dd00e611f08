"""How fast kvtop starts: `kvtop --help` and a cold `kvtop plan --json`, as ratios to a bare Python.

Targets (issue 16; reported, never asserted): `kvtop --help` ≤ 4× a bare `python -c pass`, and a
cold `kvtop plan --model llama-3-70b --json` ≤ 2× a bare `python -c "import pydantic"`.

Like hyperfine, but with the ratios in one run: every command is a fresh process ("cold": no
state kept between runs; the .pyc files are warm, as they are after any install), the commands
are interleaved round by round in a shuffled order (a noisy neighbour then slows every command
alike rather than one), warm-up rounds are discarded, and medians are reported with the
quartiles. Each run's CPU time (user + system, from wait4) is reported beside its wall time: on
a shared machine the CPU ratio is the steadier one. kvtop runs as its console script does
(`from kvtop.cli import main`), from this checkout (PYTHONPATH), under the same interpreter as
the baselines, with HF_HUB_OFFLINE=1 (a preset never needs the hub).

A reference row, a process that builds one trivial pydantic model, shows the floor under any
command whose path validates a pydantic model (as `plan` does).

Run: python benchmarks/startup_bench.py [--runs 40] [--warmup 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: `kvtop ARGS` exactly as the installed console script runs it (see [project.scripts]).
ENTRY = "import sys; from kvtop.cli import main; sys.exit(main())"

#: The least any process that builds one pydantic model pays: `import pydantic` is lazy, and the
#: first model imports pydantic's schema machinery and its plugin loader (importlib.metadata).
ONE_MODEL = "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int\nM(x=1)"

COMMANDS: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    'python -c "import pydantic"': ["-c", "import pydantic"],
    "python: one pydantic model (reference)": ["-c", ONE_MODEL],
    "kvtop --help": ["-c", ENTRY, "--help"],
    "kvtop plan --model llama-3-70b --json": ["-c", ENTRY, "plan", "--model", "llama-3-70b", "--json"],
}
#: (command, baseline, target ratio); the reference row has no target (None): it shows the floor
TARGETS = (
    ("kvtop --help", "python -c pass", 4.0),
    ("kvtop plan --model llama-3-70b --json", 'python -c "import pydantic"', 2.0),
    ("python: one pydantic model (reference)", 'python -c "import pydantic"', None),
)


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one fresh process; its output is discarded."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, *argv], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"python {' '.join(argv)} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(runs: int, warmup: int, seed: int) -> dict[str, dict[str, list[float]]]:
    """command → {"wall": [...], "cpu": [...]}: every command `runs` times, shuffled each round."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    names = list(COMMANDS)
    order = random.Random(seed)
    times: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in names}
    for round_index in range(warmup + runs):
        order.shuffle(names)
        for name in names:
            wall, cpu = run_once(COMMANDS[name], env)
            if round_index >= warmup:
                times[name]["wall"].append(wall)
                times[name]["cpu"].append(cpu)
    return times


def ratios(medians: dict[str, dict[str, float]]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for command, baseline, target in TARGETS:
        wall = medians[command]["wall"] / medians[baseline]["wall"]
        cpu = medians[command]["cpu"] / medians[baseline]["cpu"]
        rows.append({
            "command": command, "baseline": baseline, "target": target,
            "wall_ratio": round(wall, 2), "cpu_ratio": round(cpu, 2),
            "met": None if target is None else wall <= target,
        })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="measured rounds (default 40)")
    parser.add_argument("--warmup", type=int, default=3, help="rounds discarded first (default 3)")
    parser.add_argument("--seed", type=int, default=16, help="seed of the shuffled order")
    parser.add_argument("--json", action="store_true", help="print the medians and ratios as JSON")
    args = parser.parse_args()
    times = measure(args.runs, args.warmup, args.seed)
    medians = {
        name: {kind: statistics.median(values) for kind, values in kinds.items()} for name, kinds in times.items()
    }
    rows = ratios(medians)
    if args.json:
        print(json.dumps({"runs": args.runs, "median_s": medians, "ratios": rows}, indent=1))
        return
    print(f"{args.runs} interleaved rounds after {args.warmup} warm-up ({sys.executable})")
    print(f"  {'command':<40} {'wall median':>11} {'(quartiles)':>17} {'CPU median':>11}")
    for name, kinds in times.items():
        q1, q3 = (value * 1000 for value in statistics.quantiles(kinds["wall"], n=4)[::2])
        print(f"  {name:<40} {medians[name]['wall'] * 1000:8.1f} ms  ({q1:6.1f}–{q3:6.1f} ms) "
              f"{medians[name]['cpu'] * 1000:8.1f} ms")
    for row in rows:
        verdict = "no target" if row["met"] is None else f"target ≤ {row['target']:g}×: " + (
            "met" if row["met"] else "NOT met"
        )
        print(f"  {row['command']:<40} {row['wall_ratio']:5.2f}× wall, {row['cpu_ratio']:5.2f}× CPU of "
              f"{row['baseline']}  ({verdict})")


if __name__ == "__main__":
    main()
