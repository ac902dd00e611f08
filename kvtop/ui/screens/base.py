"""A screen that shows the node: the app assigns `node` and `now` on every message and tick."""

from __future__ import annotations

from textual.reactive import reactive
from textual.screen import Screen

from kvtop.ui.state import NodeState


class NodeScreen(Screen[None]):
    """Subclasses implement `show_node`; `NodeHeader`s bind to `node` and `now`."""

    node: reactive[NodeState] = reactive(NodeState(source_label=""), repaint=False)
    now: reactive[float] = reactive(0.0, repaint=False)

    def __init__(self, state: NodeState, now: float, interval_s: float) -> None:
        super().__init__()
        self.interval_s = interval_s
        self.set_reactive(NodeScreen.node, state)
        self.set_reactive(NodeScreen.now, now)

    def on_mount(self) -> None:
        self.show_node(self.node)

    def watch_node(self, state: NodeState) -> None:
        self.show_node(state)

    def show_node(self, state: NodeState) -> None:
        """Redraw from `state` (called on mount and on every new state)."""
