"""engine-failures: a failure of an engine's own code on what a config.json holds, told from a harness gap by where it
was raised (the innermost frame under the engine's source), a function of the engine's on the traceback and the start
of the exception's first line. Each engine's runner keeps its own table of them, read in that engine's source
(sglang_config_failures.py, vllm_config_failures.py); this module names no engine.

Imported inside the engine's venv (standard library only).
"""

from __future__ import annotations

import traceback

# (innermost file under the engine's source, a function of the engine's on the traceback, the exception's first line)
Failure = tuple[str, str, str]


def engine_frames(exc: BaseException, source: str) -> tuple[str | None, set[str]]:
    """The innermost file of the traceback under `source` (a path fragment, "/site-packages/<package>/…/"), relative
    to it, and the functions of the frames under it."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if source in f.filename]
    innermost = frames[-1].filename.split(source, 1)[1] if frames else None
    return innermost, {f.name for f in frames}


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def known_failure(exc: BaseException, source: str, failures: dict[Failure, str]) -> str | None:
    """The reason `failures` gives for this exception, with its first line; None where none matches."""
    innermost, functions = engine_frames(exc, source)
    first = first_line(exc)
    for (file, function, message), why in failures.items():
        if file == innermost and function in functions and first.startswith(message):
            return f"{why} ({first})"
    return None
