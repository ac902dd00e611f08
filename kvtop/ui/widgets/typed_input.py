"""A text field that takes backspace and delete in the order they were typed.

Textual's `Input` (8.x) runs backspace and delete as key bindings, and a binding runs once
the key has travelled up to the app: a character typed right behind it is inserted first.
Typed fast, "⌫4" on a field showing "8" (selected on focus) put the 4 in place of the 8 and
then deleted it, and the planner showed an empty TP. Handled here as the keys arrive, each
edit lands where it was typed. Used for the planner's fields and the dashboard's filter.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class TypedInput(Input):
    """An `Input` whose backspace and delete act in key order (see the module doc)."""

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "backspace":
            self.action_delete_left()
        elif event.key == "delete":
            self.action_delete_right()
        else:
            await super()._on_key(event)
            return
        event.stop()
        event.prevent_default()
