"""kvtop/sources/signals.py against real child processes: what is sent, what is refused, what is logged."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psutil
import pytest
from pydantic import ValidationError

from kvtop.domain.ports import ProcessSignal, SignalRequest, SignalState
from kvtop.domain.process_identity import ProcessIdentity
from kvtop.sources.signals import (
    START_TIME_TOLERANCE_S,
    ActionLog,
    PsutilSignalSender,
    SimulatedSignalSender,
    default_action_log,
)


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


def identity_of(process: subprocess.Popen[bytes], **changes: object) -> ProcessIdentity:
    """The child as the OS names it (psutil, as the process table reads it), with `changes`."""
    found = psutil.Process(process.pid)
    fields = {"pid": process.pid, "start_time": found.create_time(), "uid": found.uids().real, "exe": found.exe()}
    return ProcessIdentity.model_validate({**fields, **changes})


def request_for(process: subprocess.Popen[bytes], signal: ProcessSignal, **changes: object) -> SignalRequest:
    return SignalRequest(
        identity=identity_of(process, **changes), signal=signal, gpu_index=3, used_bytes=6 << 30,
        command="python -c sleep --token=***",
    )  # fmt: skip


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
    assert line["command"] == "python -c sleep --token=***"


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
    sender = PsutilSignalSender(ActionLog(tmp_path / "a.log"))
    me = psutil.Process()
    for pid in (os.getpid(), 1):
        named = ProcessIdentity(pid=pid, start_time=me.create_time(), uid=me.uids().real, exe=me.exe())
        outcome = sender.send(SignalRequest(identity=named, signal=ProcessSignal.KILL))
        assert outcome.state is SignalState.ERROR and f"never signals pid {pid}" in outcome.message


def test_no_request_can_be_made_for_a_process_kvtop_did_not_name():
    """Before: a row without a start time made a request without one, and the reuse check was skipped."""
    with pytest.raises(ValidationError):
        SignalRequest.model_validate({"pid": 4242, "signal": ProcessSignal.TERMINATE})
    with pytest.raises(ValidationError):
        SignalRequest.model_validate({"identity": None, "signal": ProcessSignal.TERMINATE})


def test_the_start_is_compared_to_one_clock_tick_not_a_second(tmp_path, child):
    """Linux keeps a process's start in clock ticks (1/CLK_TCK s): a start 0.5 s off is another
    process (before: anything within 1.0 s passed)."""
    assert os.sysconf("SC_CLK_TCK") * START_TIME_TOLERANCE_S == pytest.approx(1.0)
    started = psutil.Process(child.pid).create_time()
    sender = PsutilSignalSender(ActionLog(tmp_path / "a.log"))
    outcome = sender.send(request_for(child, ProcessSignal.KILL, start_time=started + 0.5))
    assert outcome.state is SignalState.PID_REUSED and child.poll() is None
    assert sender.send(request_for(child, ProcessSignal.KILL, start_time=started)).state is SignalState.SENT
    assert child.wait(timeout=10) == -9


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"uid": 4242}, "now runs as user id"),
        ({"exe": "/usr/bin/jupyter-innocent"}, "now runs another executable"),
    ],
)
def test_a_pid_that_now_runs_as_another_user_or_program_is_not_signalled(tmp_path, child, changes, says):
    outcome = PsutilSignalSender(ActionLog(tmp_path / "a.log")).send(
        request_for(child, ProcessSignal.TERMINATE, **changes)
    )
    assert outcome.state is SignalState.IDENTITY_CHANGED and says in outcome.message
    assert "SIGTERM not sent" in outcome.message and child.poll() is None


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


def test_the_action_log_keeps_no_secret_of_the_command_however_the_request_was_built(tmp_path, child):
    """The action log stays on the node: a request's command is redacted when the request is built
    (`SignalRequest.command` is a RedactedStr), not only because the process panel passed a redacted one."""
    secret = "Q7vXk2pLm9ZrT4wB"
    raw = f"python serve.py --api-key {secret} --model-path https://bob:{secret}@hub.internal/m HF_TOKEN={secret}"
    log = tmp_path / "actions.log"
    request = request_for(child, ProcessSignal.TERMINATE).model_copy(update={"command": raw})  # validated too
    outcome = SimulatedSignalSender(ActionLog(log), "demo:test").send(request)
    (line,) = log_lines(log)
    assert line["state"] == outcome.state.value  # the line of this request was written
    leaked = secret[:6] in log.read_text() or secret[:6] in outcome.model_dump_json()
    assert not leaked
    assert line["command"] == "python serve.py --api-key *** --model-path https://***@hub.internal/m HF_TOKEN=***"
