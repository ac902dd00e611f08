"""`kvtop export` under a crowd: bursts of simultaneous scrapes, then a thousand idle connections.

Starts `python -m kvtop export --demo --listen 127.0.0.1:0` in a subprocess (the tree on
`--pythonpath`, default this checkout) and drives it from one asyncio client thread:

1. bursts: `--bursts` × `--burst-size` scrapes of /metrics opened at the same instant (1 s
   apart); each has `--timeout` seconds (Prometheus' default scrape_timeout is 10 s) from its
   connect to the last byte of its page. Reports p50/p99 and errors (timeouts, refused/reset
   connections, statuses other than 200).
2. idle: `--idle` connections (10 every 20 ms) that send half a request head (`GET /metrics
   HTTP/1.1` and one header) and then nothing; while they are held, `--probes` scrapes one after another must
   still be served. After `--hold` seconds reports how many of the idle connections the exporter
   has closed (it should, after its header timeout).

The exporter's thread count (psutil) is sampled every 20 ms throughout; its maximum per phase
is reported. Goal: every scrape served, p99 under 1 s, threads bounded (not one per connection).

    .venv/bin/python benchmarks/exporter_bench.py [--bursts 5] [--burst-size 200] [--idle 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
PARTIAL_HEAD = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # the blank line that ends it never comes
IDLE_BATCH = 10  # idle connections opened together, every 20 ms
SERVING = re.compile(r"http://127\.0\.0\.1:(\d+)/metrics")


@dataclass
class Outcome:
    """One scrape: seconds from connect to the page's last byte, and what went wrong (None: 200)."""

    seconds: float
    error: str | None


@dataclass
class ThreadSampler:
    """Samples the exporter's thread count every 20 ms; `phase` names where the samples go."""

    process: psutil.Process
    phase: str = "start"
    peaks: dict[str, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self._stop.wait(0.02):
            try:
                count = self.process.num_threads()
            except psutil.Error:
                return
            self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), count)

    def enter(self, phase: str) -> None:
        """Samples from now on count for `phase` (sampled once at once: a phase may be short)."""
        self.phase = phase
        self.peaks[phase] = max(self.peaks.get(phase, 0), self.process.num_threads())

    def stop(self) -> None:
        self._stop.set()


