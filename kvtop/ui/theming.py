"""Palettes: `themes/*.toml` (or `.json`) → validated `PaletteFile` → registered `textual.theme.Theme`.

The palette files live in the top-level `themes/` folder and ship inside the package
(`kvtop.bundled`). The built-in copies below stand in when the folder is absent, so the app
always has its three palettes. The `kv-*` tokens colour the memory bars; a palette may override each of them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from textual.app import App
from textual.theme import Theme

from kvtop.bundled import bundled_dir
from kvtop.domain.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10: the same parser, as the `tomli` dependency
    import tomli as tomllib

#: kvtop's own theme tokens (literal defaults: a theme file may replace each one).
KV_TOKENS: dict[str, str] = {
    "kv-weights": "#5F87D7",
    "kv-pool": "#5FD7AF",
    "kv-runtime": "#D7AF5F",
    "kv-driver": "#8A8A8A",
    "kv-foreign": "#FF5F87",
    "kv-free": "#3A3F47",
    "kv-predicted": "#9AA4B1",
}

DEFAULT_THEME = "dark"


class PaletteFile(BaseModel):
    """One palette file: Textual's base colours plus kvtop's `kv-*` tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    dark: bool = True
    primary: str
    secondary: str | None = None
    accent: str | None = None
    warning: str | None = None
    error: str | None = None
    success: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    variables: dict[str, str] = {}

    def to_theme(self) -> Theme:
        colours = self.model_dump(exclude={"name", "dark", "variables"})
        return Theme(name=self.name, dark=self.dark, variables=KV_TOKENS | self.variables, **colours)


BUILTIN_PALETTES: tuple[dict[str, Any], ...] = (
    {
        "name": "dark", "dark": True, "primary": "#5FAFD7", "secondary": "#8787D7", "accent": "#FFAF5F",
        "warning": "#FFD75F", "error": "#FF5F5F", "success": "#5FD787", "foreground": "#D0D0D0",
        "background": "#121417", "surface": "#1B1E23", "panel": "#252A31",
        "variables": dict(KV_TOKENS),
    },
    {
        "name": "light", "dark": False, "primary": "#005F87", "secondary": "#5F5FAF", "accent": "#AF5F00",
        "warning": "#AF8700", "error": "#D70000", "success": "#008700", "foreground": "#1C1C1C",
        "background": "#FAFAF7", "surface": "#F0F0EB", "panel": "#E2E4E8",
        "variables": {
            "kv-weights": "#1F5FBF", "kv-pool": "#00875F", "kv-runtime": "#B07800", "kv-driver": "#6C6C6C",
            "kv-foreign": "#C0003C", "kv-free": "#C8CCD2", "kv-predicted": "#5A6470",
        },
    },
    {
        "name": "high-contrast", "dark": True, "primary": "#00FFFF", "secondary": "#FF00FF", "accent": "#FFFF00",
        "warning": "#FFFF00", "error": "#FF0000", "success": "#00FF00", "foreground": "#FFFFFF",
        "background": "#000000", "surface": "#000000", "panel": "#1A1A1A",
        "variables": {
            "kv-weights": "#0087FF", "kv-pool": "#00FF00", "kv-runtime": "#FFFF00", "kv-driver": "#FFFFFF",
            "kv-foreign": "#FF0000", "kv-free": "#444444", "kv-predicted": "#FFFFFF",
        },
    },
)  # fmt: skip


def default_themes_dir() -> Path:
    """The top-level `themes/` folder, as shipped with this kvtop (a checkout or an installed wheel)."""
    return bundled_dir("themes")


def read_palette(path: Path) -> PaletteFile:
    """Parse one palette file; a malformed one is an InputError naming the file."""
    try:
        if path.suffix == ".toml":
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        else:
            raw = json.loads(path.read_text(encoding="utf-8"))
        return PaletteFile.model_validate(raw)
    except (OSError, ValueError) as err:  # tomllib/json decode errors and pydantic errors are ValueErrors
        detail = err.errors()[0] if isinstance(err, ValidationError) else None
        reason = f"{'.'.join(str(p) for p in detail['loc'])}: {detail['msg']}" if detail else str(err)
        raise InputError(f"not a valid palette ({reason})", field="theme", source=str(path)) from None


def load_palettes(themes_dir: Path | None = None) -> tuple[Theme, ...]:
    """The built-in palettes, each replaced by the file of the same name in `themes_dir` if present."""
    folder = default_themes_dir() if themes_dir is None else themes_dir
    palettes = {raw["name"]: PaletteFile.model_validate(raw) for raw in BUILTIN_PALETTES}
    if folder.is_dir():
        for path in sorted([*folder.glob("*.toml"), *folder.glob("*.json")]):
            palette = read_palette(path)
            palettes[palette.name] = palette
    return tuple(palette.to_theme() for palette in palettes.values())


def install_palettes(app: App[Any], theme: str | None, themes_dir: Path | None = None) -> tuple[str, ...]:
    """Register kvtop's palettes on an app and switch to `theme` (default: dark); their names.

    An unknown theme is an InputError naming --theme and the themes kvtop has.
    """
    palettes = load_palettes(themes_dir)
    for palette in palettes:
        app.register_theme(palette)
    names = tuple(palette.name for palette in palettes)
    chosen = theme or DEFAULT_THEME
    if chosen not in app.available_themes:
        raise InputError(f"unknown theme {chosen!r} (kvtop's: {', '.join(names)})", field="--theme")
    app.theme = chosen
    return names
