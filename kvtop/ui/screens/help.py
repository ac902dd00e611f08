"""`?`: every key kvtop answers to, from the one table in `kvtop.ui.keys`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from kvtop.ui.keys import KEYS, SECTIONS, KeyHelp, key_label
from kvtop.ui.widgets.footer import Footer
from kvtop.ui.widgets.hanging import Hanging

READ_ONLY_NOTE = "--read-only: actions that change anything (the probe, signals) are hidden."


def help_text(
    read_only: bool,
    keys: tuple[KeyHelp, ...] = KEYS,
    sections: tuple[str, ...] = SECTIONS,
    read_only_note: str = READ_ONLY_NOTE,
) -> Content:
    """The key table by section; every key column as wide as the widest key, plus two spaces. A description
    too long for the box wraps under its own text, not at the box's left edge under the keys."""
    shown = [entry for entry in keys if not (read_only and entry.changes_something)]
    width = max((len(key_label(entry.keys)) for entry in shown), default=0) + 2
    lines = [(Content.styled("kvtop keys", "bold $primary"), 0)]
    for section in sections:
        lines.append((Content.styled(section, "bold underline $text-muted"), 0))
        for entry in shown:
            if entry.where != section:
                continue
            key = Content.styled(f"  {key_label(entry.keys):<{width}}", "bold $accent")
            lines.append((Content.assemble(key, entry.description), len(key)))
    lines += [
        (Content(""), 0),
        (Content.styled(
            "The mouse works too: click a GPU to select it, click it again for its ledger.", "$text-muted"
        ), 0),
        (Content.styled(
            "Bars: top = observed (NVML + engine), bottom = predicted ledger, same scale.", "$text-muted"
        ), 0),
    ]  # fmt: skip
    if read_only:
        lines.append((Content.styled(read_only_note, "$warning"), 0))
    return Hanging(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "app.pop_screen", "Close"),
        Binding("up,k", "scroll('up')", "Scroll", show=False),
        # shown: on a 30-line terminal the table is a third in sight, and the box draws no scrollbar
        Binding("down,j", "scroll('down')", "Scroll", key_display="↑↓"),
    ]

    def __init__(self, read_only: bool, text: Content | None = None) -> None:
        super().__init__()
        self._read_only = read_only
        self._text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(self._text or help_text(self._read_only), id="help-text")
        yield Footer()  # this dialog's keys, over the screen's below

    def action_scroll(self, direction: str) -> None:
        box = self.query_one("#help-box", VerticalScroll)
        box.scroll_up(animate=False) if direction == "up" else box.scroll_down(animate=False)
