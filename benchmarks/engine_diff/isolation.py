"""One case per fresh process: the engine is imported once, then every case runs in a forked child.

The engines' code writes process-wide state while it sizes a model (environment variables, module
globals, class attributes, lru caches, torch defaults): Qwen2.5-VL gave 730,258 tokens after a
Qwen3-VL case in the same process and 747,154 alone. A child forked from the parent that has only
imported the engine (and installed the stand-ins) starts every case from that same state, and
nothing a case writes reaches the next one. The fork is cheap (copy-on-write) where a fresh Python
process importing vLLM costs seconds.

Standard library only: imported by the runners inside the engines' venvs and by kvtop's tests.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any

CASE_TIMEOUT_S = 900  # a case that runs longer is stuck (the slowest real one takes seconds)


def run_in_child(
    run_case: Callable[[dict[str, Any]], dict[str, Any]],
    case: dict[str, Any],
    timeout_s: int = CASE_TIMEOUT_S,
) -> dict[str, Any]:
    """`run_case(case)` in a forked child; its JSON result, or a harness error naming how it died."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: run the case, write one JSON document, never return into the caller
        os.close(read_fd)
        code = 0
        try:
            signal.alarm(timeout_s)
            result = run_case(case)
            payload = json.dumps(result, default=str).encode()
        except BaseException:  # noqa: BLE001 — the parent reports it; nothing may unwind the parent's stack
            payload = json.dumps(
                {"status": "harness-error", "message": "the runner failed: " + traceback.format_exc()[-600:]}
            ).encode()
            code = 1
        with os.fdopen(write_fd, "wb") as out:
            out.write(payload)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as inp:
        payload = inp.read()
    _, status = os.waitpid(pid, 0)
    if payload:
        try:
            result: dict[str, Any] = json.loads(payload)
            return result
        except json.JSONDecodeError:
            pass
    if os.WIFSIGNALED(status):
        how = f"signal {signal.Signals(os.WTERMSIG(status)).name}"
        if os.WTERMSIG(status) == signal.SIGALRM:
            how = f"no answer within {timeout_s} s"
    else:
        how = f"exit status {os.WEXITSTATUS(status)} without a result"
    return {"status": "harness-error", "message": f"the case's process died ({how})"}
