"""The TUI's settings, read the same way by the node TUI (`tui.py`) and the cluster TUI (`tui_cluster.py`):
the settings file `--config` names and the refresh interval. Apart from both, so neither imports the other.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from kvtop.domain.errors import InputError
from kvtop.domain.preferences import Preferences
from kvtop.domain.refresh import REFRESH_FLOOR, below_refresh_floor

if TYPE_CHECKING:
    from kvtop.sources.preferences_file import PreferencesFile


def preferences_store(args: argparse.Namespace) -> PreferencesFile:
    """The settings file `--config` names, else the XDG one."""
    from kvtop.sources.preferences_file import PreferencesFile, default_config_path

    given = getattr(args, "config", None)
    return PreferencesFile(Path(given).expanduser() if given else default_config_path())


def interval_of(args: argparse.Namespace, preferences: Preferences) -> float:
    """--interval, else the settings file's, else 1 s."""
    given = getattr(args, "interval", None)
    interval = float(given if given is not None else preferences.interval_s or 1.0)
    if below_refresh_floor(interval):  # both readers refuse it already; checked again where the two meet
        raise InputError(f"{REFRESH_FLOOR} (got {interval:g})", field="--interval")
    return interval


@contextmanager
def theme_named_where_given(args: argparse.Namespace, store: PreferencesFile) -> Iterator[None]:
    """An unknown theme (the app refuses it as `--theme`) is named where it came from: `--theme` when given,
    else the settings file's `theme` key, with the file."""
    try:
        yield
    except InputError as err:
        if err.field != "--theme" or getattr(args, "theme", None):
            raise
        raise InputError(err.detail, field="theme", source=store.location) from None
