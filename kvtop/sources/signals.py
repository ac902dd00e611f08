"""Signals from the process panel (`SignalSender`): psutil on this node, a stand-in on a demo node.

Every request, sent or not, is one JSON line in kvtop's action log (`default_action_log()`:
`$XDG_STATE_HOME/kvtop/actions.log`, else `~/.local/state/kvtop/actions.log`): when, who asked,
the signal, the pid, its GPU and bytes, its (redacted) command, whether the operator forced it,
and what happened. A log that cannot be written never stops the signal; the outcome says so.

A request carries the process as the snapshot named it (`ProcessIdentity`: pid, start, real user
id, executable). The sender first takes a handle on whatever process holds the pid now (a pidfd,
Linux 5.3+), names that process again and compares: another start (the pid was reused), another
user or executable (it is no longer what the operator saw) and nothing is sent. The signal goes
through the handle, so the process checked is the process signalled, even if the pid is reused
in between. The start is compared to the resolution the OS keeps it in (one clock tick), never
to a second. kvtop never signals itself or pid 0/1.
"""

from __future__ import annotations

import contextlib
import errno
import getpass
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

from kvtop.domain.ports import ProcessSignal, SignalOutcome, SignalRequest, SignalState
from kvtop.domain.process_identity import ProcessIdentity


def start_time_resolution_s() -> float:
    """The resolution the OS keeps a process's start in: one clock tick on Linux (1/CLK_TCK, 10 ms),
    a microsecond where the kernel keeps a timeval (macOS, the BSDs)."""
    try:
        return 1.0 / os.sysconf("SC_CLK_TCK")
    except (AttributeError, ValueError, OSError):
        return 1e-6


#: How far two readings of one process's start may differ: one step of the clock that keeps it.
START_TIME_TOLERANCE_S = start_time_resolution_s()

_SIGNALS = {
    ProcessSignal.TERMINATE: signal.SIGTERM,
    ProcessSignal.KILL: signal.SIGKILL,
    ProcessSignal.INTERRUPT: signal.SIGINT,
}


def default_action_log() -> Path:
    """`$XDG_STATE_HOME/kvtop/actions.log`, else `~/.local/state/kvtop/actions.log`."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "kvtop" / "actions.log"


class ActionLog:
    """Appends one JSON line per signal request to a file (its folder made on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, outcome: SignalOutcome) -> SignalOutcome:
        """Write `outcome`'s line; the outcome returned names the log, or why it was not written."""
        request = outcome.request
        line = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "user": _user(),
            "signal": request.signal.value,
            "pid": request.pid,
            "gpu": request.gpu_index,
            "used_bytes": request.used_bytes,
            "command": request.command,
            "forced": request.forced,
            "state": outcome.state.value,
            "message": outcome.message,
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as log:
                log.write(json.dumps(line, ensure_ascii=False) + "\n")
        except OSError as error:
            return outcome.model_copy(
                update={"log_error": f"cannot write {self.path}: {error.strerror or error}"}
            )
        return outcome.model_copy(update={"log_path": str(self.path)})


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry for this uid (some containers)
        return str(os.getuid())


class PsutilSignalSender:
    """Signals named processes of this node (`SignalSender`), through a pidfd where the kernel has them."""

    def __init__(self, log: ActionLog) -> None:
        self._log = log

    def send(self, request: SignalRequest) -> SignalOutcome:
        return self._log.record(self._send(request))

    def _send(self, request: SignalRequest) -> SignalOutcome:
        pid, name = request.pid, request.signal.value
        if pid <= 1 or pid == os.getpid():
            return _outcome(request, SignalState.ERROR, f"kvtop never signals pid {pid}")
        try:
            with _pidfd(pid) as handle:
                now = _identity_now(pid)
                refusal = _not_the_same(request.identity, now)
                if refusal is not None:
                    return _outcome(request, refusal[0], f"{refusal[1]}: {name} not sent")
                if handle is not None:
                    signal.pidfd_send_signal(handle, _SIGNALS[request.signal])
                else:
                    psutil.Process(pid).send_signal(_SIGNALS[request.signal])
        except (psutil.NoSuchProcess, ProcessLookupError):
            return _outcome(
                request, SignalState.NO_SUCH_PROCESS, f"pid {pid} has already exited: {name} not sent"
            )
        except (psutil.AccessDenied, PermissionError):
            return _outcome(
                request,
                SignalState.ACCESS_DENIED,
                f"not allowed to signal pid {pid} (another user's process): run kvtop as that user or root",
            )
        except OSError as error:
            return _outcome(request, SignalState.ERROR, f"{name} to pid {pid} failed: {error}")
        return _outcome(request, SignalState.SENT, f"{name} sent to pid {pid}")


@contextlib.contextmanager
def _pidfd(pid: int) -> Iterator[int | None]:
    """A handle on the process holding `pid` now (closed after), or None where the kernel has none."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, NotImplementedError):
        yield None
        return
    except OSError as error:
        if error.errno in (errno.ESRCH,):
            raise ProcessLookupError(pid) from None
        yield None  # ENOSYS (a kernel before 5.3), EPERM in a sandbox: psutil's own reuse check
        return
    try:
        yield handle
    finally:
        os.close(handle)


def _identity_now(pid: int) -> ProcessIdentity | None:
    """The process holding `pid` now, named as the snapshot named it (None: the OS would not say all)."""
    process = psutil.Process(pid)
    with process.oneshot():
        started = process.create_time()
        uid = process.uids().real
        try:
            exe = process.exe()
        except psutil.AccessDenied:
            exe = ""
    if not exe:
        return None
    return ProcessIdentity(pid=pid, start_time=started, uid=uid, exe=exe)


def _not_the_same(seen: ProcessIdentity, now: ProcessIdentity | None) -> tuple[SignalState, str] | None:
    """Why the process holding the pid now is not the one the operator confirmed, or None when it is."""
    pid = seen.pid
    if now is None:
        return SignalState.ACCESS_DENIED, f"kvtop cannot read pid {pid}'s executable now, so cannot name it again"
    if abs(now.start_time - seen.start_time) > START_TIME_TOLERANCE_S:
        return SignalState.PID_REUSED, f"pid {pid} now names another process (started {time.ctime(now.start_time)})"
    if now.uid != seen.uid:
        return SignalState.IDENTITY_CHANGED, f"pid {pid} now runs as user id {now.uid}, not {seen.uid}"
    if now.exe != seen.exe:
        return SignalState.IDENTITY_CHANGED, f"pid {pid} now runs another executable than the one shown"
    return None


class SimulatedSignalSender:
    """A demo node's processes are not this machine's: nothing is sent, the request is still logged."""

    def __init__(self, log: ActionLog, node_label: str) -> None:
        self._log = log
        self._node = node_label

    def send(self, request: SignalRequest) -> SignalOutcome:
        message = f"{request.signal.value} to pid {request.pid} not sent: {self._node} is simulated"
        return self._log.record(_outcome(request, SignalState.SIMULATED, message))


def _outcome(request: SignalRequest, state: SignalState, message: str) -> SignalOutcome:
    return SignalOutcome(request=request, state=state, message=message)
