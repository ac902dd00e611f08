"""What both kvtop apps (the node and the cluster view) share: palettes, the clock, the interval."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import CommandPalette
from textual.dom import DOMNode
from textual.filter import LineFilter
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Input, OptionList, Select, TextArea

from kvtop.domain.errors import InputError
from kvtop.domain.refresh import REFRESH_FLOOR, below_refresh_floor
from kvtop.domain.secret_text import redact_text
from kvtop.domain.terminal import safe_text
from kvtop.ui.safe_lines import TerminalSafe
from kvtop.ui.theming import KV_TOKENS, install_palettes

if TYPE_CHECKING:
    from rich.traceback import Trace

#: Widgets where `q` is typed, not a command: it never quits from them (ctrl+q always does).
TYPING_WIDGETS = (Input, Select, OptionList, TextArea)  # a Select's open list is an OptionList
#: Keys that move a selection or scroll: not commands worth a palette entry.
_MOVES = {"up", "down", "k", "j", "home", "end", "pageup", "pagedown", "left", "right", "tab", "shift+tab"}
#: Actions of the framework's own (scrolling, focus, copying, the palette itself, ctrl+q).
_NOT_COMMANDS = (
    "scroll_",
    "page_",
    "move",
    "jump",
    "app.focus_",
    "screen.copy_text",
    "command_palette",
    "quit",
)


class KvtopBaseApp(App[int]):
    """Registers kvtop's palettes, checks the refresh interval and keeps `now` for the freshness markers.

    The clock ticks once a second but moves `now` only when a marker would read differently:
    while data arrives on time the markers say the same ("● live · every 1 s"), so a tick costs
    no redraw; once data is late they count the seconds.
    """

    CSS_PATH = "kvtop.tcss"
    COMMAND_PALETTE_DISPLAY = "ctrl+p"
    # htop's, k9s's, nvitop's habit: ctrl+c quits from anywhere (Textual would copy a selection)
    # Tab and shift+tab move the focus at the app, as the key arrives (priority): a plain binding runs once the
    # key has bubbled up from the focused field, and the keys typed right behind it ("Tab 2" in one burst) were
    # by then forwarded to the field being left (the planner's TP took the 2 meant for DP)
    BINDINGS = [
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("tab", "app.focus_next", "Next field", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", "Previous field", show=False, priority=True),
    ]

    now: reactive[float] = reactive(0.0, init=False, repaint=False)

    def __init__(
        self, *, theme: str | None, interval_s: float, clock: Callable[[], float] = time.monotonic,
        themes_dir: Path | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        if below_refresh_floor(interval_s):  # the one floor the CLI and the settings file apply
            raise InputError(f"{REFRESH_FLOOR} (got {interval_s:g})", field="--interval")
        self._interval_s = interval_s
        self._clock = clock
        self.palette_names = install_palettes(self, theme, themes_dir)
        self.set_reactive(KvtopBaseApp.now, clock())
        self._clock_reading: object = None  # what the markers said at the last tick
        self._terminal_safe = TerminalSafe()

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then `TerminalSafe`: no line the TUI draws can drive the terminal."""
        return [*super().get_line_filters(), self._terminal_safe]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast whose text is never markup and drives no terminal: a message quoting a fix, a path
        or a server's answer (`[@click=app.quit]`, an ESC) is shown as written, escaped."""
        super().notify(safe_text(message), title=title, severity=severity, timeout=timeout, markup=False)

    def _fatal_error(self) -> None:
        """Textual's crash report without its frames' local variables and with the error's message redacted.

        Textual prints an unhandled error's traceback with every frame's locals (`show_locals=True`): a crash would
        print the cluster view's bearer token, a process's unredacted command line or a typed launch's `--api-key`
        to the terminal, and a crash report is what gets pasted into an issue. The frames, lines and the error's
        type stay; every text the error carries passes the one redactor (`_redacted`)."""
        import rich
        from rich.segment import Segments
        from rich.traceback import Traceback

        error = sys.exc_info()[1] or self._exception
        if error is None:  # nothing to report on: Textual's own path
            super()._fatal_error()
            return
        trace = _redacted(Traceback.extract(type(error), error, error.__traceback__, show_locals=False))
        self.bell()
        traceback = Traceback(trace, width=None, suppress=[rich])
        self._exit_renderables.append(Segments(self.console.render(traceback, self.console.options)))
        self._close_messages_no_wait()

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

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """ctrl+p: every action the screen answers to now (by the name its key shows), then Textual's own."""
        titles: set[str] = set()
        for key, (node, binding, enabled, _) in screen.active_bindings.items():
            if not enabled or binding.system or key in _MOVES or binding.action.startswith(_NOT_COMMANDS):
                continue
            title = binding.description or binding.action
            if title in titles:
                continue
            titles.add(title)
            help_text = f"key {binding.key_display or key}" + (
                f": {binding.tooltip}" if binding.tooltip else ""
            )
            yield SystemCommand(title, help_text, partial(self._run_from_palette, node, binding.action))
        yield from (command for command in super().get_system_commands(screen) if command.title not in titles)

    def _run_from_palette(self, node: DOMNode, action: str) -> None:
        self.call_after_refresh(self.run_action, action, node)  # once the palette has closed

    @property
    def action_screen(self) -> Screen[object]:
        """The screen actions act on: the one on top, or the one under the command palette."""
        if isinstance(self.screen, CommandPalette) and len(self.screen_stack) > 1:
            return self.screen_stack[-2]
        return self.screen

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "quit_unless_typing":
            return not isinstance(self.focused, TYPING_WIDGETS)  # `q` is typed there; ctrl+q quits
        return True

    def action_quit_unless_typing(self) -> None:
        """`q`: quit (check_action keeps it from firing while a field or a list has the focus)."""
        self.exit()

    def action_next_theme(self) -> None:
        names = self.palette_names
        position = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(position + 1) % len(names)]
        self.notify(f"theme: {self.theme}", timeout=2)


def _redacted(trace: Trace) -> Trace:
    """`trace` with every text its errors carry passed through the one redactor (`redact_text`), as the CLI's
    `crash_report` redacts every line: each chained error's message and notes (`add_note`: a wrapper may note the
    command line it ran), a syntax error's message, source line and notes, and each error an ExceptionGroup holds
    (a TaskGroup's failures), to any depth. Edits `trace` in place and returns it."""
    for stack in trace.stacks:
        stack.exc_value = redact_text(stack.exc_value)
        stack.notes = [redact_text(note) for note in stack.notes]
        if stack.syntax_error is not None:
            syntax = stack.syntax_error
            syntax.msg, syntax.line = redact_text(syntax.msg), redact_text(syntax.line)
            syntax.notes = [redact_text(note) for note in syntax.notes]
        for grouped in stack.exceptions:
            _redacted(grouped)
    return trace
