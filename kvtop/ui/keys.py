"""Every key kvtop answers to, in one table: the help screen shows it, a test checks the bindings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KeyHelp:
    keys: str  # as Textual names them, comma-separated
    description: str
    where: str
    changes_something: bool = False  # hidden with --read-only


SECTIONS = (
    "everywhere",
    "dashboard",
    "findings pane",
    "rank ledger",
    "process panel",
    "signal dialog",
    "planner",
)

KEYS: tuple[KeyHelp, ...] = (
    KeyHelp("q", "quit (not while typing in a field or an open list: there it is a letter)", "everywhere"),
    KeyHelp("ctrl+q,ctrl+c", "quit, from anywhere", "everywhere"),
    KeyHelp("ctrl+p", "command palette: every action of this screen, by name", "everywhere"),
    KeyHelp("question_mark", "this help", "everywhere"),
    KeyHelp("tab,shift+tab", "cycle panes and fields", "everywhere"),
    KeyHelp("r", "refresh now", "everywhere"),
    KeyHelp("z", "pause: freeze the screen (polling goes on); again to resume", "everywhere"),
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
    KeyHelp("x", "process table of the selected GPU", "dashboard"),
    KeyHelp("X", "process table of every GPU (nvitop's); in it, a narrows it to the selected GPU", "dashboard"),
    KeyHelp("g", "tree: engines → their processes → the ranks each holds (Enter: a rank's ledger)", "dashboard"),
    KeyHelp(
        "slash",
        "filter: gpu:3 pid:4242 state:tight|finding|orphan|idle|lost (a GPU NVML lost) engine:sglang, re:PATTERN, !word, or text",
        "dashboard",
    ),
    KeyHelp("s", "sort: GPU index, problems first, least free, most used, KV in use", "dashboard"),
    KeyHelp("S", "reverse the sort (highest first)", "dashboard"),
    KeyHelp("V", "show or hide NVML's vitals: GPU utilisation and its history, temperature, power, SM clock", "dashboard"),
    KeyHelp("H", "show or hide the KV and memory history", "dashboard"),
    KeyHelp("f", "findings pane (its GPUs get a coloured edge)", "dashboard"),
    KeyHelp("up,k", "previous finding (selects its worst GPU)", "findings pane"),
    KeyHelp("down,j", "next finding (selects its worst GPU)", "findings pane"),
    KeyHelp(
        "enter",
        "planner with the fix applied; for a fix that stops processes, their process panel",
        "findings pane",
    ),
    KeyHelp("up,k", "scroll up", "rank ledger"),
    KeyHelp("down,j", "scroll down", "rank ledger"),
    KeyHelp("pageup,pagedown", "scroll a page", "rank ledger"),
    KeyHelp("up,down", "select a process", "process panel"),
    KeyHelp("s", "sort: bytes, pid, user, role, age, command, GPU", "process panel"),
    KeyHelp("a", "every GPU's processes / back to one GPU's: one table, filtered", "process panel"),
    KeyHelp(
        "slash", "filter: gpu:3 pid:4242 user:ada role:co-tenant engine:sglang, re:PATTERN, !word, or text", "process panel"
    ),
    KeyHelp("escape", "close the filter, else back", "process panel"),
    KeyHelp("space", "tag / untag the selected process for a signal (one kvtop can name)", "process panel", True),
    KeyHelp("T", "terminate the tagged processes, else the selected one (SIGTERM), after a confirmation", "process panel", True),
    KeyHelp("K", "kill the tagged processes, else the selected one (SIGKILL), after a confirmation", "process panel", True),
    KeyHelp("I", "interrupt the tagged processes, else the selected one (SIGINT), after a confirmation", "process panel", True),
    KeyHelp("y", "send the signal the dialog states (to every process it does not refuse)", "signal dialog", True),
    KeyHelp("F", "force it: a process of a serving engine is refused otherwise (F sends to every one)", "signal dialog", True),
    KeyHelp("n,escape", "cancel", "signal dialog", True),
    KeyHelp("enter", "in the model field: load that model (preset, config path or hub id)", "planner"),
    KeyHelp("ctrl+r", "reset every field to the running launch's settings", "planner"),
    KeyHelp("c", "copy the engine flags (in the model, version and speculative fields a letter)", "planner"),
    KeyHelp("ctrl+y", "copy the engine flags from anywhere, a word field included", "planner"),
    KeyHelp(
        "P",
        "probe the edit's KV pool, from a number field or a list (in the model, version and speculative fields a letter)",
        "planner",
        changes_something=True,
    ),
    KeyHelp("pageup,pagedown", "scroll the result pane where the terminal is too short for it", "planner"),
)

CLUSTER_SECTIONS = ("everywhere", "node list", "engine list", "node dashboard")

#: The cluster view (`kvtop --prometheus URL`): read-only, no planner, probe or signals.
CLUSTER_KEYS: tuple[KeyHelp, ...] = (
    KeyHelp("q", "quit (not while typing in the filter: there it is a letter)", "everywhere"),
    KeyHelp("ctrl+q,ctrl+c", "quit, from anywhere", "everywhere"),
    KeyHelp("ctrl+p", "command palette: every action of this screen, by name", "everywhere"),
    KeyHelp("question_mark", "this help", "everywhere"),
    KeyHelp("r", "read Prometheus now", "everywhere"),
    KeyHelp("t", "next theme (dark, light, high-contrast)", "everywhere"),
    KeyHelp("up,down", "select a node (worst first)", "node list"),
    KeyHelp("enter", "that node's dashboard, from its Prometheus series", "node list"),
    KeyHelp("e", "the engines: one row each, its ranks on every node joined", "node list"),
    KeyHelp("up,down", "select an engine (its waterfall and pair below)", "engine list"),
    KeyHelp("enter", "the dashboard of the node of its tightest rank", "engine list"),
    KeyHelp("n", "back to the node list", "engine list"),
    KeyHelp("escape", "clear the filter, else back to the node list", "node dashboard"),
    KeyHelp("up,k,down,j", "select a GPU", "node dashboard"),
    KeyHelp(
        "slash", "filter: gpu:3 pid:4242 state:lost engine:sglang, or model/process text", "node dashboard"
    ),
    KeyHelp("s", "sort: GPU index, problems first, least free, most used, KV in use", "node dashboard"),
    KeyHelp("f", "findings pane (the node's own kvtop export counts them)", "node dashboard"),
)


def key_label(keys: str) -> str:
    """'question_mark' → '?', 'up,k' → 'up / k'."""
    names = {"question_mark": "?", "slash": "/"}
    return " / ".join(names.get(key, key) for key in keys.split(","))
