"""Textual's footer, without the keys it leaves behind each time it redraws them.

Textual's `Footer` rebuilds its keys whenever the screen's bindings change (a screen opened or
closed over it, the focus moved), and binds every new `FooterKey` to its own `compact` reactive.
Textual keeps each binding on the footer and drops those of removed keys only when `compact`
changes, which in kvtop it never does: the dashboard's footer kept every key it ever showed, each
with its styles and caches (≈ 230 objects a key, 15 keys a screen visit: the growth issue 17
measured). Reported upstream as Textualize/textual#6666 (open, Textual 8.2.8).

Below `COMPACT_FOOTER_BELOW` columns every kvtop footer is compact (one cell less per key, decided here for every
screen): at 80 columns the dashboard's nine keys were cut at 'Processes' and 'Tree' (session 62's operator pass).
"""

from __future__ import annotations

from textual import events
from textual.dom import DOMNode
from textual.widgets import Footer as TextualFooter

#: Where Textual keeps the watchers other nodes put on a node (`DOMNode.watch`, `data_bind`).
_WATCHERS = "__watchers"
#: Below this width (columns) the footer is compact: the dashboard's nine keys and the process table's eight fit 80.
COMPACT_FOOTER_BELOW = 100


def drop_closed_watchers(node: DOMNode) -> None:
    """Forget the watchers of nodes that were removed, as Textual itself does when the value changes."""
    for watchers in getattr(node, _WATCHERS, {}).values():
        watchers[:] = [(watcher, callback) for watcher, callback in watchers if not watcher._closing]


class Footer(TextualFooter):
    """A `textual.widgets.Footer` whose rebuilt keys are freed and which is compact on a narrow terminal."""

    def on_mount(self) -> None:
        self.compact = self.app.size.width < COMPACT_FOOTER_BELOW

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_FOOTER_BELOW

    async def recompose(self) -> None:
        await super().recompose()
        drop_closed_watchers(self)  # the keys just removed are closed by now
