"""What both kvtop apps (the node and the cluster view) share: palettes, the clock, the interval."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.reactive import reactive

from kvtop.domain.errors import InputError
from kvtop.ui.theming import KV_TOKENS, install_palettes


class KvtopBaseApp(App[int]):
    """Registers kvtop's palettes, checks the refresh interval and ticks `now` once a second."""

    CSS_PATH = "kvtop.tcss"
    ENABLE_COMMAND_PALETTE = False

    now: reactive[float] = reactive(0.0, init=False, repaint=False)

    def __init__(
        self, *, theme: str | None, interval_s: float, clock: Callable[[], float] = time.monotonic,
        themes_dir: Path | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        if interval_s <= 0:
            raise InputError(f"must be positive (got {interval_s:g})", field="--interval")
        self._interval_s = interval_s
        self._clock = clock
        self.palette_names = install_palettes(self, theme, themes_dir)
        self.set_reactive(KvtopBaseApp.now, clock())

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(KV_TOKENS)

    def _tick(self) -> None:
        self.now = self._clock()

    def action_next_theme(self) -> None:
        names = self.palette_names
        position = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(position + 1) % len(names)]
        self.notify(f"theme: {self.theme}", timeout=2)
