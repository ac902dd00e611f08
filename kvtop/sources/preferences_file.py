"""The terminal UI's preferences as a TOML file: `$XDG_CONFIG_HOME/kvtop/config.toml` (else
`~/.config/kvtop/config.toml`), or the path `--config` names.

Read once at start (a missing file is the defaults; one kvtop cannot read, or a value it does not know,
is an InputError naming the file and the key); written whole, atomically (a temporary file renamed
over it), whenever the operator changes a preference. The file holds nothing secret.

```toml
# kvtop's terminal UI: written by kvtop when you change a setting (t, s, S, V, H); edit freely.
theme = "dark"
sort = "least free"
reverse_sort = false
interval_s = 2.0
hidden_columns = ["vitals"]
```
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import tomllib
from pydantic import ValidationError

from kvtop.domain.errors import InputError
from kvtop.domain.preferences import Preferences

FILE_NAME = "config.toml"
HEADER = "# kvtop's terminal UI: written by kvtop when you change a setting (t, s, S, V, H); edit freely.\n"
MAX_BYTES = 64 * 1024  # a preferences file is a few lines


def default_config_path(environ: dict[str, str] | None = None) -> Path:
    """XDG: `$XDG_CONFIG_HOME/kvtop/config.toml` when set (and absolute), else `~/.config/kvtop/config.toml`."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path(env.get("HOME") or Path.home()) / ".config"
    return root / "kvtop" / FILE_NAME


class PreferencesFile:
    """A `PreferencesStore` over one TOML file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def location(self) -> str:
        return str(self.path)

    def load(self) -> Preferences:
        """The file's preferences; the defaults when it does not exist."""
        try:
            if self.path.stat().st_size > MAX_BYTES:
                raise InputError(f"larger than {MAX_BYTES // 1024} KiB: not a kvtop config", field="--config", source=str(self.path), value_is_file=True)
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Preferences()
        except (OSError, UnicodeDecodeError) as err:
            raise InputError(f"cannot read it ({getattr(err, 'strerror', None) or err})", field="--config", source=str(self.path), value_is_file=True) from None
        try:
            values = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise InputError(f"not TOML ({err})", field="--config", source=str(self.path), value_is_file=True) from None
        try:
            return Preferences.model_validate(values)
        except ValidationError as err:
            first = err.errors()[0]
            key = ".".join(str(part) for part in first["loc"]) or "?"
            message = first["msg"]
            if first["type"] == "extra_forbidden":  # say which keys there are, not pydantic's "Extra inputs"
                message = f"not a kvtop setting (it reads {', '.join(Preferences.model_fields)})"
            raise InputError(message, field=key, source=str(self.path)) from None

    def save(self, preferences: Preferences) -> str | None:
        """Write the file whole (a temporary file renamed over it); None, or why it could not be written."""
        lines = [HEADER]
        for key, value in preferences.model_dump().items():
            if value is None:
                continue
            lines.append(f"{key} = {_toml(value)}\n")
        temporary = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text("".join(lines), encoding="utf-8")
            temporary.replace(self.path)
        except OSError as err:
            return f"settings not saved to {self.path}: {err.strerror or err}"
        return None


def _toml(value: object) -> str:
    """A TOML value: strings and lists of strings as JSON writes them (a subset of TOML), bools, numbers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)
