"""A long fuzz run over every outside input kvtop reads: per kind, inputs tried, clean errors,
tracebacks, hangs, wall time and the slowest input.

The kinds and strategies are those of the CI test `tests/fuzz/test_fuzz_inputs.py` (`tests/fuzz/`):
engine logs through `kvtop explain`, launch flags and `--cmd` through `kvtop plan`, scenario files
through `kvtop snapshot --demo`, safetensors headers through `kvtop plan --model DIR`, each engine's
endpoint pages through its live reader, and Prometheus answers (with DCGM series) and the flags
around them through `kvtop cluster --prometheus`, plus the configs of `fuzz_configs.py`. Each input
runs in-process through the CLI's `main` (or the engine's reader) under a SIGALRM watchdog; every
`--subprocess-every` CLI inputs one also runs as the real command.

Run: `python benchmarks/fuzz_inputs.py [--inputs 10000] [--kinds log,flags,…] [--watchdog 10]`.
`--inputs` is the total, split evenly over the kinds. It prints a Markdown table and the first
tracebacks and hangs in full; the exit status is 1 when there was any.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["HF_HUB_OFFLINE"] = "1"  # a hub id in a mangled log must never reach the network

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

from tests.fuzz.kinds import KINDS  # noqa: E402
from tests.fuzz.runner import Outcome, classify  # noqa: E402


def signature(detail: str) -> str:
    """A failure's shape: its last line (the exception) and the deepest kvtop frame it passed."""
    frames = re.findall(r'File "[^"]*/(kvtop/[^"]+)", line (\d+), in (\w+)', detail)
    last = detail.strip().splitlines()[-1] if detail.strip() else "?"
    where = f" at {frames[-1][0]}:{frames[-1][1]} ({frames[-1][2]})" if frames else ""
    return f"{last[:140]}{where}"


def _subprocess(item: Any, folder: Path, watchdog_s: int) -> tuple[Outcome, str]:
    argv = item.write(folder)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kvtop", *argv],
            capture_output=True,
            text=True,
            timeout=watchdog_s + 30,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    except subprocess.TimeoutExpired:
        return Outcome.HANG, f"the real command ran past {watchdog_s + 30} s"
    return classify(
        done.returncode,
        done.stdout,
        done.stderr,
        findings_codes=item.findings_codes,
        json_key=item.json_key,
        json_out=item.json_out,
    )


def run_kind(
    kind: str,
    inputs: int,
    watchdog_s: int,
    subprocess_every: int,
    failures: list[str],
    shapes: collections.Counter[str],
) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix=f"kvtop-fuzz-{kind}-"))
    counts: collections.Counter[str] = collections.Counter()
    slowest = (0.0, "")

    @settings(
        max_examples=inputs,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(KINDS[kind]())
    def run(item: Any) -> None:
        nonlocal slowest
        begin = time.perf_counter()
        tried = sum(counts[o.value] for o in Outcome)
        if subprocess_every and hasattr(item, "write") and tried % subprocess_every == subprocess_every - 1:
            outcome, detail = _subprocess(item, folder, watchdog_s)
            counts["subprocess"] += 1
        else:
            outcome, detail = item.run(folder, watchdog_s)
        took = time.perf_counter() - begin
        if took > slowest[0]:
            slowest = (took, item.describe())
        counts[outcome.value] += 1
        if outcome in (Outcome.TRACEBACK, Outcome.HANG):
            failures.append(f"--- [{outcome.value}] {item.describe()}\n{detail}")
            shapes[f"{kind}: {signature(detail)}"] += 1

    started = time.perf_counter()
    run()
    return {"kind": kind, "counts": counts, "wall": time.perf_counter() - started, "slowest": slowest}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="in all, split evenly over the kinds")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--watchdog", type=int, default=10, help="seconds before an input counts as a hang")
    parser.add_argument("--subprocess-every", type=int, default=250, help="0: never run the real command")
    parser.add_argument("--show", type=int, default=8, help="how many failures to print in full")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    per_kind = max(1, args.inputs // len(kinds))
    failures: list[str] = []
    shapes: collections.Counter[str] = collections.Counter()
    rows = []
    for kind in kinds:
        rows.append(run_kind(kind, per_kind, args.watchdog, args.subprocess_every, failures, shapes))
        row = rows[-1]
        print(f"{kind}: {dict(row['counts'])} in {row['wall']:.0f} s", file=sys.stderr, flush=True)
    print("| kind | inputs | ok | clean errors | tracebacks | hangs | wall | slowest input |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    total: collections.Counter[str] = collections.Counter()
    wall = 0.0
    for row in rows:
        c = row["counts"]
        tried = sum(c[o.value] for o in Outcome)
        total.update(c)
        wall += row["wall"]
        sub = f" ({c['subprocess']} as the command)" if c["subprocess"] else ""
        print(
            f"| {row['kind']} | {tried:,}{sub} | {c['ok']:,} | {c['clean error']:,} | {c['traceback']:,} | {c['hang']:,} "
            f"| {row['wall']:.0f} s ({row['wall'] / max(tried, 1) * 1000:.0f} ms each) "
            f"| {row['slowest'][0] * 1000:,.0f} ms ({row['slowest'][1][:90]}) |"
        )
    tried = sum(total[o.value] for o in Outcome)
    print(
        f"| all | {tried:,} | {total['ok']:,} | {total['clean error']:,} | {total['traceback']:,} | {total['hang']:,} | {wall:.0f} s | |"
    )
    if shapes:
        print("\nfailure shapes (inputs):")
        for shape, n in shapes.most_common():
            print(f"  {n:>6,}  {shape}")
    for failure in failures[: args.show]:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
