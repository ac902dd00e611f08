"""The differential harness runs every case in a fresh forked process (benchmarks/engine_diff/isolation.py).

The engines write process-wide state while they size a model (environment variables, module
globals, caches). These tests run the harness's own fork runner on cases that write such state and
check that no case sees another's, in either order, and that a case that dies is a named harness
error rather than a figure.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from benchmarks.engine_diff.isolation import run_in_child

_STATE: dict[str, int] = {"calls": 0}


def _case_writing_state(case: dict[str, Any]) -> dict[str, Any]:
    """What an engine does: read the environment and a module global, then write both."""
    seen = {"env": os.environ.get("ENGINE_DIFF_TEST_FLAG"), "calls": _STATE["calls"]}
    os.environ["ENGINE_DIFF_TEST_FLAG"] = case["name"]
    _STATE["calls"] += 1
    sys.modules[__name__].__dict__.setdefault("_written_by", case["name"])
    return {"status": "ok", "name": case["name"], **seen, "written_by": globals().get("_written_by")}


def test_each_case_sees_the_state_of_the_parent_not_of_the_case_before() -> None:
    first = [run_in_child(_case_writing_state, {"name": n}) for n in ("A", "B")]
    second = [run_in_child(_case_writing_state, {"name": n}) for n in ("B", "A")]
    by_name = {r["name"]: r for r in first}
    assert {r["name"]: r for r in second} == by_name
    assert by_name["B"] == {"status": "ok", "name": "B", "env": None, "calls": 0, "written_by": "B"}
    assert "ENGINE_DIFF_TEST_FLAG" not in os.environ and _STATE["calls"] == 0


def test_the_same_function_in_process_leaks_which_is_why_the_harness_forks() -> None:
    """The control: run in this process, the second case sees what the first wrote."""
    try:
        _case_writing_state({"name": "A"})
        leaked = _case_writing_state({"name": "B"})
        assert (leaked["env"], leaked["calls"]) == ("A", 1)
    finally:
        os.environ.pop("ENGINE_DIFF_TEST_FLAG", None)
        _STATE["calls"] = 0
        globals().pop("_written_by", None)


def _dies(case: dict[str, Any]) -> dict[str, Any]:
    os.kill(os.getpid(), signal.SIGKILL)
    return {"status": "ok"}


def _raises(case: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("a bug in the runner")


def _hangs(case: dict[str, Any]) -> dict[str, Any]:
    signal.pause()
    return {"status": "ok"}


def test_a_case_that_dies_raises_or_hangs_is_a_harness_error_not_a_figure() -> None:
    assert run_in_child(_dies, {}) == {
        "status": "harness-error",
        "message": "the case's process died (signal SIGKILL)",
    }
    raised = run_in_child(_raises, {})
    assert raised["status"] == "harness-error" and "RuntimeError: a bug in the runner" in raised["message"]
    assert run_in_child(_hangs, {}, timeout_s=1) == {
        "status": "harness-error",
        "message": "the case's process died (no answer within 1 s)",
    }
