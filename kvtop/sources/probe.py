"""Runs the probe worker in a child process and makes sure its memory comes back.

The child (`python -m kvtop.sources.probe_worker`) gets the request as JSON on stdin and answers
with one result line on stdout. It runs in its own process group, so a timeout, a caller's
cancel (a `threading.Event` the TUI can set) or Ctrl-C kills the whole group: the CUDA context
and every byte go with it. After the child is gone the parent checks that free memory came back.

Ctrl-C (KeyboardInterrupt) while waiting is not re-raised: the child is killed, reaped and
checked, and the result is `CANCELLED`, so a caller always gets a result saying whether the
memory came back.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import ValidationError

import kvtop
from kvtop.domain.probe import RELEASE_TOLERANCE_BYTES, ProbeOutcome, ProbeRequest, ProbeResult
from kvtop.domain.redact import redact_shown

WORKER_MODULE = "kvtop.sources.probe_worker"
#: The worker compares its parent with this pid (see probe_worker: it dies with its parent).
PARENT_PID_ENV = "KVTOP_PROBE_PARENT_PID"

#: How long the parent waits, after the child is gone, for the driver to show the memory back.
RELEASE_SETTLE_S = 5.0

FreeMemoryReader = Callable[[], int]


@dataclass(frozen=True)
class _Ending:
    """How the wait ended: the child's exit code, or why the parent killed it."""

    returncode: int | None
    killed_for: ProbeOutcome | None
    stdout: str
    stderr: str


def _child_env(request: ProbeRequest, extra_env: Mapping[str, str] | None) -> dict[str, str]:
    """The child's environment: kvtop importable, and `cuda:N` meaning NVML's GPU N."""
    env = dict(os.environ)
    env.update(extra_env or {})
    env[PARENT_PID_ENV] = str(os.getpid())
    package_root = Path(kvtop.__file__).resolve().parents[1]
    if package_root.name not in ("site-packages", "dist-packages"):  # a source checkout
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join([*paths, str(package_root)])
    if request.device.startswith("cuda"):
        env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        env.pop("CUDA_VISIBLE_DEVICES", None)
    return env


def _drain(stream: IO[bytes], sink: list[bytes]) -> None:
    sink.append(stream.read())


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return


def _group_gone(pgid: int) -> bool:
    """True when no process of the child's group is left."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _wait(
    proc: subprocess.Popen[bytes], deadline: float, cancel: threading.Event | None, poll_s: float
) -> ProbeOutcome | None:
    """Wait for the child; kill its group on timeout, cancel or Ctrl-C and say which."""
    killed_for: ProbeOutcome | None = None
    try:
        while proc.poll() is None:
            if cancel is not None and cancel.is_set():
                killed_for = ProbeOutcome.CANCELLED
            elif time.monotonic() >= deadline:
                killed_for = ProbeOutcome.TIMEOUT
            if killed_for is not None:
                break
            try:
                proc.wait(timeout=poll_s)
            except subprocess.TimeoutExpired:
                continue
    except KeyboardInterrupt:
        killed_for = ProbeOutcome.CANCELLED
    _kill_group(proc.pid)  # also catches anything the child left behind in its group
    proc.wait()
    return killed_for


def _launch(
    request: ProbeRequest,
    python: str,
    timeout_s: float,
    cancel: threading.Event | None,
    extra_env: Mapping[str, str] | None,
    poll_s: float,
) -> tuple[_Ending, int]:
    proc = subprocess.Popen(
        [python, "-m", WORKER_MODULE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_child_env(request, extra_env),
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    interrupted = False
    try:
        proc.stdin.write(request.model_dump_json().encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the child died before reading; its exit code and stderr say why
    except KeyboardInterrupt:
        interrupted = True  # Ctrl-C while handing over the request: kill at once
    if interrupted:
        _kill_group(proc.pid)
        proc.wait()
        killed_for: ProbeOutcome | None = ProbeOutcome.CANCELLED
    else:
        killed_for = _wait(proc, time.monotonic() + timeout_s, cancel, poll_s)
    for reader in readers:
        reader.join(timeout=5.0)
    ending = _Ending(
        returncode=proc.returncode,
        killed_for=killed_for,
        stdout=b"".join(out).decode(errors="replace"),
        stderr=b"".join(err).decode(errors="replace"),
    )
    return ending, proc.pid


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _parse(request: ProbeRequest, ending: _Ending, timeout_s: float) -> ProbeResult:
    """The worker's result, or a named result for a child that was killed or died."""
    if ending.killed_for is ProbeOutcome.TIMEOUT:
        return ProbeResult.unmeasured(
            request, ProbeOutcome.TIMEOUT, f"the probe ran past {timeout_s:g} s and was killed"
        )
    if ending.killed_for is ProbeOutcome.CANCELLED:
        return ProbeResult.unmeasured(request, ProbeOutcome.CANCELLED, "the probe was cancelled and killed")
    line = _last_line(ending.stdout)
    if line:
        try:
            return ProbeResult.model_validate_json(line)
        except ValidationError:
            pass  # reported below with the exit code and stderr
    code = ending.returncode
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
    why = redact_shown(_last_line(ending.stderr)) or "no message"  # from outside: redacted as any other line
    return ProbeResult.unmeasured(
        request, ProbeOutcome.WORKER_CRASHED, f"the probe worker {how} without a result: {why}"
    )


