"""A long fuzz run over the real configs: inputs tried, plans, clean errors, tracebacks, hangs.

The same strategies as `tests/domain/test_config_fuzz.py` (`tests/domain/config_mutations.py`:
wrong types, deletions, overflows, unicode, truncation, huge values, flipped bytes, on config.json
and its hf_quant_config.json) through the same entry point as `kvtop plan --model FILE --json`,
in-process, with a SIGALRM watchdog per input (a run past it counts as a hang). Every
`--subprocess-every` inputs one also runs as the real command.

Run: `python benchmarks/fuzz_configs.py [--inputs 10000] [--watchdog 10] [--subprocess-every 500]`.
It prints the counts, the most common error fields, and the first tracebacks in full.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

from tests.domain.config_mutations import Outcome, Planted, classify, plan_in_process, planted_configs

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--watchdog", type=int, default=10, help="seconds before an input counts as a hang")
    parser.add_argument("--subprocess-every", type=int, default=500, help="0: never run the real command")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="kvtop-fuzz-configs-"))
    counts: collections.Counter[str] = collections.Counter()
    fields: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    slowest = (0.0, "")
    started = time.perf_counter()

    @settings(
        max_examples=args.inputs,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(planted_configs())
    def run(planted: Planted) -> None:
        nonlocal slowest
        path = planted.write(folder)
        tried = sum(counts.values())
        begin = time.perf_counter()
        if args.subprocess_every and tried % args.subprocess_every == 0:
            done = subprocess.run(
                [sys.executable, "-m", "kvtop", "plan", "--model", str(path), "--json"],
                capture_output=True,
                text=True,
                timeout=args.watchdog + 30,
                cwd=ROOT,
            )
            outcome, detail = classify(done.returncode, done.stdout, done.stderr)
            counts["subprocess runs"] += 1
        else:
            outcome, detail = plan_in_process(path, watchdog_s=args.watchdog)
        took = time.perf_counter() - begin
        if took > slowest[0]:
            slowest = (took, f"{planted.name} {planted.mutations}")
        counts[outcome.value] += 1
        if outcome is Outcome.CLEAN_ERROR:
            match = re.match(r"kvtop: error: ([^:]+):", detail)
            fields[match.group(1) if match else detail[14:60]] += 1
        elif outcome in (Outcome.TRACEBACK, Outcome.HANG):
            failures.append(f"--- {planted.name} {planted.mutations}\n{detail}")

    run()
    elapsed = time.perf_counter() - started
    tried = sum(counts[o.value] for o in Outcome)
    print(f"inputs tried {tried:,} in {elapsed:.0f} s ({elapsed / max(tried, 1) * 1000:.1f} ms each)")
    for outcome in Outcome:
        print(f"  {outcome.value:<12} {counts[outcome.value]:>7,}")
    print(f"  (real command in a subprocess for {counts['subprocess runs']:,} of them)")
    print(f"slowest input: {slowest[0] * 1000:.0f} ms ({slowest[1][:160]})")
    print("most common error fields:")
    for field, n in fields.most_common(12):
        print(f"  {n:>6,}  {field}")
    for failure in failures[:5]:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
