"""`?`: every key kvtop answers to, from the one table in `kvtop.ui.keys`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from kvtop.ui.keys import KEYS, SECTIONS, key_label


def help_text(read_only: bool) -> Content:
    lines = [Content.styled("kvtop keys", "bold $primary")]
    for section in SECTIONS:
        lines.append(Content.styled(section, "bold underline $text-muted"))
        for entry in KEYS:
            if entry.where != section or (read_only and entry.changes_something):
                continue
            lines.append(
                Content.assemble((f"  {key_label(entry.keys):<16}", "bold $accent"), entry.description)
            )
    lines += [
        Content(""),
        Content.styled(
            "The mouse works too: click a GPU to select it, click it again for its ledger.", "$text-muted"
        ),
        Content.styled(
            "Bars: top = observed (NVML + engine), bottom = predicted ledger, same scale.", "$text-muted"
        ),
    ]
    if read_only:
        lines.append(
            Content.styled("--read-only: actions that change anything (the probe) are hidden.", "$warning")
        )
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "app.pop_screen", "Close"),
    ]

    def __init__(self, read_only: bool) -> None:
        super().__init__()
        self._read_only = read_only

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(help_text(self._read_only), id="help-text")
        yield Static(Content.styled("Esc, ? or q closes", "$text-muted"), id="help-hint")
