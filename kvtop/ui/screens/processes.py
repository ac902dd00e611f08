"""The process table: every GPU process of the node in one table (nvitop's), or one GPU's; sortable,
filterable, and signals to send (nvitop's T, K, I, and its space to tag several).

Opened with `X` on the dashboard (every GPU), `x` (the selected GPU), or with Enter on a finding whose
fix stops processes (its GPU, the first pid selected); `a` switches between the node and that GPU:
one table, filtered. `s` cycles the sort, `/` filters (`kvtop.ui.process_filter`), space tags or
untags the selected process, `T`/`K`/`I` open the signal dialog for the tagged processes, else the
selected one. Signals are there only when the app was handed a signal sender (never with
`--read-only`), and only for a process kvtop could name (its start, user id and executable:
`GpuProcess.identity`): such a row is never tagged, its keys are absent and the detail line says
why; where kvtop runs in another PID namespace than the host's, the title says so. A tag remembers
the process it named: a pid that comes to name another process loses its tag. Each confirmed
request goes to the app as one `SignalRequested`.
"""

from __future__ import annotations

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from kvtop.domain.ports import ProcessSignal, SignalRequest
from kvtop.domain.process_identity import FOREIGN_NAMESPACE_NOTE, PidNamespace, ProcessIdentity
from kvtop.domain.terminal import cut
from kvtop.domain.wording import counted
from kvtop.ui.filter_words import FilterError
from kvtop.ui.process_filter import ProcessFilter, parse_process_filter
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
from kvtop.ui.widgets.row_data import short_gpu_name
from kvtop.ui.widgets.typed_input import TypedInput
from kvtop.units import fmt_gib, fmt_gib_figure

#: Columns and their widths; the command takes what the screen has left (the detail line shows it whole).
#: A tagged process's GPU cell starts with TAG_MARK ('● 3') and its row is bold.
COLUMNS = (("GPU", 4), ("pid", 7), ("user", 6), ("role", 13), ("engine / rank", 16), ("GiB", 6), ("age", 6))
#: The columns that give way, first to last, where the command would get less than MIN_COMMAND_WIDTH (80 columns:
#: the header read 'comman' over 'sglan…'); the detail line then says the selected row's hidden cells.
NARROW_DROPS = ("age", "user")
TAG_MARK = "●"
CELL_PADDING = 2  # DataTable's default: a cell each side
MIN_COMMAND_WIDTH = 16
SIGNAL_KEYS = Binding.Group("Signal")


def _command_room(columns: tuple[tuple[str, int], ...], screen_width: int) -> int:
    """What the command column gets beside `columns` (+ its padding, the scrollbar)."""
    return screen_width - (sum(width + CELL_PADDING for _, width in columns) + CELL_PADDING + 1)


def shown_columns(screen_width: int) -> tuple[tuple[tuple[str, int], ...], int]:
    """The columns drawn at `screen_width` and the command's width: NARROW_DROPS give way in turn while the command
    would get less than MIN_COMMAND_WIDTH (the command never less than 7, its header's width)."""
    columns: tuple[tuple[str, int], ...] = COLUMNS
    for dropped in NARROW_DROPS:
        if _command_room(columns, screen_width) >= MIN_COMMAND_WIDTH:
            break
        columns = tuple(column for column in columns if column[0] != dropped)
    return columns, max(len("command"), _command_room(columns, screen_width))


class SignalRequested(Message):
    """The operator confirmed this signal in the dialog; the app sends it (in a worker) and logs it."""

    def __init__(self, request: SignalRequest) -> None:
        super().__init__()
        self.request = request


