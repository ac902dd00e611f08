"""Read a JSON object from a file, every failure an InputError that names the file and what it is.

Bounded: only a regular file is opened (a FIFO would block, /dev/zero never end), at most
`max_bytes` are read, and nesting too deep for the parser, digits beyond Python's int limit,
or bytes that are not UTF-8 are each one line, never a traceback.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from kvtop.domain.errors import InputError

MAX_JSON_BYTES = 16 << 20  # 16 MiB: a config.json is a few KB, one with every excluded module a few MB


def _file_error(message: str, field: str | None, source: str) -> InputError:
    """An error about the file itself: `field` (the flag that named it) first, the file ending it as that flag's value."""
    return InputError(message, field=field, source=source, value_is_file=True)


def read_json_object(
    path: Path, what: str, *, field: str | None = None, max_bytes: int = MAX_JSON_BYTES
) -> dict[str, Any]:
    """The JSON object in `path` (`what`: 'config', 'scenario', … for the messages; `field`: the
    flag that named the file, said first in every message, the file ending it as that flag's value)."""
    data = read_regular_file(path, what, field=field, max_bytes=max_bytes)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise _file_error(f"not UTF-8 text at byte {err.start:,} (is it a {what} file?)", field, str(path)) from None
    return parse_json_object(text, what, field=field, source=str(path))


def read_regular_file(path: Path, what: str, *, max_bytes: int, field: str | None = None) -> bytes:
    """The bytes of a regular file of at most `max_bytes` (refused, not truncated, beyond that)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise _file_error(f"{what} file not found", field, str(path)) from None
    except OSError as err:
        raise _file_error(f"cannot read {what}: {err.__class__.__name__}", field, str(path)) from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a device, pipe or socket)"
        raise _file_error(f"{kind}: a {what} is read from a file", field, str(path))
    too_big = _file_error(f"larger than {max_bytes:,} bytes: not a {what} file kvtop reads", field, str(path))
    if info.st_size > max_bytes:
        raise too_big
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as err:
        raise _file_error(f"cannot read {what}: {err.__class__.__name__}", field, str(path)) from None
    if len(data) > max_bytes:
        raise too_big
    return data


def parse_json_object(text: str, what: str, *, source: str, field: str | None = None) -> dict[str, Any]:
    """`text` as a JSON object; empty, malformed, too deep or too long a number is one InputError."""
    if not text.strip():  # json's own message for it ("line 1, column 1: Expecting value") hides what is wrong
        blank = "empty file" if not text else "empty file (whitespace only)"
        raise _file_error(f"{blank}: a {what} file holds one JSON object", field, source)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise _file_error(f"malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}", field, source) from None
    except RecursionError:
        raise _file_error("malformed JSON: nested too deeply", field, source) from None
    except ValueError as err:  # an integer beyond Python's digit limit
        raise _file_error(f"malformed JSON: {str(err).split(':')[0]}", field, source) from None
    if not isinstance(data, dict):
        raise _file_error(f"a {what} must be a JSON object", field, source)
    return data
