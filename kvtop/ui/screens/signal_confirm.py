"""The signal dialog: what sending SIGTERM / SIGKILL / SIGINT to one process, or to each of the tagged
ones, would do, stated before anything is sent.

For each process it names the pid, the bytes NVML says it holds (on every GPU) and what the finding
that names the pid says stopping it buys (its `gain_tokens` per rank, and whether the engine must
restart to use them), then whose the process is and its command; where no finding prices it, it
says so rather than guess. A process of a serving engine is refused: `y` sends the others, `F`
forces every one. Dismissed with the `SignalRequest`s to send (one per process), or None.
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
        return Content(f"no running engine shares its GPU: no tokens to gain{scope} (finding: {finding.title})")
    engine = finding.engine_id
    if not finding.gain_tokens:
        return Content(f"no tokens for {engine}{scope} (finding: {finding.title})")
    gain = Content.styled(f"+{fmt_tokens(finding.gain_tokens)} tokens per rank", "bold $success")
    if finding.gain_needs_restart and finding.term_tokens is None:  # it costs nothing now (came later)
        return Content.assemble(
            "nothing now; keeps ", gain, f" that {engine}'s next restart would lose to it{scope} (finding: {finding.title})"
        )
    when = (
        f" for {engine} once it restarts: its KV pool is sized at start-up"
        if finding.gain_needs_restart
        else f" for {engine}"
    )
    return Content.assemble(gain, f"{when}{scope} (finding: {finding.title})")


def role_text(facts: SignalFacts) -> str:
    """'co-tenant · user ada', 'engine worker · sglang:41000 TP3 · user root'."""
    engine = "" if facts.engine == "—" else f" · {facts.engine}"
    return f"{role_name(facts.role)}{engine} · user {facts.user}"


def dialog_text(facts: SignalFacts, signal: ProcessSignal) -> Content:
    """The dialog's body for sending `signal` to the process `facts` describe."""
    return several_text((facts,), signal)


SIMULATED_WORDS = "a simulated node: no signal is sent (its processes are the demo's, not this machine's)"


def several_text(targets: tuple[SignalFacts, ...], signal: ProcessSignal, simulated: bool = False) -> Content:
    """The dialog's body for sending `signal` to each process of `targets` (one: as `dialog_text`); on a simulated
    node (`simulated`) it says first that nothing is sent, so that a demo's dialog never reads as a real node's."""
    one = len(targets) == 1
    whom = f"pid {targets[0].pid}" if one else f"{len(targets)} tagged processes, one by one"
    lines = [
        Content.assemble((f"Send {signal.value} to {whom}?", "bold $primary"), (f" ({SIGNAL_WORDS[signal]})", "$text-muted"))
    ]
    if simulated:
        lines.append(Content.styled(SIMULATED_WORDS, "bold $warning"))
    refused = [facts for facts in targets if facts.refusal]
    refusals = [
        Content.styled(
            f"REFUSED: {facts.refusal}. F sends it anyway{'; y sends the others' if len(refused) < len(targets) else ''}.",
            "bold $error",
        )
        for facts in refused
    ]
    if not one:  # what y leaves out, before the list: the dialog may scroll
        lines += refusals
    for facts in targets:
        if not one:
            lines.append(Content.styled(f"pid {facts.pid}", "bold $primary"))
        lines += [
            _row("frees", frees_text(facts)),
            Content.assemble((f"{'buys':<{LABEL_WIDTH}}", "bold"), buys_text(facts)),
            _row("role", role_text(facts)),
            _row("command", facts.command),
        ]
    lines.append(_row("log", ("kvtop's action log records every signal, sent or not", "$text-muted")))
    if one:
        lines += refusals
    return Content("\n").join(lines)


class SignalScreen(ModalScreen[tuple[SignalRequest, ...] | None]):
    """Confirm (y: every process kvtop does not refuse) or force (F: every one, a serving engine's
    process too); n or Esc cancels. `targets`: each process's facts and the request that signals it."""

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

    def __init__(
        self, targets: tuple[tuple[SignalFacts, SignalRequest], ...], signal: ProcessSignal, *, simulated: bool = False
    ) -> None:
        super().__init__()
        self.targets = targets
        self.signal = signal
        self.simulated = simulated  # a demo node's dialog: said first, nothing is sent

    @property
    def allowed(self) -> tuple[SignalRequest, ...]:
        """What `y` sends: every request kvtop does not refuse."""
        return tuple(request for facts, request in self.targets if facts.refusal is None)

    @property
    def refused(self) -> bool:
        return any(facts.refusal for facts, _ in self.targets)

    def compose(self) -> ComposeResult:
        many = len(self.targets) > 1
        with VerticalScroll(id="signal-dialog"):
            facts = tuple(facts for facts, _ in self.targets)
            yield Static(several_text(facts, self.signal, self.simulated), id="signal-text")
            with Horizontal(id="signal-buttons"):
                if self.allowed:
                    others = f" to {len(self.allowed)}" if many else ""
                    label = f"Send {self.signal.value}{others} (y)"
                    yield Button(label, variant="error", compact=True, id="signal-send")
                if self.refused:
                    every = f" to all {len(self.targets)}" if many else ""
                    label = f"Force {self.signal.value}{every} (F)"
                    yield Button(label, variant="error", compact=True, id="signal-force")
                yield Button("Cancel (n)", compact=True, id="signal-cancel")
        yield Footer()

    def on_mount(self) -> None:
        # Enter on the dialog cancels (sending takes y or F); the dialog opens on its first line,
        # the pid, however short the terminal (focusing the button would scroll to it)
        self.set_focus(self.query_one("#signal-cancel", Button), scroll_visible=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "send":
            return bool(self.allowed)
        if action == "force":
            return self.refused
        return True

    @on(Button.Pressed, "#signal-send")
    def action_send(self) -> None:
        if self.allowed:
            self.dismiss(self.allowed)

    @on(Button.Pressed, "#signal-force")
    def action_force(self) -> None:
        if self.refused:
            forced = tuple(
                request.model_copy(update={"forced": True}) if facts.refusal else request for facts, request in self.targets
            )
            self.dismiss(forced)

    @on(Button.Pressed, "#signal-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
