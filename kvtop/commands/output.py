"""Everything a command prints, through the one sanitiser (`kvtop.domain.terminal`).

A command's text quotes what others chose (process titles, labels, paths, log lines, a server's
error): printed raw, an ESC or C1 character in it would drive the operator's terminal. Every
command writes its text, its JSON and its error lines here and nowhere else, so no control
character reaches the terminal whatever a figure's source (`tests/test_terminal_injection.py`
runs every command over hostile input). The values were redacted when built; here, last, any
token of a known secret shape still in the text is masked too (`mask_secret_shapes`).
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from kvtop.domain.secret_shapes import mask_secret_shapes
from kvtop.domain.terminal import safe_line, safe_text


def print_text(text: str, *, file: TextIO | None = None, flush: bool = False) -> None:
    """A rendered block (lines kept, every other control character escaped), then a line break."""
    stream = sys.stdout if file is None else file
    stream.write(safe_text(mask_secret_shapes(text)) + "\n")
    if flush:
        stream.flush()


def print_json(
    value: Any, *, indent: int | None = 1, compact: bool = False, file: TextIO | None = None
) -> None:
    """`value` as JSON: every non-ASCII and control character written as a `\\u` escape, so the
    document reads the same and cannot drive a terminal that shows it."""
    stream = sys.stdout if file is None else file
    separators = (",", ":") if compact else None
    document = json.dumps(value, indent=indent, ensure_ascii=True, separators=separators)
    stream.write(mask_secret_shapes(document).replace("\x7f", "\\u007f") + "\n")  # DEL: the one control JSON leaves raw


def error_line(text: str) -> str:
    """An error's text as one line that shows no secret (`redact_text`) and drives no terminal.
    The redaction (and pydantic with it) is imported only when an error is shown: `kvtop --help` stays light."""
    from kvtop.domain.secret_text import redact_text

    return safe_line(redact_text(text))


def error_of(err: Exception) -> str:
    """An error's line (`error_line`), its field redacted apart from the message: `--api-key: not a flag
    kvtop knows` is a name and a sentence, and read whole its first word was masked as the flag's value
    (`--api-key: *** a flag`). Secrets inside the message are still masked, by shape and by name."""
    text = str(err)
    field = getattr(err, "field", None)
    if isinstance(field, str) and field and text.startswith(f"{field}: "):
        return f"{error_line(field)}: {error_line(text[len(field) + 2 :])}"
    return error_line(text)


def print_error(text: str, *, prefix: str = "kvtop: error: ", file: TextIO | None = None) -> None:
    """One error line on stderr (or `file`): `prefix` then the text, redacted and escaped (`error_line`)."""
    (sys.stderr if file is None else file).write(f"{prefix}{error_line(text)}\n")


def crash_report(err: BaseException) -> str:
    """An unexpected error's traceback as Python prints it, each line redacted and escaped (`error_line`): a bug's
    message may quote an input whole (pydantic's `input_value={… 'api_key': …}`, a process's command line), and a
    crash report is what gets pasted into an issue. The frames and lines stay, so the bug can still be found."""
    import traceback

    lines = "".join(traceback.format_exception(err)).splitlines()
    return "\n".join(["kvtop: internal error (a bug in kvtop; report it with what follows)", *map(error_line, lines)])
