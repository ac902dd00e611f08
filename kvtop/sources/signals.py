"""Signals from the process panel (`SignalSender`): psutil on this node, a stand-in on a demo node.

Every request, sent or not, is one JSON line in kvtop's action log (`default_action_log()`:
`$XDG_STATE_HOME/kvtop/actions.log`, else `~/.local/state/kvtop/actions.log`): when, who asked,
the signal, the pid, its GPU and bytes, its (redacted) command, whether the operator forced it,
and what happened. A log that cannot be written never stops the signal; the outcome says so.

The sender checks the pid still names the process the operator saw (same start time, to the
second) before signalling it, and never signals kvtop itself or pid 0/1.
"""

from __future__ import annotations

import getpass
import json
import os
import signal
import time
from pathlib import Path

import psutil

from kvtop.domain.ports import ProcessSignal, SignalOutcome, SignalRequest, SignalState

#: How far a process's start time may differ from the one the operator saw (psutil rounds).
START_TIME_TOLERANCE_S = 1.0

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
    """Signals processes of this node through psutil (`SignalSender`)."""

    def __init__(self, log: ActionLog) -> None:
        self._log = log

    def send(self, request: SignalRequest) -> SignalOutcome:
        return self._log.record(self._send(request))

    def _send(self, request: SignalRequest) -> SignalOutcome:
        pid, name = request.pid, request.signal.value
        if pid <= 1 or pid == os.getpid():
            return _outcome(request, SignalState.ERROR, f"kvtop never signals pid {pid}")
        try:
            process = psutil.Process(pid)
            started = process.create_time()
            if request.start_time is not None and abs(started - request.start_time) > START_TIME_TOLERANCE_S:
                return _outcome(
                    request,
                    SignalState.PID_REUSED,
                    f"pid {pid} now names another process (started {time.ctime(started)}): {name} not sent",
                )
            process.send_signal(_SIGNALS[request.signal])
        except psutil.NoSuchProcess:
            return _outcome(
                request, SignalState.NO_SUCH_PROCESS, f"pid {pid} has already exited: {name} not sent"
            )
        except psutil.AccessDenied:
            return _outcome(
                request,
                SignalState.ACCESS_DENIED,
                f"not allowed to signal pid {pid} (another user's process): run kvtop as that user or root",
            )
        except OSError as error:
            return _outcome(request, SignalState.ERROR, f"{name} to pid {pid} failed: {error}")
        return _outcome(request, SignalState.SENT, f"{name} sent to pid {pid}")


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
