"""How long `kvtop explain` takes to parse a 50,000-line engine log (a speed measurement, not a test).

The log is built by repeating real case logs from tests/data/cases (every line is one the
parser acts on, so this is the slow path), plus one SGLang case repeated on its own.
Run: `.venv/bin/python benchmarks/explain_bench.py [lines]`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kvtop.sources.engine_logs import parse_engine_log
from tests.data_paths import CASES


def repeated_log(paths: list[Path], target_lines: int) -> str:
    """The given logs concatenated, repeated until the text has `target_lines` lines."""
    lines = [line for path in paths for line in path.read_text().splitlines()]
    copies = target_lines // len(lines) + 1
    return "\n".join((lines * copies)[:target_lines])


def time_parse(label: str, text: str, rounds: int = 3) -> None:
    """Print the best of `rounds` parse times (wall and CPU) and what the parse found."""
    best_wall = best_cpu = float("inf")
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        log = parse_engine_log(text, source=label)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    ranks = len(log.sglang_ranks) + len(log.vllm_ranks)
    print(
        f"{label:<30} {log.lines_total:>7,} lines  wall {best_wall * 1000:7.1f} ms  cpu {best_cpu * 1000:7.1f} ms  "
        f"engine={log.engine} ranks={ranks} parsed={log.lines_parsed:,}"
    )


def main() -> None:
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    start = time.perf_counter()
    sum(range(1_000_000))
    print(f"reference: sum(range(10**6)) takes {(time.perf_counter() - start) * 1000:.1f} ms on this machine")
    time_parse(
        "sglang C24 (draft + summary)", repeated_log([CASES / "sglang" / "C24" / "engine.log"], target)
    )
    time_parse(
        "vllm glm52 (full ledger)",
        repeated_log([CASES / "vllm" / "glm52-nvfp4-tp4-v0260-fulllog" / "engine.log"], target),
    )
    time_parse("every case log", repeated_log(sorted(CASES.glob("*/*/engine.log")), target))
    filler = "[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 3, #token: 1024, token usage: 0.01\n"
    time_parse("mostly unrecognised lines", filler * target)


if __name__ == "__main__":
    main()
