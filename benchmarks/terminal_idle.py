"""Idle CPU of the real `kvtop --demo` in a terminal, beside a minimal Textual app in the same terminal.

`ui_bench.py` measures the app headless, where Textual writes nothing to a terminal. Here the
real command runs in a pseudo-terminal of 160×48: its output is read (and thrown away) as a
terminal would, and its CPU (all threads: Textual's input and writer threads included) is read
from the kernel with psutil over --duration seconds, after --settle seconds of start-up.

The floor is a Textual app showing one counter that changes once a second: what any Textual
app pays here for its driver (its input thread polls the terminal ten times a second) and one
small repaint per second.

`python benchmarks/terminal_idle.py --duration 60`. Numbers only, no assertions.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

import psutil

ROWS, COLUMNS = 48, 160

FLOOR_APP = """
from textual.app import App
from textual.widgets import Footer, Static

class Counter(App):
    def compose(self):
        yield Static("0", id="count")
        yield Footer()

    def on_mount(self):
        self.count = 0
        self.set_interval(1.0, self.tick)

    def tick(self):
        self.count += 1
        self.query_one("#count", Static).update(str(self.count))

Counter().run()
"""


def _read_for(fd: int, seconds: float) -> int:
    """Read the terminal's output for `seconds`; the bytes read."""
    end, received = time.monotonic() + seconds, 0
    while (left := end - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                received += len(os.read(fd, 1 << 16))
            except OSError:  # the program has gone
                break
    return received


def idle_in_terminal(argv: list[str], settle_s: float, duration_s: float) -> tuple[float, float]:
    """Run `argv` in a 160×48 pseudo-terminal; (CPU share of one core, bytes per second written)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: size the terminal, then become the program
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        os.environ.update(TERM="xterm-256color", COLORTERM="truecolor")
        os.execv(argv[0], argv)
    process = psutil.Process(pid)
    try:
        _read_for(fd, settle_s)
        before, started = process.cpu_times(), time.monotonic()
        received = _read_for(fd, duration_s)
        after, wall = process.cpu_times(), time.monotonic() - started
        cpu = (after.user + after.system) - (before.user + before.system)
        return cpu / wall, received / wall
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=60.0, help="seconds measured (default 60)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds of start-up left out (default 5)")
    args = parser.parse_args()
    kvtop = os.path.join(os.path.dirname(sys.executable), "kvtop")
    runs = {
        "Textual floor (one counter, 1 Hz)": [sys.executable, "-c", FLOOR_APP],
        "kvtop --demo (8 GPUs, 1 Hz)": [kvtop, "--demo"],
    }
    print(
        f"idle CPU in a {COLUMNS}×{ROWS} pseudo-terminal, {args.duration:g} s after {args.settle:g} s of start-up"
    )
    for label, argv in runs.items():
        share, rate = idle_in_terminal(argv, args.settle, args.duration)
        print(f"  {label:36s} {share * 100:5.2f} % of one core, {rate / 1000:5.1f} kB/s to the terminal")


if __name__ == "__main__":
    main()
