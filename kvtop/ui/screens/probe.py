"""`P`: prove on the selected GPU that the rank's KV buffers fit, by allocating them in a child process.

The dialog first states the plan (probe_confirm) and waits for Run (y) or Cancel (n, Esc).
Run hands the request to the probe runner the app was given, in a thread worker: the runner
starts the child, enforces the timeout and kills the child when the cancel event is set (Esc
while running, or this screen going away when kvtop exits). The result is shown here and posted
as `ProbeFinished`, which bubbles to the app so the rank ledger can show it. Hidden by `--read-only`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, ProgressBar, Static

from kvtop.domain.probe import ProbeOutcome, ProbeRequest, ProbeResult
from kvtop.domain.wording import counted
from kvtop.ui.screens.probe_confirm import ProbePlan, confirmation_text
from kvtop.ui.widgets.footer import Footer
from kvtop.units import fmt_bytes, fmt_gib, fmt_tokens

#: Runs one probe to its end; must return (never hang) once the event is set.
ProbeRunner = Callable[[ProbeRequest, threading.Event], ProbeResult]

#: How long closing the screen waits for a cancelled probe to kill its child and report.
CANCEL_WAIT_S = 10.0

UNAVAILABLE = (
    "The probe is not available in this TUI (it was started without one, or with --read-only). "
    "From a shell: kvtop probe --model … --gpu {gpu} --fill"
)


class ProbeFinished(Message):
    """A probe ended (in any named state); the app keeps the last result per GPU."""

    def __init__(self, gpu_index: int, result: ProbeResult) -> None:
        super().__init__()
        self.gpu_index = gpu_index
        self.result = result


def released_text(result: ProbeResult) -> Content:
    """'yes (…)' quietly, or the loud warning that memory did not come back."""
    if result.released:
        return Content(f"yes: {result.release_check}" if result.release_check else "yes")
    return Content.styled(f"NO — MEMORY NOT RELEASED: check nvidia-smi; {result.release_check}", "bold $error")


def verdict_text(result: ProbeResult) -> Content:
    """'OK: filled 13,106 tokens, …' or 'NO CUDA: torch … sees no CUDA device …'."""
    name = "OK" if result.target_met else result.outcome.value.upper().replace("_", " ")
    style = "bold $success" if result.target_met else "bold $warning"
    if result.outcome in (ProbeOutcome.WORKER_CRASHED, ProbeOutcome.OUT_OF_MEMORY):
        style = "bold $error"
    return Content.assemble((name, style), f": {result.message}")


def result_text(result: ProbeResult) -> Content:
    """Tokens allocated, bytes/token measured vs predicted, time, GiB/s, released."""
    lines = [verdict_text(result)]
    if result.bytes_allocated > 0 or result.tokens_allocated > 0:
        lines.append(
            Content(
                f"{'tokens':<12}{fmt_tokens(result.tokens_allocated)} allocated "
                f"(+{counted(result.padding_rows, 'padding row')}) · {fmt_bytes(result.bytes_allocated)} "
                f"in {counted(result.chunks, 'chunk')}"
            )
        )
        measured = result.describe_measured()
        delta = result.measured_vs_predicted_said
        lines.append(
            Content(
                f"{'bytes/token':<12}measured {measured} · predicted {result.bytes_per_token_predicted:,} B"
                + ("" if delta is None else f" ({delta}, padding page included)")
            )
        )
        speed = "" if result.gib_per_second is None else f" · {result.gib_per_second:,.1f} GiB/s"
        lines.append(Content(f"{'time':<12}{result.seconds:.2f} s{speed}"))
        if result.free_before_bytes is not None:
            lines.append(Content(f"{'free':<12}{free_text(result)}"))
    lines.append(Content.assemble((f"{'released':<12}", "bold"), released_text(result)))
    return Content("\n").join(lines)


def free_text(result: ProbeResult) -> str:
    """'before 1.41 GiB · after 1.40 GiB (the probe's own reading before it exited) · reserve kept 0.00 GiB': the
    'after' figures the release check speaks of, the probe's own and kvtop's once the probe had exited."""
    parts = [f"before {fmt_gib(result.free_before_bytes or 0)}"]
    if result.free_after_bytes is not None:
        parts.append(f"after {fmt_gib(result.free_after_bytes)} (the probe's own reading before it exited)")
    if result.free_after_exit_bytes is not None:
        parts.append(f"after it exited {fmt_gib(result.free_after_exit_bytes)} (read by kvtop)")
    parts.append(f"reserve kept {fmt_gib(result.reserve_bytes)}")
    return " · ".join(parts)


#: The phases in which n, Esc or q cancel (the plan unanswered, the probe running); after them they close.
_CANCELLABLE = ("confirm", "running", "cancelling")


class ProbeScreen(ModalScreen[None]):
    """Confirm → running (progress, elapsed, Esc cancels) → result; or why no probe is possible."""

    DEFAULT_CSS = """
    #probe-dialog {
        width: 96%; max-width: 104; height: auto; max-height: 90%;
        border: round $warning; background: $surface; padding: 0 1; scrollbar-size-vertical: 1;
    }
    #probe-buttons { height: auto; margin-top: 1; }
    #probe-buttons Button { margin-right: 2; }
    #probe-progress { height: auto; margin-top: 1; }
    #probe-progress ProgressBar { width: auto; margin-right: 2; }
    #probe-result { height: auto; margin-top: 1; }
    #probe-hint { width: 96%; max-width: 104; height: 1; content-align: center middle; }
    """

    BINDINGS = [
        Binding("y", "run", "Run"),
        Binding("n,escape,q", "cancel", "Cancel"),  # before and while the probe runs
        Binding("n,escape,q", "close", "Close"),  # once there is nothing left to cancel (as the hint says)
    ]

    def __init__(
        self,
        gpu_index: int | None,
        plan: ProbePlan | str | None = None,
        runner: ProbeRunner | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        super().__init__()
        self.gpu_index = gpu_index
        self.plan = plan
        self.runner = runner
        self.cancel_event = cancel or threading.Event()
        self.result: ProbeResult | None = None
        self.phase = "confirm" if isinstance(plan, ProbePlan) and runner is not None else "unavailable"
        self._finished = threading.Event()
        self._started_at = 0.0

    def compose(self) -> ComposeResult:
        gpu = "?" if self.gpu_index is None else str(self.gpu_index)
        with VerticalScroll(id="probe-dialog"):
            if self.phase == "confirm":
                assert isinstance(self.plan, ProbePlan)
                yield Static(confirmation_text(self.plan), id="probe-plan")
                with Horizontal(id="probe-buttons"):
                    yield Button("Run (y)", variant="warning", compact=True, id="probe-run")
                    yield Button("Cancel (n)", compact=True, id="probe-cancel")
            else:
                yield Static(Content.styled(f"Probe GPU {gpu}", "bold $primary"), id="probe-plan")
                reason = UNAVAILABLE.format(gpu=gpu) if self.plan is None else str(self.plan)
                yield Static(Content.styled(reason, "$warning"), id="probe-result")
            with Horizontal(id="probe-progress"):
                yield ProgressBar(total=None, show_percentage=False, show_eta=False)
                yield Static(id="probe-elapsed")
            if self.phase == "confirm":
                yield Static(id="probe-result")
        yield Static(Content.styled(self._hint(), "$text-muted"), id="probe-hint")
        yield Footer()  # this dialog's keys, over the dashboard's

    def on_mount(self) -> None:
        self.query_one("#probe-progress").display = False
        if self.phase == "confirm":
            self.query_one("#probe-result").display = False
            self.query_one("#probe-run", Button).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return self.phase == "confirm"  # listed (and working) only while the plan awaits a yes
        if action in ("cancel", "close"):  # the same keys: 'Cancel' while there is something to cancel, then 'Close'
            return (self.phase in _CANCELLABLE) == (action == "cancel")
        return True

    def _hint(self) -> str:
        return {
            "confirm": "y runs · n or Esc cancels",
            "running": "Esc stops the probe (its process is killed)",
            "cancelling": "stopping: killing the probe's process…",
        }.get(self.phase, "Esc closes")

    def _set_phase(self, phase: str) -> None:
        self.phase = phase
        self.query_one("#probe-hint", Static).update(Content.styled(self._hint(), "$text-muted"))
        self.refresh_bindings()

    @on(Button.Pressed, "#probe-run")
    def _run_pressed(self) -> None:
        self.action_run()

    @on(Button.Pressed, "#probe-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    def action_run(self) -> None:
        """Start the probe (only from the confirmation)."""
        if self.phase != "confirm" or self.runner is None or not isinstance(self.plan, ProbePlan):
            return
        self._set_phase("running")
        self.query_one("#probe-buttons").display = False
        self.query_one("#probe-progress").display = True
        self._started_at = time.monotonic()
        self._show_elapsed()
        self.set_interval(0.5, self._show_elapsed)
        self.call_after_refresh(self._scroll_to_end)
        self.run_probe(self.plan, self.runner)

    def action_cancel(self) -> None:
        """Close, or while the probe runs, tell the runner to kill it (the result still comes)."""
        if self.phase in ("running", "cancelling"):
            self.cancel_event.set()
            self._set_phase("cancelling")
            return
        self.dismiss()

    def action_close(self) -> None:
        """Close the dialog once the probe is done (or none was possible)."""
        self.dismiss()

    def _show_elapsed(self) -> None:
        if self.phase in ("running", "cancelling"):
            elapsed = time.monotonic() - self._started_at
            self.query_one("#probe-elapsed", Static).update(f"probing {self.plan_device()} · {elapsed:.0f} s")

    def plan_device(self) -> str:
        return self.plan.request.device if isinstance(self.plan, ProbePlan) else "?"

    @work(thread=True, exclusive=True, group="probe", exit_on_error=False)
    def run_probe(self, plan: ProbePlan, runner: ProbeRunner) -> None:
        """The runner blocks until the child is gone; any failure of it still ends in a result."""
        try:
            result = runner(plan.request, self.cancel_event)
        except Exception as error:  # an outside failure is a named state, never a traceback
            result = ProbeResult.unmeasured(
                plan.request,
                ProbeOutcome.WORKER_CRASHED,
                f"the probe runner failed: {type(error).__name__}: {error}",
            ).model_copy(
                update={"released": False, "release_check": "unknown: the runner failed before checking"}
            )
        finally:
            self._finished.set()
        self.post_message(ProbeFinished(plan.gpu_index, result))

    @on(ProbeFinished)
    def show_finished(self, message: ProbeFinished) -> None:
        """Show the result here; the message goes on to the app."""
        self.show_result(message.result)

    def show_result(self, result: ProbeResult) -> None:
        """Replace the progress with the probe's outcome."""
        self.result = result
        self._set_phase("done")
        self.query_one("#probe-progress").display = False
        box = self.query_one("#probe-result", Static)
        box.update(result_text(result))
        box.display = True
        self.call_after_refresh(self._scroll_to_end)

    def _scroll_to_end(self) -> None:
        self.query_one("#probe-dialog", VerticalScroll).scroll_end(animate=False)

    def on_unmount(self) -> None:
        """kvtop exiting while a probe runs: kill the child and wait (bounded) until it is gone."""
        if self.phase in ("running", "cancelling"):
            self.cancel_event.set()
            self._finished.wait(CANCEL_WAIT_S)
