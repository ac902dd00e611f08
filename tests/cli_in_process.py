"""`kvtop ARGV` run in this process as `python -m kvtop ARGV` runs it: its exit status, stdout and stderr.

For the tests that check what a command prints and returns, not that a new interpreter starts: a child process costs
about a second of CPU (the imports), this a few milliseconds more than the command's own work. What a child would put
on stderr is put there too: an uncaught exception's traceback (exit status 1), `SystemExit`'s message, and the warnings
Python's default filters show. The tests of a real process (`python -m kvtop`'s exit codes, what a fresh interpreter
imports) keep running one: tests/test_cli_startup.py, tests/test_cli_snapshot.py, tests/test_cli_plan.py.
"""

from __future__ import annotations

import contextlib
import io
import traceback
import warnings
from dataclasses import dataclass

from kvtop.cli import main

#: The categories CPython's default warning filters hide outside `__main__` (the rest are shown once per place).
HIDDEN_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


@dataclass(frozen=True)
class Ran:
    """What `subprocess.run([python, -m, kvtop, *argv], capture_output=True, text=True)` would have returned."""

    returncode: int
    stdout: str
    stderr: str


def _exit_status(code: object, err: io.StringIO) -> int:
    """The status the interpreter exits with for `SystemExit(code)`: None is 0, an int itself, else printed, 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=err)
    return 1


def run_kvtop(*argv: str) -> Ran:
    """`kvtop ARGV` in this process: the status `python -m kvtop` would exit with and what it would print."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        for category in HIDDEN_BY_DEFAULT:
            warnings.simplefilter("ignore", category)
        try:
            status = main(list(argv))
        except SystemExit as exit_:
            status = _exit_status(exit_.code, err)
        except Exception:  # an uncaught exception: the interpreter prints its traceback and exits 1
            traceback.print_exc(file=err)
            status = 1
    for warning in seen:
        err.write(warnings.formatwarning(warning.message, warning.category, warning.filename, warning.lineno))
    return Ran(status, out.getvalue(), err.getvalue())
