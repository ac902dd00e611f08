"""Read a JSON object from a file, every failure an InputError that names the file and what it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvtop.domain.errors import InputError


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in `path` (`what`: 'config', 'scenario', … for the messages)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} file not found", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read {what}: {err.__class__.__name__}", source=str(path)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            f"malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}", source=str(path)
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"a {what} must be a JSON object", source=str(path))
    return data
