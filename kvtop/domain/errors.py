"""Errors a person can act on: each names the field and, where known, the file.

Every error kvtop raises for bad input derives from `KvtopError`; the CLI prints its
message on one line and exits non-zero, the TUI shows it inline and keeps running.
"""

from __future__ import annotations


class KvtopError(Exception):
    """Base of every error kvtop reports to a person (never a traceback)."""

    exit_code = 2


class InputError(KvtopError):
    """A value given to kvtop (a config, a flag, a log, a scenario) is malformed or missing.

    `field` names the offending field or flag; `source` the file or flag it came from.
    """

    def __init__(self, message: str, *, field: str | None = None, source: str | None = None) -> None:
        self.field = field
        self.source = source
        where = f" in {source}" if source else ""
        what = f"{field}: " if field else ""
        super().__init__(f"{what}{message}{where}")


class UnsupportedModelError(InputError):
    """The architecture or weight format is recognised as outside what kvtop models (never a silent guess);
    `explain` still reads the log's own figures and refusal."""


class LayoutError(InputError):
    """A parallel layout that the model or the engine cannot run (the reason is stated)."""
