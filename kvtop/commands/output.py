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
import os
import shlex
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, TextIO

from kvtop.domain.secret_shapes import mask_secret_shapes
from kvtop.domain.terminal import safe_line, safe_text

#: The width prose wraps to where neither COLUMNS nor a terminal names one (a pipe, a log; tables keep their own width).
DEFAULT_COLUMNS = 100
#: The narrowest width read as meant: a COLUMNS or a terminal narrower than this wraps at DEFAULT_COLUMNS.
_NARROWEST = 40
#: A head longer than this (`note (SGLang, TensorRT-LLM): `) indents its further lines by its margin and 4 more.
_LONG_HEAD = 16
#: A space no line breaks at (a NUL, never in a command's text: `safe_text` escapes one), put back once wrapped.
_KEPT = "\x00§"


def terminal_columns(stream: TextIO | None = None) -> int:
    """The width prose wraps to: COLUMNS where it is a whole number of at least 40; else, where `stream` (stdout
    unless given) is a terminal, that terminal's own width (`shutil.get_terminal_size`, which asks stdout's: a wide
    terminal gets its width though no shell exported COLUMNS); else DEFAULT_COLUMNS (a pipe, a log, the tests:
    byte-exact output)."""
    said = os.environ.get("COLUMNS", "").strip()
    if said.isdigit() and int(said) >= _NARROWEST:
        return int(said)
    isatty = getattr(sys.stdout if stream is None else stream, "isatty", None)
    if not (callable(isatty) and isatty()):
        return DEFAULT_COLUMNS
    columns = shutil.get_terminal_size((DEFAULT_COLUMNS, 24)).columns
    return columns if columns >= _NARROWEST else DEFAULT_COLUMNS


def _hang(head: str) -> int:
    """Where a head's further lines start: under its text, or 4 columns past its margin where the head is long."""
    return len(head) if len(head) <= _LONG_HEAD else len(head) - len(head.lstrip(" ")) + 4


def prose(head: str, text: str, *, width: int | None = None, hang: int | None = None) -> str:
    """`head` then `text` as lines of at most `width` columns (the terminal's): the one wrapping of a note, a hint
    or an error line. Broken at spaces only: a word longer than a line (a path, a `--flag=value`) stays whole;
    each further line hangs under the text (`note: ` 6 columns in), or 4 columns past the margin of a long head
    (or `hang` columns in, where given: a note whose head is inside its text)."""
    indent = " " * (_hang(head) if hang is None else hang)
    wrapper = textwrap.TextWrapper(
        width=width or terminal_columns(), initial_indent=head, subsequent_indent=indent,
        break_long_words=False, break_on_hyphens=False,
    )  # fmt: skip
    first, *rest = text.replace(" §", _KEPT).split("\n")  # `trtllm.md §12` one word: a section beside its doc
    lines = [wrapper.fill(first) or head.rstrip()]
    wrapper.initial_indent = indent  # a note of several lines: its head once
    return "\n".join([*lines, *(wrapper.fill(part) for part in rest)]).replace(_KEPT, " §")


def shell_prose(head: str, words: Sequence[str], *, width: int | None = None) -> str:
    """`head` then a command's words, quoted for a shell (`shlex.join`), as lines of at most `width` columns (the
    terminal's) that paste as one command: broken only between flags (a flag keeps its value beside it), each line
    but the last ending in ` \\`, each further one hung under the words; a flag with its value longer than a line
    stays whole. On one line it is `shlex.join` exactly."""
    units: list[str] = []
    for word in words:
        quoted = shlex.quote(word)
        if units and not (word.startswith("-") and not word[1:2].isdigit()):  # a value (`-1` too) joins its flag
            units[-1] += f" {quoted}"
        else:
            units.append(quoted)
    limit = width or terminal_columns()
    if len(head) + len(" ".join(units)) <= limit:
        return head + " ".join(units)
    indent = " " * _hang(head)
    lines = [head + (units[0] if units else "")]
    for unit in units[1:]:
        if len(lines[-1]) + 1 + len(unit) + 2 <= limit:  # room for the unit and a closing ` \`
            lines[-1] += f" {unit}"
        else:
            lines.append(indent + unit)
    return " \\\n".join(lines)


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
    """One error on stderr (or `file`): `prefix` then the text, redacted and escaped (`error_line`), one line but at a
    terminal (`error_text`)."""
    stream = sys.stderr if file is None else file
    stream.write(error_text(prefix, error_line(text), stream) + "\n")


def error_text(prefix: str, text: str, stream: TextIO) -> str:
    """An error's line as `stream` gets it: wrapped (`prose`) where a person reads it at a terminal, one line where
    a program reads it (a pipe, a log: scripts and the tests take a `kvtop: error:` line as the whole error)."""
    isatty = getattr(stream, "isatty", None)
    return prose(prefix, text, width=terminal_columns(stream)) if callable(isatty) and isatty() else f"{prefix}{text}"


def crash_report(err: BaseException) -> str:
    """An unexpected error's traceback as Python prints it, each line redacted and escaped (`error_line`): a bug's
    message may quote an input whole (pydantic's `input_value={… 'api_key': …}`, a process's command line), and a
    crash report is what gets pasted into an issue. The frames and lines stay, so the bug can still be found."""
    import traceback

    lines = "".join(traceback.format_exception(err)).splitlines()
    return "\n".join(["kvtop: internal error (a bug in kvtop; report it with what follows)", *map(error_line, lines)])