class ProcessScreen(NodeScreen):
    """The node's processes, or one GPU's (`gpu_index`); Escape closes the filter, else goes back."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("s", "sort", "Sort"),
        Binding("slash", "filter", "Filter"),
        Binding("a", "scope", "GPU scope"),  # every GPU / the one opened for (the title says which `a` goes to)
        Binding("space", "tag", "Tag"),
        # one footer entry 'T K I Signal' (each key's name its tooltip, the title line spells them): eight keys in 80
        Binding("T", "signal('TERMINATE')", "Terminate", tooltip="Terminate (SIGTERM)", group=SIGNAL_KEYS),
        Binding("K", "signal('KILL')", "Kill", tooltip="Kill (SIGKILL)", group=SIGNAL_KEYS),
        Binding("I", "signal('INTERRUPT')", "Interrupt", tooltip="Interrupt (SIGINT)", group=SIGNAL_KEYS),
    ]

    def __init__(
        self,
        gpu_index: int | None,
        state: NodeState,
        now: float,
        interval_s: float,
        *,
        select_pid: int | None = None,
        can_signal: bool = False,
        simulated: bool = False,
    ) -> None:
        super().__init__(state, now, interval_s)
        self.simulated = simulated  # a demo node: its signals reach no process (its dialog says so before it asks)
        self.gpu_index = gpu_index  # None: every GPU of the node
        self.home_gpu = gpu_index  # the GPU `a` comes back to
        self.can_signal = can_signal
        self.tagged: dict[int, ProcessIdentity] = {}  # pid → the process it named when tagged
        self.row_filter = ProcessFilter()
        self.filter_error: str | None = None  # why the typed filter does not parse (said until it does)
        self.sort_index = 0
        self._wanted_pid = select_pid  # the pid to select once the rows are in
        self._rows: tuple[ProcessRow, ...] = ()
        self._drawn_tags: tuple[int, ...] = ()
        self._columns: tuple[tuple[tuple[str, int], ...], int] = ((), 0)  # the columns the table was built with

    def compose(self) -> ComposeResult:
        yield NodeHeader(self.interval_s, engines=False, id="header").data_bind(
            state=NodeScreen.node, now=NodeScreen.now
        )
        yield Static(id="processes-title")
        filter_box = TypedInput(
            placeholder="filter: gpu:3 pid:4242 user:ada role:co-tenant engine:sglang, text, !word (Esc clears)",
            id="processes-filter",
            compact=True,
        )
        filter_box.display, filter_box.disabled = False, True  # hidden and never focused (nor typed into) until `/` opens it
        yield filter_box
        yield DataTable(id="processes-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="processes-detail")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(DataTable).focus()

    @property
    def selected_row(self) -> ProcessRow | None:
        table = self.query_one(DataTable)
        if not self._rows or table.cursor_row < 0 or table.cursor_row >= len(self._rows):
            return None
        return self._rows[table.cursor_row]

    @property
    def selected_pid(self) -> int | None:
        row = self.selected_row
        return None if row is None else row.pid

    def show_node(self, state: NodeState) -> None:
        snapshot = state.snapshot
        rows = process_rows(snapshot, self.gpu_index) if snapshot is not None else ()
        self._keep_tags(process_rows(snapshot) if snapshot is not None else ())
        self._show_rows(tuple(row for row in rows if self.row_filter.matches(row)))
        self._show_title(state)

    def _keep_tags(self, rows: tuple[ProcessRow, ...]) -> None:
        """Drop the tag of a pid that has exited or now names another process."""
        named = {row.pid: row.process.identity for row in rows}
        for pid, identity in list(self.tagged.items()):
            if named.get(pid) != identity:
                del self.tagged[pid]
                self.notify(f"pid {pid} untagged: it exited or now names another process", severity="warning")

    def on_key(self, event: events.Key) -> None:
        """`/` opens the filter as its key arrives here (see TypedInput.take_screen_key)."""
        self.query_one("#processes-filter", TypedInput).take_screen_key(event, open_field=self.action_filter)

    def on_resize(self) -> None:
        self.show_node(self.node)

    def _show_rows(self, rows: tuple[ProcessRow, ...]) -> None:
        table: DataTable[Text] = self.query_one(DataTable)
        selected = self.selected_row
        keep: tuple[int | None, int] | None = None  # (GPU, pid) to keep selected; GPU None: the pid's first row
        if self._wanted_pid is not None:
            keep = (None, self._wanted_pid)
        elif selected is not None:
            keep = (selected.gpu, selected.pid)
        ordered = sorted_rows(rows, PROCESS_SORTS[self.sort_index])
        columns, width = shown_columns(self.size.width)
        if (columns, width) != self._columns:
            self._columns, self._rows = (columns, width), ()
            table.clear(columns=True)
            for label, column in (*columns, ("command", width)):
                table.add_column(label, key=label, width=column)
        tags = tuple(sorted(self.tagged))
        if (ordered, tags) != (self._rows, self._drawn_tags):
            self._rows, self._drawn_tags = ordered, tags
            table.clear()
            drawn = {label for label, _ in columns}
            for row in ordered:
                used = "?" if row.used_bytes is None else fmt_gib_figure(row.used_bytes)
                every = {
                    "GPU": f"{TAG_MARK} {row.gpu}" if row.pid in self.tagged else f"  {row.gpu}",
                    "pid": str(row.pid),
                    "user": cut(row.user, 6),
                    "role": row.role_name,
                    "engine / rank": cut(row.engine, 16),
                    "GiB": used,
                    "age": age_text(row.age_s),
                }
                cells = (*(cell for label, cell in every.items() if label in drawn), cut(row.command, width))
                style = "bold" if row.pid in self.tagged else ""
                table.add_row(*(Text(cell, style=style) for cell in cells), key=f"{row.gpu}:{row.pid}")  # never markup
        if keep:
            gpu, pid = keep
            place = next((i for i, row in enumerate(ordered) if row.pid == pid and gpu in (None, row.gpu)), None)
            if place is not None:
                table.move_cursor(row=place, animate=False)
                if self._wanted_pid is not None:
                    self._wanted_pid = None
        self._show_detail()

    def _show_title(self, state: NodeState) -> None:
        snapshot = state.snapshot
        title = self.query_one("#processes-title", Static)
        if snapshot is None:
            title.update(Content.styled("waiting for the first snapshot", "$text-muted"))
            return
        if self.gpu_index is None:
            used_bytes = snapshot.observation.used_bytes
            where = f"Processes · every GPU ({len(snapshot.observation.gpus)})"
            scope = f" · a: GPU {self.home_gpu}" if self.home_gpu is not None else ""
        else:
            gpu = snapshot.observation.gpu(self.gpu_index)
            if gpu is None:
                title.update(Content.styled(f"GPU {self.gpu_index} is not in the current snapshot", "bold $error"))
                return
            used_bytes = gpu.used_bytes
            where, scope = f"Processes · GPU {gpu.index} {short_gpu_name(gpu.name)}", " · a: every GPU"
        used = f" · NVML used {fmt_gib(used_bytes)}" if used_bytes is not None else ""
        shown = counted(len(self._rows), "process", "processes") + (" (filtered)" if self.row_filter.terms else "")
        signals = "space tag · T terminate · K kill · I interrupt" if self.can_signal else "signals off (--read-only)"
        tagged = f" · {len(self.tagged)} tagged" if self.tagged else ""
        parts: list[Content] = [
            Content.assemble(
                (where, "bold $primary"),
                f" · {shown}{used}",
                ((tagged, "bold $warning")),
                (f" · sorted by {PROCESS_SORTS[self.sort_index].name} (s){scope} · {signals}", "$text-muted"),
            )
        ]
        if snapshot.observation.pid_namespace is PidNamespace.FOREIGN:
            parts.append(Content.styled(FOREIGN_NAMESPACE_NOTE, "bold $warning"))
        title.update(Content("\n").join(parts))

    def _show_detail(self) -> None:
        row = self.selected_row
        detail = self.query_one("#processes-detail", Static)
        if self.filter_error is not None:  # kept over the row's command, which the next tick redraws
            detail.update(Content.styled(f"filter: {self.filter_error}", "bold $error"))
            return
        if row is None:
            where = "on this GPU" if self.gpu_index is not None else "on any GPU"
            matching = " that matches the filter" if self.row_filter.terms else ""
            detail.update(Content.styled(f"no process {where}{matching} in the current snapshot", "$text-muted"))
            return
        unnamed = row.process.unidentified_reason()
        hidden = self._hidden_cells(row)
        if unnamed is None or not self.can_signal:
            detail.update(Content.assemble(*hidden, ("command ", "bold"), row.command))
            return
        detail.update(
            Content.assemble(
                *hidden, ("command ", "bold"), row.command, "\n", ("no signals ", "bold $warning"), (unnamed, "$text-muted")
            )
        )

    def _hidden_cells(self, row: ProcessRow) -> tuple[tuple[str, str] | str, ...]:
        """The selected row's cells of the columns a narrow screen gave way ('user bob · age 3m · '), in column order."""
        drawn = {label for label, _ in self._columns[0]}
        values = {"user": row.user, "age": age_text(row.age_s)}
        return tuple(
            part for label, _ in COLUMNS if label in values and label not in drawn
            for part in ((f"{label} ", "bold"), f"{values[label]} · ")
        )  # fmt: skip

    @on(DataTable.RowHighlighted)
    def _highlighted(self) -> None:
        self._show_detail()
        self.refresh_bindings()  # T/K/I only for a process kvtop can name

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(PROCESS_SORTS)
        self._rows = ()  # reorder
        self.show_node(self.node)

    def action_scope(self) -> None:
        """Every GPU's processes, or back to the GPU the table was opened for."""
        if self.gpu_index is not None:
            self.gpu_index = None
        elif self.home_gpu is not None:
            self.gpu_index = self.home_gpu
        else:
            selected = self.selected_row
            if selected is None:
                self.notify("no process selected: its GPU is the one to show", severity="warning")
                return
            self.gpu_index = selected.gpu
        self.show_node(self.node)

    def action_filter(self) -> None:
        box = self.query_one("#processes-filter", Input)
        box.display, box.disabled = True, False
        self.set_focus(box)  # now, not after the keys already typed behind `/`

    def action_back(self) -> None:
        """Close the filter (clearing it) when it is open, else go back."""
        box = self.query_one("#processes-filter", Input)
        if box.display:
            box.value = ""
            box.display, box.disabled = False, True
            self.query_one(DataTable).focus()
            return
        self.app.pop_screen()

    @on(Input.Changed, "#processes-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        """A filter that does not parse is said below the table until it does, every process shown meanwhile (as
        the dashboard's GPU filter does): the error was drawn once and the next tick's redraw of the selected row's
        command replaced it, the table left filtered by the text typed before."""
        try:
            self.row_filter, self.filter_error = parse_process_filter(event.value), None
        except FilterError as error:
            self.row_filter, self.filter_error = ProcessFilter(), str(error)
        self.show_node(self.node)

    @on(Input.Submitted, "#processes-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        event.input.display = bool(event.value)
        event.input.disabled = not event.value
        self.query_one(DataTable).focus()

    def action_tag(self) -> None:
        """Tag or untag the selected process for a signal; a process kvtop cannot name is never tagged."""
        row = self.selected_row
        if row is None:
            return
        if not self.can_signal:
            self.notify("signals are off (--read-only): nothing to tag for", severity="warning")
            return
        if row.pid in self.tagged:
            del self.tagged[row.pid]
        elif row.process.identity is None:
            self.notify(f"pid {row.pid} cannot be tagged: {row.process.unidentified_reason()}", severity="warning")
            return
        else:
            self.tagged[row.pid] = row.process.identity
        self._show_rows(self._rows)
        self._show_title(self.node)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "signal":  # absent without a signal sender (--read-only) or a process kvtop can name
            row = self.selected_row if self.is_mounted else None
            return self.can_signal and (bool(self.tagged) or row is None or row.process.identity is not None)
        if action == "tag":
            return self.can_signal
        return True

    def _targets(self) -> tuple[ProcessRow, ...]:
        """The tagged processes (one row each: the first GPU NVML lists it on), else the selected one."""
        snapshot = self.node.snapshot
        if self.tagged and snapshot is not None:
            every = process_rows(snapshot)
            firsts = {row.pid: row for row in reversed(every)}
            return tuple(firsts[pid] for pid in sorted(self.tagged) if pid in firsts)
        row = self.selected_row
        return () if row is None else (row,)

    def action_signal(self, name: str) -> None:
        """The dialog for sending `name` (TERMINATE, KILL, INTERRUPT) to the tagged processes, else the
        selected one when kvtop can name it; else the reason it cannot, and no dialog."""
        targets, snapshot = self._targets(), self.node.snapshot
        if not self.can_signal or not targets or snapshot is None:
            return
        unnamed = next((row for row in targets if row.process.identity is None), None)
        if unnamed is not None:
            self.notify(f"no signal to pid {unnamed.pid}: {unnamed.process.unidentified_reason()}", severity="warning")
            return
        signal = ProcessSignal[name]
        pairs = tuple(
            (
                signal_facts(snapshot, self.node.findings, row),
                SignalRequest(
                    identity=row.process.identity, signal=signal, gpu_index=row.gpu, used_bytes=row.used_bytes,
                    command=row.command,
                ),
            )
            for row in targets
            if row.process.identity is not None
        )  # fmt: skip

        def send(confirmed: tuple[SignalRequest, ...] | None) -> None:
            if confirmed is None:
                return
            for request in confirmed:
                self.post_message(SignalRequested(request))
            self.tagged.clear()
            self.show_node(self.node)

        self.app.push_screen(SignalScreen(pairs, signal, simulated=self.simulated), send)
