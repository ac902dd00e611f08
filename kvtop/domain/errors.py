"""Errors a person can act on: each names the field and, where known, the file.

Every error kvtop raises for bad input derives from `KvtopError`; the CLI prints its
message on one line and exits non-zero, the TUI shows it inline and keeps running.
"""

from __future__ import annotations

#: The most characters of an error's message: one screenful, whatever the input it quotes.
MAX_MESSAGE_CHARS = 2_000


def bounded(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`message`, cut to `limit` characters with how much was left out (an error quoting a 1 MB
    input, or pydantic's 100,000 errors, stays one screenful wherever it is printed)."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}… ({len(message) - limit:,} more characters)"


class KvtopError(Exception):
    """Base of every error kvtop reports to a person (never a traceback); its message is bounded."""

    exit_code = 2

    def __init__(self, message: str = "", *rest: object) -> None:
        # the last guard: room for a bounded message with the field and the file that frame it
        super().__init__(bounded(str(message), 2 * MAX_MESSAGE_CHARS), *rest)


class InputError(KvtopError):
    """A value given to kvtop (a config, a flag, a log, a scenario) is malformed or missing.

    `field` names the offending field or flag; `source` the file or flag it came from; `value_is_file` says, from the
    raiser, that the file is the field's value (a flag given a path, the log read), the file then being what the
    message is about. The message names each once: "FIELD: WHY: FILE" where the file is the field's value (or no
    field is named: "--model: config file not found: /x.json"), else "FIELD: WHY (in FILE)", the file the field was
    read from ("(model FILE)" for a layout, whose flag is checked against the model's config).
    """

    #: how the file reads after a field that is not the file: a key read "in" it; a layout's flag against a "model"
    source_word = "in"

    def __init__(
        self, message: str, *, field: str | None = None, source: str | None = None, value_is_file: bool = False
    ) -> None:
        self.field = field
        self.source = source
        self.value_is_file = value_is_file
        # the message without its field and file (a reader that renames the field reuses it)
        self.detail = message
        what = f"{field}: " if field else ""
        super().__init__(f"{what}{bounded(message)}{self.where}")  # the field and the file are never cut off

    @property
    def where(self) -> str:
        """The file as the message ends with it ('' for none): ': FILE' or ' (in FILE)' (see the class)."""
        if not self.source:
            return ""
        if self.field is None or self.value_is_file:
            return f": {self.source}"
        return f" ({self.source_word} {self.source})"


class UnknownFlagError(InputError):
    """A flag typed to kvtop that kvtop does not know for the engine (`field`): `engine_name` names the engine it was
    read for and `alike` the engine's flag it most looks like (None: none close). The CLI, which knows its own
    options, says whether the token was a typo of one of kvtop's instead."""

    def __init__(self, message: str, *, field: str, engine_name: str, alike: str | None) -> None:
        super().__init__(message, field=field)
        self.engine_name = engine_name
        self.alike = alike


class UnsupportedModelError(InputError):
    """The architecture or weight format is recognised as outside what kvtop models (never a silent guess);
    `explain` still reads the log's own figures and refusal."""


class LayoutError(InputError):
    """A parallel layout that the model or the engine cannot run (the reason is stated); its file is the model's."""

    source_word = "model"
