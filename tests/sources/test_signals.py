"""kvtop/sources/signals.py against real child processes: what is sent, what is refused, what is logged."""

from __future__ import annotations

import json
import subprocess
import sys

import psutil
import pytest

from kvtop.domain.ports import ProcessSignal, SignalRequest, SignalState
from kvtop.sources.signals import ActionLog, PsutilSignalSender, SimulatedSignalSender, default_action_log


@pytest.fixture
def child():
    """A sleeping Python child; killed at the end whatever the test did to it. It restores SIGINT's
    default handler (a child of a background job inherits SIGINT ignored, and would not stop) and
    says so before the test signals it: a SIGINT sent while it starts would be ignored and lost."""
    code = (
        "import signal, sys, time; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "print('ready', flush=True); time.sleep(60)"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    yield process
    process.stdout.close()
    if process.poll() is None:
        process.kill()
    process.wait(timeout=10)


def request_for(process: subprocess.Popen[bytes], signal: ProcessSignal, **changes: object) -> SignalRequest:
    started = psutil.Process(process.pid).create_time()
    fields: dict[str, object] = {
        "pid": process.pid,
        "signal": signal,
        "start_time": started,
        "gpu_index": 3,
        "used_bytes": 6 << 30,
        "command": "python -c sleep --token=[REDACTED]",
    }
    fields.update(changes)
    return SignalRequest.model_validate(fields)


def log_lines(path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_sigterm_ends_the_process_and_is_logged(tmp_path, child):
    log = tmp_path / "state" / "kvtop" / "actions.log"
    outcome = PsutilSignalSender(ActionLog(log)).send(request_for(child, ProcessSignal.TERMINATE))
    assert outcome.state is SignalState.SENT, outcome.message
    assert outcome.message == f"SIGTERM sent to pid {child.pid}"
    assert child.wait(timeout=10) == -15  # the child died of SIGTERM
    assert outcome.log_path == str(log)
    (line,) = log_lines(log)
    assert {k: line[k] for k in ("signal", "pid", "gpu", "used_bytes", "forced", "state")} == {
        "signal": "SIGTERM",
        "pid": child.pid,
        "gpu": 3,
        "used_bytes": 6 << 30,
        "forced": False,
        "state": "sent",
    }
    assert line["command"] == "python -c sleep --token=[REDACTED]"


def test_sigkill_and_sigint_are_the_signals_named(tmp_path, child):
    sender = PsutilSignalSender(ActionLog(tmp_path / "a.log"))
    assert sender.send(request_for(child, ProcessSignal.INTERRUPT)).state is SignalState.SENT
    assert child.wait(timeout=10) in (-2, 1)  # SIGINT: Python raises KeyboardInterrupt and exits 1
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stderr=subprocess.DEVNULL)
    try:
        assert sender.send(request_for(other, ProcessSignal.KILL)).state is SignalState.SENT
        assert other.wait(timeout=10) == -9
    finally:
        if other.poll() is None:
            other.kill()


def test_a_reused_pid_is_not_signalled(tmp_path, child):
    """The pid now names a process that started at another time than the one the operator saw."""
    log = tmp_path / "a.log"
    stale = request_for(child, ProcessSignal.KILL, start_time=psutil.Process(child.pid).create_time() - 3600)
    outcome = PsutilSignalSender(ActionLog(log)).send(stale)
    assert outcome.state is SignalState.PID_REUSED
    assert "now names another process" in outcome.message and "SIGKILL not sent" in outcome.message
    assert child.poll() is None  # alive
    assert log_lines(log)[0]["state"] == "pid_reused"


def test_a_process_gone_already_is_said_so(tmp_path, child):
    request = request_for(child, ProcessSignal.TERMINATE)
    child.kill()
    child.wait(timeout=10)
    outcome = PsutilSignalSender(ActionLog(tmp_path / "a.log")).send(request)
    assert outcome.state is SignalState.NO_SUCH_PROCESS
    assert outcome.message == f"pid {child.pid} has already exited: SIGTERM not sent"


def test_kvtop_itself_and_init_are_never_signalled(tmp_path):
    import os

    sender = PsutilSignalSender(ActionLog(tmp_path / "a.log"))
    for pid in (os.getpid(), 1, 0):
        outcome = sender.send(SignalRequest(pid=pid, signal=ProcessSignal.KILL))
        assert outcome.state is SignalState.ERROR and f"never signals pid {pid}" in outcome.message


def test_a_log_that_cannot_be_written_is_said_and_the_signal_still_goes(tmp_path, child):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    outcome = PsutilSignalSender(ActionLog(blocker / "actions.log")).send(
        request_for(child, ProcessSignal.KILL)
    )
    assert outcome.state is SignalState.SENT
    assert outcome.log_path is None and outcome.log_error is not None
    assert outcome.log_error.startswith(f"cannot write {blocker / 'actions.log'}")
    assert child.wait(timeout=10) == -9


def test_the_demo_sender_sends_nothing_and_logs_it(tmp_path, child):
    log = tmp_path / "a.log"
    outcome = SimulatedSignalSender(ActionLog(log), "demo:llama70b-tp8-foreign-gpu3").send(
        request_for(child, ProcessSignal.KILL)
    )
    assert outcome.state is SignalState.SIMULATED
    assert (
        outcome.message == f"SIGKILL to pid {child.pid} not sent: demo:llama70b-tp8-foreign-gpu3 is simulated"
    )
    assert child.poll() is None  # a real process with the demo's pid would live on
    assert log_lines(log)[0]["state"] == "simulated"


def test_the_action_log_lives_under_xdg_state_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_action_log() == tmp_path / "kvtop" / "actions.log"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_action_log() == tmp_path / ".local" / "state" / "kvtop" / "actions.log"
