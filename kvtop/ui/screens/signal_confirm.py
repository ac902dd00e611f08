"""The signal dialog: what sending SIGTERM / SIGKILL / SIGINT to a process would do, stated before it is sent.

It names the pid, the bytes NVML says it holds (on every GPU) and what the finding that names
the pid says stopping it buys (its `gain_tokens` per rank, and whether the engine must restart to
use them), then whose the process is and its command; where no finding prices it, it says so
rather than guess. A process of a serving engine is refused: `F` forces it. Dismissed with the
`SignalRequest` to send, or None.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from kvtop.domain.ports import ProcessSignal, SignalRequest
from kvtop.ui.process_rows import SignalFacts, role_name
from kvtop.ui.widgets.footer import Footer
from kvtop.units import fmt_gib, fmt_tokens

SIGNAL_WORDS = {
    ProcessSignal.TERMINATE: "terminate: it may clean up first, or ignore it",
    ProcessSignal.KILL: "kill: it ends now, without cleaning up",
    ProcessSignal.INTERRUPT: "interrupt, as Ctrl-C would",
}
LABEL_WIDTH = 9


def _row(label: str, *parts: str | tuple[str, str]) -> Content:
    return Content.assemble((f"{label:<{LABEL_WIDTH}}", "bold"), *parts)


def frees_text(facts: SignalFacts) -> str:
    """'6.00 GiB on GPU 3 once it exits (NVML's figure for this process)'."""
    places = [f"{fmt_gib(used) if used is not None else '? GiB'} on GPU {gpu}" for gpu, used in facts.held]
    if not places:
        return "nothing NVML reports on any GPU"
    return " + ".join(places) + " once it exits (NVML's figure)"


def buys_text(facts: SignalFacts) -> Content:
    """What the finding naming the pid says stopping it buys, or that nothing prices it."""
    finding = facts.finding
    if finding is None:
        return Content.styled(
            f"no finding prices pid {facts.pid}: kvtop does not say what stopping it buys", "$text-muted"
        )
    together = [pid for pid in finding.pids if pid != facts.pid]
    scope = f" (with pids {', '.join(map(str, together))}, as one fix)" if together else ""
    if finding.engine_id is None:
        return Content(f"no running engine shares its GPU: no tokens to gain{scope} (finding {finding.rule})")
    engine = finding.engine_id
    if not finding.gain_tokens:
        return Content(f"no tokens for {engine}{scope} (finding {finding.rule})")
    gain = Content.styled(f"+{fmt_tokens(finding.gain_tokens)} tokens per rank", "bold $success")
    if finding.gain_needs_restart and finding.term_tokens is None:  # it costs nothing now (came later)
        return Content.assemble(
            "nothing now; keeps ", gain, f" that {engine}'s next restart would lose to it{scope} (finding {finding.rule})"
        )
    when = (
        f" for {engine} once it restarts: its KV pool is sized at start-up"
        if finding.gain_needs_restart
        else f" for {engine}"
    )
    return Content.assemble(gain, f"{when}{scope} (finding {finding.rule})")


def role_text(facts: SignalFacts) -> str:
    """'co-tenant · user ada', 'engine worker · sglang:41000 TP3 · user root'."""
    engine = "" if facts.engine == "—" else f" · {facts.engine}"
    return f"{role_name(facts.role)}{engine} · user {facts.user}"


def dialog_text(facts: SignalFacts, signal: ProcessSignal) -> Content:
    """The dialog's body for sending `signal` to the process `facts` describe."""
    lines = [
        Content.assemble(
            (f"Send {signal.value} to pid {facts.pid}?", "bold $primary"),
            (f" ({SIGNAL_WORDS[signal]})", "$text-muted"),
        ),
        _row("frees", frees_text(facts)),
        Content.assemble((f"{'buys':<{LABEL_WIDTH}}", "bold"), buys_text(facts)),
        _row("role", role_text(facts)),
        _row("command", facts.command),
        _row("log", ("kvtop's action log records every signal, sent or not", "$text-muted")),
    ]
    if facts.refusal:
        lines.append(Content.styled(f"REFUSED: {facts.refusal}. F sends it anyway.", "bold $error"))
    return Content("\n").join(lines)


class SignalScreen(ModalScreen[SignalRequest | None]):
    """Confirm (y) or, for a serving engine's process, force (F); n or Esc cancels."""

    DEFAULT_CSS = """
    SignalScreen { align: center middle; background: $background 60%; }
    #signal-dialog {
        width: 96%; max-width: 104; height: auto; max-height: 85%;
        border: round $error; background: $surface; padding: 0 1; scrollbar-size-vertical: 1;
    }
    #signal-buttons { height: auto; margin-top: 1; }
    #signal-buttons Button { margin-right: 2; }
    """

    BINDINGS = [
        Binding("y", "send", "Send"),
        Binding("F", "force", "Force"),
        Binding("n,escape", "cancel", "Cancel"),
    ]

    def __init__(self, facts: SignalFacts, signal: ProcessSignal, request: SignalRequest) -> None:
        super().__init__()
        self.facts = facts
        self.signal = signal
        self.request = request

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="signal-dialog"):
            yield Static(dialog_text(self.facts, self.signal), id="signal-text")
            with Horizontal(id="signal-buttons"):
                if self.facts.refusal:
                    yield Button(
                        f"Force {self.signal.value} (F)", variant="error", compact=True, id="signal-force"
                    )
                else:
                    yield Button(
                        f"Send {self.signal.value} (y)", variant="error", compact=True, id="signal-send"
                    )
                yield Button("Cancel (n)", compact=True, id="signal-cancel")
        yield Footer()

    def on_mount(self) -> None:
        # Enter on the dialog cancels (sending takes y or F); the dialog opens on its first line,
        # the pid, however short the terminal (focusing the button would scroll to it)
        self.set_focus(self.query_one("#signal-cancel", Button), scroll_visible=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "send":
            return self.facts.refusal is None
        if action == "force":
            return self.facts.refusal is not None
        return True

    @on(Button.Pressed, "#signal-send")
    def action_send(self) -> None:
        if self.facts.refusal is None:
            self.dismiss(self.request)

    @on(Button.Pressed, "#signal-force")
    def action_force(self) -> None:
        if self.facts.refusal is not None:
            self.dismiss(self.request.model_copy(update={"forced": True}))

    @on(Button.Pressed, "#signal-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
