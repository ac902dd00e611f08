"""The process panel of one GPU: who holds its memory, sortable, and signals to send (nvitop's T, K, I).

Opened with `x` on the dashboard (the selected GPU), or with Enter on a finding whose fix stops
processes (its GPU, the first pid selected). `s` cycles the sort, `T`/`K`/`I` open the signal
dialog for the selected process; the signals are there only when the app was handed a signal
sender (never with `--read-only`), and only for a process kvtop could name (its start, user id and
executable: `GpuProcess.identity`). For any other row the keys are absent and the detail line says
why; where kvtop runs in another PID namespace than the host's, the title says so. A confirmed
request goes to the app as `SignalRequested`.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable, Static

from kvtop.domain.ports import ProcessSignal, SignalRequest
from kvtop.domain.process_identity import FOREIGN_NAMESPACE_NOTE, PidNamespace
from kvtop.ui.process_rows import (
    PROCESS_SORTS,
    ProcessRow,
    age_text,
    process_rows,
    signal_facts,
    sorted_rows,
)
from kvtop.ui.screens.base import NodeScreen
from kvtop.ui.screens.signal_confirm import SignalScreen
from kvtop.ui.state import NodeState
from kvtop.ui.widgets.footer import Footer
from kvtop.ui.widgets.node_header import NodeHeader
from kvtop.ui.widgets.row_parts import short_gpu_name
from kvtop.units import fmt_gib

#: Columns and their widths; the command takes what the screen has left (the detail line shows it whole).
COLUMNS = (("pid", 7), ("user", 6), ("role", 13), ("engine / rank", 16), ("GiB", 6), ("age", 8))
CELL_PADDING = 2  # DataTable's default: a cell each side
MIN_COMMAND_WIDTH = 10


def command_width(screen_width: int) -> int:
    """What the command column gets at `screen_width` (at least MIN_COMMAND_WIDTH)."""
    taken = (
        sum(width + CELL_PADDING for _, width in COLUMNS) + CELL_PADDING + 1
    )  # + its padding, the scrollbar
    return max(MIN_COMMAND_WIDTH, screen_width - taken)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class SignalRequested(Message):
    """The operator confirmed this signal in the dialog; the app sends it (in a worker) and logs it."""

    def __init__(self, request: SignalRequest) -> None:
        super().__init__()
        self.request = request


class ProcessScreen(NodeScreen):
    """One GPU's processes; Escape goes back."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("s", "sort", "Sort"),
        Binding("T", "signal('TERMINATE')", "Terminate"),
        Binding("K", "signal('KILL')", "Kill"),
        Binding("I", "signal('INTERRUPT')", "Interrupt"),
    ]

    def __init__(
        self,
        gpu_index: int,
        state: NodeState,
        now: float,
        interval_s: float,
        *,
        select_pid: int | None = None,
        can_signal: bool = False,
    ) -> None:
        super().__init__(state, now, interval_s)
        self.gpu_index = gpu_index
        self.can_signal = can_signal
        self.sort_index = 0
        self._wanted_pid = select_pid  # the pid to select once the rows are in
        self._rows: tuple[ProcessRow, ...] = ()
        self._command_width = 0  # the command column's width the table was built with

    def compose(self) -> ComposeResult:
        yield NodeHeader(self.interval_s, engines=False, id="header").data_bind(
            state=NodeScreen.node, now=NodeScreen.now
        )
        yield Static(id="processes-title")
        yield DataTable(id="processes-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="processes-detail")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(DataTable).focus()

    @property
    def selected_pid(self) -> int | None:
        table = self.query_one(DataTable)
        if not self._rows or table.cursor_row < 0 or table.cursor_row >= len(self._rows):
            return None
        return self._rows[table.cursor_row].pid

    @property
    def selected_row(self) -> ProcessRow | None:
        pid = self.selected_pid
        return next((row for row in self._rows if row.pid == pid), None)

    def show_node(self, state: NodeState) -> None:
        snapshot = state.snapshot
        rows = process_rows(snapshot, self.gpu_index) if snapshot is not None else ()
        self._show_rows(rows)
        self._show_title(state)

    def on_resize(self) -> None:
        self.show_node(self.node)

    def _show_rows(self, rows: tuple[ProcessRow, ...]) -> None:
        table: DataTable[Text] = self.query_one(DataTable)
        keep = self._wanted_pid if self._wanted_pid is not None else self.selected_pid
        ordered = sorted_rows(rows, PROCESS_SORTS[self.sort_index])
        width = command_width(self.size.width)
        if width != self._command_width:
            self._command_width, self._rows = width, ()
            table.clear(columns=True)
            for label, column in (*COLUMNS, ("command", width)):
                table.add_column(label, key=label, width=column)
        if ordered != self._rows:
            self._rows = ordered
            table.clear()
            for row in ordered:
                used = "?" if row.used_bytes is None else fmt_gib(row.used_bytes).removesuffix(" GiB")
                cells = (
                    str(row.pid),
                    _cut(row.user, 6),
                    row.role_name,
                    _cut(row.engine, 16),
                    used,
                    age_text(row.age_s),
                    _cut(row.command, width),
                )
                table.add_row(*(Text(cell) for cell in cells), key=str(row.pid))  # plain text, never markup
        pids = [row.pid for row in ordered]
        if keep in pids:
            table.move_cursor(row=pids.index(keep), animate=False)
            if self._wanted_pid is not None and self._rows:
                self._wanted_pid = None
        self._show_detail()

    def _show_title(self, state: NodeState) -> None:
        snapshot = state.snapshot
        gpu = snapshot.observation.gpu(self.gpu_index) if snapshot else None
        title = self.query_one("#processes-title", Static)
        if gpu is None:
            title.update(
                Content.styled(f"GPU {self.gpu_index} is not in the current snapshot", "bold $error")
            )
            return
        used = f" · NVML used {fmt_gib(gpu.used_bytes)}" if gpu.used_bytes is not None else ""
        signals = "T terminate · K kill · I interrupt" if self.can_signal else "signals off (--read-only)"
        parts: list[Content] = [
            Content.assemble(
                (f"Processes · GPU {gpu.index} {short_gpu_name(gpu.name)}", "bold $primary"),
                f" · {len(self._rows)} process(es){used}",
                (f" · sorted by {PROCESS_SORTS[self.sort_index].name} (s) · {signals}", "$text-muted"),
            )
        ]
        if snapshot is not None and snapshot.observation.pid_namespace is PidNamespace.FOREIGN:
            parts.append(Content.styled(FOREIGN_NAMESPACE_NOTE, "bold $warning"))
        title.update(Content("\n").join(parts))

    def _show_detail(self) -> None:
        row = self.selected_row
        detail = self.query_one("#processes-detail", Static)
        if row is None:
            detail.update(Content.styled("no process on this GPU in the current snapshot", "$text-muted"))
            return
        unnamed = row.process.unidentified_reason()
        if unnamed is None or not self.can_signal:
            detail.update(Content.assemble(("command ", "bold"), row.command))
            return
        detail.update(
            Content.assemble(
                ("command ", "bold"), row.command, "\n", ("no signals ", "bold $warning"), (unnamed, "$text-muted")
            )
        )

    @on(DataTable.RowHighlighted)
    def _highlighted(self) -> None:
        self._show_detail()
        self.refresh_bindings()  # T/K/I only for a process kvtop can name

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(PROCESS_SORTS)
        self._rows = ()  # reorder
        self.show_node(self.node)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "signal":  # absent without a signal sender (--read-only) or a process kvtop can name
            row = self.selected_row if self.is_mounted else None
            return self.can_signal and (row is None or row.process.identity is not None)
        return True

    def action_signal(self, name: str) -> None:
        """The dialog for sending `name` (TERMINATE, KILL, INTERRUPT) to the selected process, when kvtop
        can name it; else the reason it cannot, and no dialog."""
        row, snapshot = self.selected_row, self.node.snapshot
        if not self.can_signal or row is None or snapshot is None:
            return
        identity = row.process.identity
        if identity is None:
            self.notify(f"no signal to pid {row.pid}: {row.process.unidentified_reason()}", severity="warning")
            return
        signal = ProcessSignal[name]
        facts = signal_facts(snapshot, self.node.findings, row)
        request = SignalRequest(
            identity=identity,
            signal=signal,
            gpu_index=self.gpu_index,
            used_bytes=row.used_bytes,
            command=row.command,
        )

        def send(confirmed: SignalRequest | None) -> None:
            if confirmed is not None:
                self.post_message(SignalRequested(confirmed))

        self.app.push_screen(SignalScreen(facts, signal, request), send)