def _read_free(reader: FreeMemoryReader | None) -> tuple[int | None, str | None]:
    """One free-memory reading, or the reason it failed (the probe goes on without it)."""
    if reader is None:
        return None, None
    try:
        return int(reader()), None
    except Exception as error:  # an outside reading (NVML) failing must not lose the result
        return None, f"free-memory reading failed: {error}"


def _exited_unread(result: ProbeResult) -> str:
    """Why `released` is yes where nothing outside the probe read free memory after it: its process exited, and the
    'after' figure a reader sees beside it is the probe's own last reading (before it exited), where it took one."""
    if result.free_after_bytes is None:
        return "its process exited; no free-memory reading after it to compare"
    return "its process exited; the 'after' figure is the probe's own reading before it exited"


def _check_release(
    result: ProbeResult, pgid: int, reader: FreeMemoryReader | None, free_before: int | None, settle_s: float
) -> ProbeResult:
    """Decide `released` now that the child is gone; say loudly in the message if it is not."""
    gone = _group_gone(pgid)
    if not gone:
        return result.model_copy(
            update={
                "released": False,
                "release_check": "the probe's process group is still alive",
                "message": f"{result.message}; MEMORY NOT RELEASED: the probe process group {pgid} is still alive",
            }
        )
    if reader is None or free_before is None:
        check = _exited_unread(result)
        return result.model_copy(update={"released": True, "release_check": check})
    settle_until = time.monotonic() + settle_s
    free_after, failure = _read_free(reader)
    while free_after is not None and free_after < free_before - RELEASE_TOLERANCE_BYTES:
        if time.monotonic() >= settle_until:
            break
        time.sleep(0.2)
        free_after, failure = _read_free(reader)
    if free_after is None:
        return result.model_copy(update={"released": True, "release_check": f"process exited; {failure}"})
    missing = free_before - free_after
    released = missing <= RELEASE_TOLERANCE_BYTES
    update: dict[str, object] = {
        "released": released,
        "free_after_exit_bytes": free_after,
        "release_check": f"free memory before the probe vs after it exited (tolerance {RELEASE_TOLERANCE_BYTES:,} B)",
    }
    if not released:
        update["message"] = (
            f"{result.message}; MEMORY NOT RELEASED: {missing:,} B of free memory did not come back "
            "after the probe exited (check nvidia-smi)"
        )
    return result.model_copy(update=update)


def run_probe(
    request: ProbeRequest,
    *,
    python: str = sys.executable,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
    free_memory_reader: FreeMemoryReader | None = None,
    extra_env: Mapping[str, str] | None = None,
    poll_s: float = 0.05,
    release_settle_s: float = RELEASE_SETTLE_S,
) -> ProbeResult:
    """Run `request` in a child process and return what it measured, with `released` decided here.

    `timeout_s` defaults to `request.timeout_s`. `free_memory_reader` (e.g. an NVML reading of the
    GPU's free bytes) is read before the child starts, to state the CUDA context's cost, and after
    it exits, to check the memory came back; it is not used for a cpu probe. `extra_env` is added
    to the child's environment (the test hook `KVTOP_PROBE_TEST_SLEEP_S` travels this way).
    `release_settle_s` is how long to keep re-reading free memory after the child is gone before
    declaring it not released.
    """
    started = time.monotonic()
    limit_s = request.timeout_s if timeout_s is None else timeout_s
    reader = None if request.device == "cpu" else free_memory_reader
    free_before, _ = _read_free(reader)
    if free_before is not None:
        request = request.model_copy(update={"driver_free_before_bytes": free_before})
    try:
        ending, pgid = _launch(request, python, limit_s, cancel, extra_env, poll_s)
    except OSError as error:
        result = ProbeResult.unmeasured(
            request, ProbeOutcome.WORKER_CRASHED, f"cannot start the probe worker with {python}: {error}"
        )
        return result.model_copy(update={"released": True, "release_check": "no child was started"})
    result = _parse(request, ending, limit_s)
    result = result.model_copy(update={"worker_pid": result.worker_pid or pgid})
    result = _check_release(result, pgid, reader, free_before, release_settle_s)
    return result.model_copy(update={"wall_seconds": time.monotonic() - started})
