"""Every key kvtop answers to, in one table: the help screen shows it, a test checks the bindings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KeyHelp:
    keys: str  # as Textual names them, comma-separated
    description: str
    where: str
    changes_something: bool = False  # hidden with --read-only


KEYS: tuple[KeyHelp, ...] = (
    KeyHelp("q", "quit", "everywhere"),
    KeyHelp("question_mark", "this help", "everywhere"),
    KeyHelp("up,k", "select the GPU above / the row above", "dashboard, ledger"),
    KeyHelp("down,j", "select the GPU below / the row below", "dashboard, ledger"),
    KeyHelp("home,end", "first / last GPU", "dashboard"),
    KeyHelp("enter", "open the rank ledger of the selected GPU", "dashboard"),
    KeyHelp("tab,shift+tab", "cycle panes and fields", "everywhere"),
    KeyHelp("slash", "filter GPUs by index, name, engine, state", "dashboard"),
    KeyHelp("f", "findings pane", "dashboard"),
    KeyHelp("r", "refresh now", "everywhere"),
    KeyHelp("p", "planner: what if TP, KV dtype, memory fraction … changed", "everywhere"),
    KeyHelp("P", "probe: allocate the planned KV pool to prove it fits", "everywhere", changes_something=True),
    KeyHelp("t", "next theme (dark, light, high-contrast)", "everywhere"),
    KeyHelp("ctrl+r", "reset the planner to the live settings", "planner"),
    KeyHelp("c", "copy the engine flags", "planner"),
    KeyHelp("escape", "back / clear the filter", "everywhere"),
)


def key_label(keys: str) -> str:
    """'question_mark' → '?', 'up,k' → 'up / k'."""
    names = {"question_mark": "?", "slash": "/", "ctrl+r": "ctrl+r", "shift+tab": "shift+tab"}
    return " / ".join(names.get(key, key) for key in keys.split(","))
