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
    """Registers kvtop's palettes, checks the refresh interval and keeps `now` for the freshness markers.

    The clock ticks once a second but moves `now` only when a marker would read differently:
    while data arrives on time the markers say the same ("● live · every 1 s"), so a tick costs
    no redraw; once data is late they count the seconds.
    """

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
        self._clock_reading: object = None  # what the markers said at the last tick

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(KV_TOKENS)

    def _tick(self) -> None:
        now = self._clock()
        reading = self.freshness_reading(now)
        if reading != self._clock_reading:
            self._clock_reading = reading
            self.now = now

    def freshness_reading(self, now: float) -> object:
        """What the app's freshness markers would say at `now` (subclasses: their sources' ages)."""
        return now

    def action_next_theme(self) -> None:
        names = self.palette_names
        position = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(position + 1) % len(names)]
        self.notify(f"theme: {self.theme}", timeout=2)
