"""One fuzzed input through the CLI's `main`, in this process, under a watchdog; its outcome sorted.

The contract every outside input is held to: exit 0 with the command's output (or the exit a command
documents for findings, with its one line), or exit 2 with ONE stderr line `kvtop: error: …` —
never a traceback, never a hang. `SystemExit` is what argparse raises for a bad flag: its code is the
exit status, as it would be for the real command.
"""

from __future__ import annotations

import io
import json
import re
import signal
import traceback
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class Outcome(str, Enum):
    OK = "ok"  # exit 0 (or a documented findings exit) and the command's output
    CLEAN_ERROR = "clean error"  # exit 2 and one line "kvtop: error: …" (or a named state, one line)
    TRACEBACK = "traceback"  # an exception escaped, or the exit or output broke the contract
    HANG = "hang"  # still running at the watchdog


class Hang(BaseException):
    """Raised by the watchdog's SIGALRM (a BaseException, so no `except Exception` swallows it)."""


#: A wait that burns no CPU (a socket, a lock) is a hang after this many times the CPU allowance.
WALL_FACTOR = 30


@contextmanager
def watchdog(seconds: int) -> Iterator[None]:
    """Raise `Hang` in the main thread when the block has used `seconds` of CPU (a loop that never ends),
    or WALL_FACTOR times that of wall time (a wait that never ends): a guard against hangs that a
    loaded machine does not trip, never a speed budget."""

    def alarm(signum: int, frame: Any) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, alarm), signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.alarm(seconds * WALL_FACTOR)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous[0])
        signal.signal(signal.SIGPROF, previous[1])


def guarded(call: Callable[[], T], watchdog_s: int) -> tuple[T | None, Outcome | None, str]:
    """(result, None, '') or (None, HANG / TRACEBACK, what happened)."""
    try:
        with watchdog(watchdog_s):
            return call(), None, ""
    except Hang:
        return None, Outcome.HANG, f"still running after {watchdog_s} s of CPU (or {watchdog_s * WALL_FACTOR} s)"
    except BaseException:  # noqa: BLE001 - what escapes is exactly what is being counted
        return None, Outcome.TRACEBACK, traceback.format_exc()


def run_main(argv: Sequence[str], *, watchdog_s: int = 10) -> tuple[Outcome | None, int, str, str]:
    """`kvtop.cli.main(argv)` with its output captured: (HANG/TRACEBACK or None, exit, stdout, stderr)."""
    from kvtop.cli import main

    out, err = io.StringIO(), io.StringIO()

    def call() -> int:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                return main(list(argv))
            except SystemExit as done:  # argparse's one-line error: the exit the command would have
                return done.code if isinstance(done.code, int) else 2

    code, failed, detail = guarded(call, watchdog_s)
    if failed is not None:
        return failed, 1, out.getvalue(), detail + err.getvalue()[-2000:]
    return None, int(code or 0), out.getvalue(), err.getvalue()


_ERROR_LINE = re.compile(
    r"kvtop(?: [a-z-]+)?: error: "
)  # `kvtop: error:` (argparse's refusals too, since session 72)
_NOTE_LINE = re.compile(r"kvtop: note: ")  # what kvtop did with the input (e.g. --cmd flags it ignored)


def classify(
    code: int,
    stdout: str,
    stderr: str,
    *,
    findings_codes: Collection[int] = (),
    json_key: str | None = None,
    json_out: bool = True,
) -> tuple[Outcome, str]:
    """The outcome of one run from its exit code and output.

    Exit 0 prints the command's output (with `json_out`, a JSON object holding `json_key` where given)
    and at most one stderr line; a code in `findings_codes` is a result too; exit 2 is one line
    `kvtop: error: …` (argparse's form names the command), after any `kvtop: note: …` lines.
    Anything else broke the contract."""
    lines = stderr.splitlines()
    if "Traceback" in stderr:
        return Outcome.TRACEBACK, f"exit {code}: {stderr[-2000:]}"
    if (code == 0 or code in findings_codes) and not json_out:
        if not stdout.strip() or len(lines) > 1:
            return Outcome.TRACEBACK, f"exit {code}, {len(stdout)} characters out, stderr {stderr[-2000:]!r}"
        return Outcome.OK, ""
    if code == 0 or code in findings_codes:
        try:
            document = json.loads(stdout)
        except ValueError:
            return Outcome.TRACEBACK, f"exit {code} without JSON: {stdout[:300]!r}"
        if not isinstance(document, dict) or (json_key is not None and json_key not in document):
            return Outcome.TRACEBACK, f"exit {code} without the command's JSON: {stdout[:300]!r}"
        if len(lines) > 1:
            return Outcome.TRACEBACK, f"exit {code} with {len(lines)} stderr lines: {stderr[-2000:]}"
        return Outcome.OK, ""
    if code == 2 and lines and _ERROR_LINE.match(lines[-1]) and all(_NOTE_LINE.match(n) for n in lines[:-1]):
        return Outcome.CLEAN_ERROR, lines[-1]
    return Outcome.TRACEBACK, f"exit {code}: {stderr[-2000:]}"


def run_cli(
    argv: Sequence[str],
    *,
    watchdog_s: int = 10,
    findings_codes: Collection[int] = (),
    json_key: str | None = None,
    json_out: bool = True,
) -> tuple[Outcome, str]:
    """`kvtop <argv>` in-process under the watchdog, classified."""
    failed, code, out, err = run_main(argv, watchdog_s=watchdog_s)
    if failed is not None:
        return failed, err
    return classify(code, out, err, findings_codes=findings_codes, json_key=json_key, json_out=json_out)


def clear(folder: Path) -> None:
    """Remove what an earlier input wrote into `folder` (a file one input has, the next may not)."""
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
