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
IMPORTED = "_imported"  # the modules a child imported (see warm_imports)
MODEL_PACKAGES = ("sglang.srt.models.", "vllm.model_executor.models.")  # imported by each case itself


def warm_imports(result: dict[str, Any]) -> None:
    """Import in the parent the modules a case's child imported (its model's module, quantization
    methods, …), so that the next children do not import them again: an import is what the child
    would do at its first use, and no case's state is involved. Removes the list from the result.

    A model class's module stays cold (MODEL_PACKAGES): some read at import an environment variable the
    engine's server arguments resolve first (SGLang 0.5.23 models/deepseek_v4.py `_FP8_WO_A_GEMM` from
    SGLANG_OPT_FP8_WO_A_GEMM, which serving_hook.py sets False on sm90), so a parent that imported it
    before any case did would hand the next children the unresolved default (DeepSeek-V4's wo_a FP8 rather
    than bf16, 1,442,488,320 B at TP 1, in whichever case came second)."""
    import importlib

    for name in result.pop(IMPORTED, ()):
        if name not in sys.modules and not name.startswith(MODEL_PACKAGES):
            try:
                importlib.import_module(name)
            except BaseException:  # noqa: BLE001 — a module that cannot be imported alone stays lazy
                sys.modules.pop(name, None)


def run_in_child(
    run_case: Callable[[dict[str, Any]], dict[str, Any]],
    case: dict[str, Any],
    timeout_s: int = CASE_TIMEOUT_S,
) -> dict[str, Any]:
    """`run_case(case)` in a forked child; its JSON result, or a harness error naming how it died."""
    return run_in_children(lambda c, rank: run_case(c), case, 1, timeout_s)[0]


def run_in_children(
    run_rank: Callable[[dict[str, Any], int], dict[str, Any]],
    case: dict[str, Any],
    ranks: int,
    timeout_s: int = CASE_TIMEOUT_S,
) -> list[dict[str, Any]]:
    """`run_rank(case, rank)` for every rank at once, each in its own forked child (the ranks of a
    pipeline talk to each other through torch.distributed, as an engine's processes do); their JSON
    results in rank order, a harness error for each that died."""
    started = [_start(run_rank, case, rank, timeout_s) for rank in range(ranks)]
    return [_collect(pid, read_fd, timeout_s) for pid, read_fd in started]


def _start(run_rank: Callable[[dict[str, Any], int], dict[str, Any]], case: dict[str, Any], rank: int,
           timeout_s: int) -> tuple[int, int]:  # fmt: skip
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: run the case, write one JSON document, never return into the caller
        os.close(read_fd)
        code = 0
        try:
            signal.alarm(timeout_s)
            before = set(sys.modules)
            result = run_rank(case, rank)
            imported = set(result.get(IMPORTED, ())) | (set(sys.modules) - before)  # and its own children's
            result = {**result, IMPORTED: sorted(imported)}
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
    return pid, read_fd


def _collect(pid: int, read_fd: int, timeout_s: int) -> dict[str, Any]:
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
