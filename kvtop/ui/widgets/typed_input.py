"""A text field that takes backspace and delete in the order they were typed.

Textual's `Input` (8.x) runs backspace and delete as key bindings, and a binding runs once
the key has travelled up to the app: a character typed right behind it is inserted first.
Typed fast, "⌫4" on a field showing "8" (selected on focus) put the 4 in place of the 8 and
then deleted it, and the planner showed an empty TP. Handled here as the keys arrive, each
edit lands where it was typed: backspace and delete, and every other key Textual's `Input` binds to a cursor move or
a deletion (`EDIT_KEYS`: "ctrl+u -1" typed fast left the field empty, the "-1" in before the line was cleared). Used
for the planner's fields and the dashboard's filter.

A field opened by a key has the same race one step earlier: the terminal hands over "/gpu:3" at once,
the app forwards every key to the widget focused *then* (the GPU list), and every one of them bubbles up
to the screen before `/` reaches its binding; they would run as the screen's keys ("p": the planner). So
the screen opens its field as `/` arrives (its `on_key` calls `take_screen_key`), and `take_stray_key` gives
the field the text keys that were typed for it but reached the screen.

A field may pass keys its text never holds (`passed_keys`: the planner's number fields pass `P` and `c`) to the bindings
above it: neither inserted nor hidden from the footer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.strip import Strip
from textual.widgets import Input

#: The `Input` actions run as their key arrives (no argument: a shifted, selecting move stays a binding).
IN_ORDER_ACTIONS = frozenset({
    "cursor_left", "cursor_right", "cursor_left_word", "cursor_right_word", "home", "end",
    "delete_left", "delete_right", "delete_left_word", "delete_right_word", "delete_left_all", "delete_right_all",
})  # fmt: skip

#: Each key `Input` binds to one of those actions, read from its bindings (ctrl+u → delete_left_all).
EDIT_KEYS: dict[str, str] = {
    key.strip(): binding.action
    for binding in Input.BINDINGS
    if isinstance(binding, Binding) and binding.action in IN_ORDER_ACTIONS
    for key in binding.key.split(",")
}


def elided(text: str, width: int) -> str:
    """`text` in `width` cells, its middle replaced by '…' when it is longer ('meta-llama/Me…-70B-Instruct'):
    the organisation and the variant both stay in sight, and the cut is seen."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


class TypedInput(Input):
    """An `Input` whose backspace and delete act in key order (see the module doc); with `elide`, a value
    wider than the field shows elided ('…') while the field is not being edited, never cut without a sign."""

    def __init__(self, *args: Any, elide: bool = False, passed_keys: frozenset[str] = frozenset(), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._elide = elide
        # keys no text of this field holds, left to the screen's bindings: the planner's numbers pass `P` and `c`
        self.passed_keys = passed_keys

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """A passed key is no text here: its binding stays active (and in the footer) while the field has the focus."""
        return key not in self.passed_keys and super().check_consume_key(key, character)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if not self._elide or y != 0 or self.has_focus or len(self.value) <= width:
            return super().render_line(y)
        console = self.app.console
        shown = Text(elided(self.value, width), no_wrap=True, end="")
        strip = Strip(console.render(shown, self.app.console_options.update_width(width + 1)))
        return strip.extend_cell_length(width + 1).apply_style(self.rich_style)

    async def _on_key(self, event: events.Key) -> None:
        if event.key in self.passed_keys:  # not inserted (no default action); it bubbles up to the bindings
            event.prevent_default()
            return
        action = EDIT_KEYS.get(event.key)
        if action is None:
            await super()._on_key(event)
            return
        getattr(self, f"action_{action}")()
        event.stop()
        event.prevent_default()

    def take_screen_key(self, event: events.Key, open_field: Callable[[], None]) -> None:
        """A key that reached the screen: `/` opens the field (`open_field`) as it arrives, so the keys typed
        right behind it (queued to the widget focused before) belong to the field, not to the screen; a text
        key typed for the open field is taken into it (`take_stray_key`)."""
        if event.key == "slash" and not self.is_focused:
            event.stop()
            event.prevent_default()
            open_field()
            return
        self.take_stray_key(event)

    def take_stray_key(self, event: events.Key) -> bool:
        """Insert a text key (or backspace) that reached the screen while this field has the focus: one
        typed right behind the key that opened the field and queued to the widget focused before."""
        if not self.is_focused or not (event.is_printable or event.key == "backspace"):
            return False
        event.stop()
        event.prevent_default()
        if event.key == "backspace":
            self.action_delete_left()
        elif event.character is not None:
            self.insert_text_at_cursor(event.character)
        return True

    @property
    def is_focused(self) -> bool:
        """Whether the screen's focus is this field now (`has_focus` turns true only once the Focus event
        it was sent has been handled, behind the keys already queued)."""
        return self.screen.focused is self
