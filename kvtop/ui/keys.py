"""Every key kvtop answers to, in one table: the help screen shows it, a test checks the bindings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KeyHelp:
    keys: str  # as Textual names them, comma-separated
    description: str
    where: str
    changes_something: bool = False  # hidden with --read-only


SECTIONS = ("everywhere", "dashboard", "findings pane", "rank ledger", "planner")

KEYS: tuple[KeyHelp, ...] = (
    KeyHelp("q", "quit", "everywhere"),
    KeyHelp("question_mark", "this help", "everywhere"),
    KeyHelp("tab,shift+tab", "cycle panes and fields", "everywhere"),
    KeyHelp("r", "refresh now", "everywhere"),
    KeyHelp("p", "planner: what if TP, KV dtype, memory … changed", "everywhere"),
    KeyHelp("P", "probe: prove that the planned KV pool fits", "everywhere", changes_something=True),
    KeyHelp("y", "in the probe dialog: run the probe it states", "everywhere", changes_something=True),
    KeyHelp(
        "n",
        "in the probe dialog: cancel; while it runs, stop it (kills its process)",
        "everywhere",
        changes_something=True,
    ),
    KeyHelp("t", "next theme (dark, light, high-contrast)", "everywhere"),
    KeyHelp("escape", "back; on the dashboard, clear the filter", "everywhere"),
    KeyHelp("up,k", "select the GPU above", "dashboard"),
    KeyHelp("down,j", "select the GPU below", "dashboard"),
    KeyHelp("home,end", "first / last GPU", "dashboard"),
    KeyHelp("enter", "rank ledger of the selected GPU (or click twice)", "dashboard"),
    KeyHelp("slash", "filter GPUs by index, name, engine, state", "dashboard"),
    KeyHelp("f", "findings pane (its GPUs get a coloured edge)", "dashboard"),
    KeyHelp("up,k", "previous finding", "findings pane"),
    KeyHelp("down,j", "next finding", "findings pane"),
    KeyHelp("enter", "planner with the fix applied (or double-click the finding)", "findings pane"),
    KeyHelp("up,k", "scroll up", "rank ledger"),
    KeyHelp("down,j", "scroll down", "rank ledger"),
    KeyHelp("pageup,pagedown", "scroll a page", "rank ledger"),
    KeyHelp("enter", "in the model field: load that model (preset, config path or hub id)", "planner"),
    KeyHelp("ctrl+r", "reset every field to the live settings", "planner"),
    KeyHelp("c", "copy the engine flags (outside a field)", "planner"),
)


def key_label(keys: str) -> str:
    """'question_mark' → '?', 'up,k' → 'up / k'."""
    names = {"question_mark": "?", "slash": "/", "ctrl+r": "ctrl+r", "shift+tab": "shift+tab"}
    return " / ".join(names.get(key, key) for key in keys.split(","))