def start_exporter(pythonpath: Path, interval_s: float) -> tuple[subprocess.Popen[str], int]:
    """The exporter process and the port it serves on (read from its start-up line)."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    command = [
        sys.executable,
        "-m",
        "kvtop",
        "export",
        "--demo",
        "--listen",
        "127.0.0.1:0",
        "--interval",
        f"{interval_s:g}",
    ]
    process = subprocess.Popen(command, env=env, cwd=pythonpath, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        found = SERVING.search(line)
        if found:
            threading.Thread(target=lambda: [None for _ in process.stderr or ()], daemon=True).start()
            return process, int(found.group(1))
    raise SystemExit(f"the exporter did not start (exit {process.wait()})")


async def scrape(port: int) -> Outcome:
    """One GET /metrics on a new connection, read to EOF (no deadline: see `scrape_within`)."""
    started = time.perf_counter()
    writer = None
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(REQUEST)
        page = await reader.read()
        status = page[9:12]
        error = None if status == b"200" else f"status {status.decode(errors='replace') or 'none'}"
    except OSError as err:
        error = type(err).__name__
    finally:
        if writer is not None:
            writer.close()
    return Outcome(time.perf_counter() - started, error)


async def scrape_within(port: int, timeout_s: float) -> Outcome:
    """`scrape`, counted as a timeout when it takes longer than `timeout_s`."""
    started = time.perf_counter()
    try:
        return await asyncio.wait_for(scrape(port), timeout_s)
    except asyncio.TimeoutError:
        return Outcome(time.perf_counter() - started, "timeout")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def summary(outcomes: list[Outcome]) -> str:
    seconds = [o.seconds for o in outcomes]
    errors: dict[str, int] = {}
    for outcome in outcomes:
        if outcome.error:
            errors[outcome.error] = errors.get(outcome.error, 0) + 1
    served = len(outcomes) - sum(errors.values())
    shown = ", ".join(f"{count} {kind}" for kind, count in sorted(errors.items())) or "none"
    return (
        f"served {served}/{len(outcomes)}  p50 {statistics.median(seconds) * 1000:.1f} ms  "
        f"p99 {percentile(seconds, 0.99) * 1000:.1f} ms  max {max(seconds) * 1000:.1f} ms  errors: {shown}"
    )


async def bursts(port: int, args: argparse.Namespace, sampler: ThreadSampler) -> list[Outcome]:
    sampler.enter("bursts")
    everything: list[Outcome] = []
    for burst in range(args.bursts):
        outcomes = await asyncio.gather(*(scrape_within(port, args.timeout) for _ in range(args.burst_size)))
        print(f"  burst {burst + 1}: {summary(list(outcomes))}")
        everything.extend(outcomes)
        await asyncio.sleep(1.0)
    return everything


async def open_idle(port: int, timeout_s: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout_s)
    except (OSError, asyncio.TimeoutError):
        return None
    writer.write(PARTIAL_HEAD)
    return reader, writer


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """True when the exporter has answered or closed the idle connection (no wait)."""
    try:
        await asyncio.wait_for(reader.read(4096), 0.01)
        return True  # an answer (408) or EOF
    except asyncio.TimeoutError:
        return False
    except OSError:
        return True


def accepted(process: psutil.Process, port: int) -> int:
    """Connections the exporter has accepted (its sockets on `port`, the listening one excepted)."""
    return sum(1 for c in process.net_connections(kind="tcp") if c.laddr and c.laddr.port == port and c.raddr)


async def idle(port: int, args: argparse.Namespace, sampler: ThreadSampler) -> None:
    sampler.enter("idle")
    started = time.perf_counter()
    opened: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    for _ in range(0, args.idle, IDLE_BATCH):  # a steady arrival, not one burst: each gets accepted
        batch = await asyncio.gather(*(open_idle(port, args.timeout) for _ in range(IDLE_BATCH)))
        opened += [connection for connection in batch if connection]
        await asyncio.sleep(0.02)
    print(f"  {len(opened)}/{args.idle} idle connections open in {time.perf_counter() - started:.2f} s")
    await asyncio.sleep(1.0)
    print(
        f"  with them held: exporter threads {sampler.process.num_threads()}, "
        f"connections it has accepted {accepted(sampler.process, port)}"
    )
    sampler.enter("probes")
    probes = [await scrape_within(port, args.timeout) for _ in range(args.probes)]
    print(f"  {args.probes} scrapes while they are held: {summary(probes)}")
    sampler.enter("hold")
    await asyncio.sleep(max(0.0, args.hold - (time.perf_counter() - started)))
    closed = sum(await asyncio.gather(*(closed_by_server(reader) for reader, _ in opened)))
    print(
        f"  after {time.perf_counter() - started:.0f} s the exporter had closed {closed}/{len(opened)} of them; "
        f"threads now {sampler.process.num_threads()}, accepted connections {accepted(sampler.process, port)}"
    )
    for _, writer in opened:
        writer.close()


async def main_async(port: int, args: argparse.Namespace, sampler: ThreadSampler) -> None:
    print(f"bursts: {args.bursts} × {args.burst_size} simultaneous scrapes, timeout {args.timeout:g} s each")
    outcomes = await bursts(port, args, sampler)
    print(f"  all bursts: {summary(outcomes)}")
    print(f"  exporter threads, most seen during the bursts: {sampler.peaks.get('bursts')}")
    print(f"idle: {args.idle} connections sending half a request head, held {args.hold:g} s")
    await idle(port, args, sampler)
    print(
        f"  exporter threads, most seen: idle {sampler.peaks.get('idle')}, "
        f"probes {sampler.peaks.get('probes')}, hold {sampler.peaks.get('hold')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bursts", type=int, default=5)
    parser.add_argument("--burst-size", type=int, default=200)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=20, help="scrapes while the idle connections are held")
    parser.add_argument("--hold", type=float, default=15.0, help="seconds the idle connections are held")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds each scrape may take")
    parser.add_argument("--interval", type=float, default=5.0, help="the exporter's --interval")
    parser.add_argument("--pythonpath", type=Path, default=REPO, help="the kvtop tree the exporter runs from")
    args = parser.parse_args()

    process, port = start_exporter(args.pythonpath, args.interval)
    exporter = psutil.Process(process.pid)
    print(
        f"exporter pid {process.pid} on port {port} ({args.pythonpath}); "
        f"threads at start {exporter.num_threads()}, RSS {exporter.memory_info().rss / 2**20:.1f} MiB"
    )
    sampler = ThreadSampler(exporter)
    threading.Thread(target=sampler.run, daemon=True).start()
    try:
        asyncio.run(main_async(port, args, sampler))
        print(f"exporter RSS at the end {exporter.memory_info().rss / 2**20:.1f} MiB")
    finally:
        sampler.stop()
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
