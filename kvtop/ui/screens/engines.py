"""The node as a tree (`g`; nvitop's tree view): engines → their processes → the ranks each holds, then
what no engine owns and the GPUs that hold nothing. Enter on a line with a GPU opens its rank ledger."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode as Branch

from kvtop.ui.engine_tree import TreeNode, engine_tree
from kvtop.ui.screens.base import NodeScreen
from kvtop.ui.state import NodeState
from kvtop.ui.widgets.footer import Footer
from kvtop.ui.widgets.gpu_list import GpuList
from kvtop.ui.widgets.node_header import NodeHeader

_TONES = {"warning": ("warning", ""), "error": ("error", "bold "), "muted": ("text-muted", "")}


class EngineTreeScreen(NodeScreen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, state: NodeState, now: float, interval_s: float) -> None:
        super().__init__(state, now, interval_s)
        self._shown: tuple[TreeNode, ...] | None = None

    def compose(self) -> ComposeResult:
        yield NodeHeader(self.interval_s, engines=False, id="header").data_bind(
            state=NodeScreen.node, now=NodeScreen.now
        )
        yield Static(Content.styled("Engines → processes → ranks (Enter: a GPU's rank ledger)", "bold $primary"))
        tree: Tree[TreeNode] = Tree("node", id="engine-tree")
        tree.show_root = False
        yield tree
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(Tree).focus()

    def show_node(self, state: NodeState) -> None:
        """Rebuild the tree only when what it says changed (a tick that moves nothing keeps the cursor)."""
        nodes = engine_tree(state.snapshot) if state.snapshot is not None else ()
        if nodes == self._shown:
            return
        self._shown = nodes
        tree: Tree[TreeNode] = self.query_one(Tree)
        line = tree.cursor_line
        tree.clear()
        colours = self.app.get_css_variables()
        styles = {tone: f"{bold}{colours.get(name, '')}".strip() for tone, (name, bold) in _TONES.items()}
        for node in nodes:
            _add(tree.root, node, styles)
        tree.root.expand_all()
        if nodes:
            tree.cursor_line = min(max(line, 0), tree.last_line)
        if not nodes:
            tree.root.add_leaf("waiting for the first snapshot…")

    @on(Tree.NodeSelected)
    def open_ledger(self, event: Tree.NodeSelected[TreeNode]) -> None:
        node = event.node.data
        if node is not None and node.gpu is not None and not node.children:
            self.app.post_message(GpuList.Opened(node.gpu))


def _add(parent: Branch[TreeNode], node: TreeNode, styles: dict[str, str]) -> None:
    """The node and its children (a Tree takes rich Text labels: the theme's colours, resolved)."""
    label = Text(node.label, style=styles.get(node.tone, ""))
    if not node.children:
        parent.add_leaf(label, data=node)
        return
    branch = parent.add(label, data=node, expand=True)
    for child in node.children:
        _add(branch, child, styles)
