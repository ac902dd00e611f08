"""`P`: the probe's place. It will allocate the planned KV pool on the selected GPU, in a child
process, to prove it fits; until the probe is wired in it says so. Hidden by `--read-only`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

PROBE_PLAN = (
    "The probe will allocate the selected rank's planned KV pool on GPU {gpu} in a child process "
    "(kvtop probe --gpu {gpu} --fill), report how many tokens really fit above the runtime reserve, "
    "and give the memory back. It asks before touching a GPU that other processes use."
)


class ProbeScreen(ModalScreen[None]):
    """A confirmation and result dialog; `show_result` is where the probe's outcome will go."""

    BINDINGS = [Binding("escape,q", "app.pop_screen", "Close")]

    def __init__(self, gpu_index: int | None) -> None:
        super().__init__()
        self.gpu_index = gpu_index

    def compose(self) -> ComposeResult:
        gpu = "?" if self.gpu_index is None else str(self.gpu_index)
        with Vertical(id="probe-box"):
            yield Static(Content.styled(f"Probe GPU {gpu}", "bold $primary"))
            yield Static(PROBE_PLAN.format(gpu=gpu))
            yield Static(
                Content.styled("Not available in the TUI yet: run `kvtop probe` from a shell.", "$warning"),
                id="probe-result",
            )
            yield Static(Content.styled("Esc closes", "$text-muted"))

    def show_result(self, text: str) -> None:
        """Show the probe's outcome (one line per fact)."""
        self.query_one("#probe-result", Static).update(text)
