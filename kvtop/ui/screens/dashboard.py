"""The node dashboard: header, one row per GPU (observed over predicted), findings, filter.

The layout fits any terminal: GPU rows take two lines while they leave the findings at least
`MIN_FINDINGS_LINES`, else one line each (`GpuList.compact`); the findings pane takes every line
the rows leave. The GPU in the most trouble (the worst GPU of the worst finding) is selected when
the first findings arrive and kept on screen beside the selection whenever both fit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Static

from kvtop.domain.node import EngineView, RankView
from kvtop.domain.observe import GpuObservation, GpuState, ProcessRole
from kvtop.domain.preferences import Preferences
from kvtop.domain.terminal import safe_line
from kvtop.ui.attention import SORT_KEYS, node_worst_gpu, ordered, tones_by_gpu, worst_gpu
from kvtop.ui.findings_note import empty_findings_note
from kvtop.ui.screens.base import NodeScreen
from kvtop.ui.state import GpuTrend, NodeState
from kvtop.ui.widgets.box import Box
from kvtop.ui.widgets.findings import TITLE as FINDINGS_TITLE
from kvtop.ui.widgets.findings import FindingLike, FindingsPane, finding_tone
from kvtop.ui.widgets.footer import Footer
from kvtop.ui.widgets.gpu_list import EDGE_WIDTH, GpuList
from kvtop.ui.widgets.memory_bar import (
    LEGEND_ORDER,
    ORPHAN,
    SERVER,
    WORKER,
    SegmentKind,
    fitted_legend,
    observed_segments,
    shortest_legend_cells,
)
from kvtop.ui.widgets.node_header import NodeHeader
from kvtop.ui.widgets.row_parts import (
    COMPACT_UTIL_MIN_WIDTH,
    FIGURE_WIDTH,
    MIN_TWO_LINE_WIDTH,
    RANK_WIDTH,
    CapacityCell,
    GpuRowData,
    compact_bar_width,
    compact_state_width,
    heading_widths,
)
from kvtop.ui.widgets.typed_input import TypedInput
from kvtop.units import fmt_tokens_brief


def shows_unsplit_worker(row: GpuRowData) -> bool:
    """Whether the row's observed bar has an "engine worker" segment (a worker no figure splits)."""
    if row.rank is None or row.rank.predicted is not None:
        return False  # no worker, or one its predicted ledger splits
    segments = observed_segments(row.gpu, row.rank)
    return segments is not None and dict(segments).get(WORKER, 0) > 0


def shows_orphan(row: GpuRowData) -> bool:
    """Whether the row's observed bar has an "orphan worker" segment (asked every tick: no bar is built)."""
    return any(p.role is ProcessRole.ORPHAN and p.used_bytes for p in row.gpu.processes)


def shows_server(row: GpuRowData) -> bool:
    """Whether the row's observed bar has an "engine server" segment (an engine server's own memory)."""
    return any(p.role is ProcessRole.ENGINE_SERVER and p.used_bytes for p in row.gpu.processes)


#: Lines the findings keep below two-line GPU rows (the first finding, whole, on an 80×24 terminal).
MIN_FINDINGS_LINES = 8
#: Lines the findings keep below one-line GPU rows before the list scrolls (the worst finding's head).
MIN_COMPACT_FINDINGS_LINES = 1
#: The id Textual gives each screen's rack of notifications.
TOAST_RACK_ID = "textual-toastrack"
#: Below this height the bar legend goes (the rows need the line more).
LEGEND_MIN_HEIGHT = 20


def gpu_rows(state: NodeState, hidden: frozenset[str] = frozenset()) -> list[GpuRowData]:
    snapshot = state.snapshot
    if snapshot is None:
        return []
    tightest = {
        view.tightest_rank.gpu_index
        for view in snapshot.engines
        if view.tightest_rank and len(view.ranks) > 1
    }
    tones = tones_by_gpu(state.findings)
    tags = engine_tags(snapshot.engines)
    return [
        GpuRowData(
            gpu=gpu,
            rank=snapshot.rank_on_gpu(gpu.index),
            engine=snapshot.engine_of_gpu(gpu.index),
            tightest=gpu.index in tightest,
            trend=state.trends.get(gpu.index, GpuTrend()),
            finding_tone=tones.get(gpu.index),
            capacity=capacity_cell(snapshot.rank_on_gpu(gpu.index), gpu),
            hidden=hidden,
            engine_tag=tags.get(engine.engine.engine_id, "") if (engine := snapshot.engine_of_gpu(gpu.index)) else "",
        )
        for gpu in snapshot.observation.gpus
    ]


def engine_tags(engines: Sequence[EngineView]) -> dict[str, str]:
    """Each engine's number among the node's engines of its kind ('1', '2', in the snapshot's order), where there
    are several (two LMDeploy engines both read 'TP0' without it); none for a kind the node runs once."""
    kinds = Counter(view.engine.kind for view in engines)
    seen: Counter[str] = Counter()
    tags: dict[str, str] = {}
    for view in engines:
        if kinds[view.engine.kind] > 1:
            seen[view.engine.kind] += 1
            tags[view.engine.engine_id] = str(seen[view.engine.kind])
    return tags


def capacity_cell(rank: RankView | None, gpu: GpuObservation) -> CapacityCell | None:
    """The rank's tokens against its clean prediction (the domain's waterfall), where they moved and
    the GPU itself is fine (a lost GPU's state says more)."""
    if rank is None or rank.capacity is None or gpu.state is not GpuState.OK:
        return None
    change = rank.capacity.change_tokens
    if change == 0:
        return None
    brief = fmt_tokens_brief(change)
    return CapacityCell(f"{brief} tok", "warning" if change < 0 else "success", change < 0, brief)


def list_layout(gpus: int, room: int, width: int) -> tuple[bool, int]:
    """(compact, lines of GPU list) for `gpus` rows in `room` lines shared with the findings.

    Two lines per GPU while the findings keep `MIN_FINDINGS_LINES` (and the width draws the bars);
    else one line each while the findings keep `MIN_COMPACT_FINDINGS_LINES`; else the list scrolls
    in what the findings leave (at least one line).
    """
    gpus = max(gpus, 1)
    if width >= MIN_TWO_LINE_WIDTH and 2 * gpus + MIN_FINDINGS_LINES <= room:
        return False, 2 * gpus
    if gpus + MIN_COMPACT_FINDINGS_LINES <= room:
        return True, gpus
    return True, max(1, room - MIN_COMPACT_FINDINGS_LINES)


class PreferencesChanged(Message):
    """The operator changed the order or the columns: the app keeps them for the next run."""


class DashboardScreen(NodeScreen):
    """The first screen; the GPU list has the focus."""

    BLANK = True  # its widgets cover it: drawn as blank lines when a tick repaints (see widgets/box.py)

    _legend_extra: tuple[SegmentKind, ...] = ()  # kinds the legend adds because some row shows them
    _legend_shown: Content | None = None  # the legend line last drawn (redrawn only when it reads differently)

    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("f", "findings", "Findings"),
        Binding("s", "sort", "Sort", show=False),
        Binding("S", "reverse_sort", "Reverse sort", show=False),
        Binding("V", "toggle_column('vitals')", "Vitals", show=False, tooltip="GPU utilisation, temperature, power, clock"),
        Binding("H", "toggle_column('history')", "History", show=False, tooltip="the KV and memory sparklines"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self, state: NodeState, now: float, interval_s: float) -> None:
        super().__init__(state, now, interval_s)
        self.sort_index = 0  # SORT_KEYS: GPU index first
        self.sort_reverse = False  # `S`: the same order, highest first
        self.hidden_columns: frozenset[str] = frozenset()  # `V`, `H`: optional parts of the rows hidden
        self._worst: int | None = None
        self._selected_worst = False  # the worst GPU was selected once, on the first findings
        self._rows: list[GpuRowData] = []

    def compose(self) -> ComposeResult:
        # What is above and below the GPU list sits in two boxes: a tick that repaints GPU rows
        # leaves what is inside them alone (Textual repaints every child of the screen, and
        # within a box only the children whose place overlaps the change).
        with Box(id="top-box"):
            yield NodeHeader(self.interval_s, id="header").data_bind(
                state=NodeScreen.node, now=NodeScreen.now
            )
            yield Static(id="legend")
        yield GpuList(id="gpus")
        yield Static(id="empty")
        with Box(id="findings-box"):
            yield Static(FINDINGS_TITLE, id="findings-title")
            yield FindingsPane(id="findings")
            yield TypedInput(
                placeholder="gpu:3 pid:4242 state:lost engine:sglang or model/process text (Esc clears)",
                id="filter",
            )
            yield Footer(show_command_palette=False)  # ctrl+p is in the help: the footer keeps its room

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#filter", Input).display = False
        self.query_one(GpuList).focus()

    def on_key(self, event: events.Key) -> None:
        """`/` opens the filter as its key arrives here (see TypedInput.take_screen_key)."""
        self.query_one("#filter", TypedInput).take_screen_key(event, open_field=self.action_filter)

    def on_resize(self) -> None:
        self.query_one("#legend", Static).update(self._legend())
        self._fit_layout()
        self.call_after_refresh(self._fit_layout)  # again once the header has its height at this width

    def _legend(self) -> Content:
        history = "history" not in self.hidden_columns
        shown_vitals = "vitals" not in self.hidden_columns
        if self.is_mounted and self.query_one(GpuList).compact:  # one line per GPU: index, rank, state
            state = compact_state_width(self._row_width(), shown_vitals, history)
            head = f"{'#':>2} {'rank':<{RANK_WIDTH}}{'state':<{state}}"
        else:  # the figure under each GPU's name is its total: the heading says so
            head = f"{'GPU · total':<13}{'engine rank':<11}     "
        kinds = (*LEGEND_ORDER, *self._legend_extra)
        if self.is_mounted and self.query_one(GpuList).compact:  # one line a GPU: the same, over its columns
            width = self._row_width()
            bar = compact_bar_width(width, shown_vitals, history)
            util = "      GPU util" if shown_vitals and width >= COMPACT_UTIL_MIN_WIDTH else ""  # under " KV 100% "'s end
            sort = self._sort_note(bar - 1, kinds)
            return Content.assemble(
                (head, "bold $text-muted"),
                (sort, "bold $accent"),
                fitted_legend(bar - 1 - len(sort), kinds),
                (f"│{'NVML used':>{FIGURE_WIDTH}}│KV{util}{' · history' * history}", "$text-muted"),
            )
        # two lines a GPU: each heading over its column, at the widths the rows are drawn with (at 100 columns the
        # legend ran 11 cells past the bars and pushed "NVML used" and "KV" off their figures)
        bar, vitals_cells, trend = heading_widths(self._row_width(), shown_vitals, history)
        vitals_head = f"{'│GPU util·°C·W·clock':<{vitals_cells}}"[:vitals_cells] if vitals_cells else ""
        sort = self._sort_note(bar - 1, kinds)
        return Content.assemble(
            (head, "bold $text-muted"),
            (sort, "bold $accent"),
            fitted_legend(bar - 1 - len(sort), kinds),
            (f"│{'NVML used':>{FIGURE_WIDTH}}{vitals_head}{('│KV' + ' · history' * history)[:trend]}", "$text-muted"),
        )

    def _sort_note(self, room: int, kinds: tuple[SegmentKind, ...]) -> str:
        """'sorted: least free (s) ↑ reversed (S) ' over the bars, before the legend of their colours: the column
        headings keep their place (a sort once took the whole line, and "NVML used" left its figures unlabelled).
        Its shortest form where the room is tight, the legend of `kinds` kept uncut beside it; '' in the GPU index order."""
        if not (self.sort_index or self.sort_reverse):
            return ""
        name = SORT_KEYS[self.sort_index].name
        forms = (
            f"sorted: {name} (s){' ↑ reversed (S)' if self.sort_reverse else ''} ",
            f"sorted: {name}{' ↑' if self.sort_reverse else ''} ",
            f"⇅ {name}{' ↑' if self.sort_reverse else ''} ",
        )
        least_legend = shortest_legend_cells(kinds)  # the legend's colours keep at least their shortest form beside it
        return next((form for form in forms if len(form) + least_legend <= room), forms[-1][: max(room, 0)])

    def _row_width(self) -> int:
        """The width the GPU rows are drawn at (the list's, less its edge)."""
        region = self.query_one(GpuList).scrollable_content_region.width if self.is_mounted else 0
        return (region or self.size.width) - EDGE_WIDTH

    def _fit_layout(self) -> None:
        """Size the GPU list (two lines per GPU or one) and leave the findings every other line."""
        if not self.is_mounted or not self.size.height:
            return
        legend_box = self.query_one("#legend", Static)
        show_legend = self.size.height >= LEGEND_MIN_HEIGHT
        if legend_box.display != show_legend:
            legend_box.display = show_legend
        gpus = self.query_one(GpuList)
        box = self.query_one("#findings-box")
        chrome = sum(
            child.outer_size.height for child in box.children if child.display and child.id != "findings"
        )
        top = self.query_one("#header").outer_size.height + (1 if show_legend else 0)
        self._toasts_below(top)
        room = self.size.height - top - max(chrome, 2)
        compact, lines = list_layout(len(gpus.shown_gpus) or gpus.row_count, room, self.size.width)
        if gpus.compact != compact:
            gpus.compact = compact
        legend = self._legend()  # at the list's width now (it settles after a resize)
        if legend != self._legend_shown:
            self._legend_shown = legend
            legend_box.update(legend)
        if not gpus.shown_gpus and gpus.row_count:
            lines = 0  # the filter hides every GPU: the line saying so takes their place
        if gpus.styles.height is None or gpus.styles.height.value != lines:
            gpus.styles.height = lines

    def _toasts_below(self, top: int) -> None:
        """Notifications start under the header and the legend (over the rows' trend column): never over
        the engine lines' token figures, nor over the findings below."""
        rack = next(iter(self.query_children(f"#{TOAST_RACK_ID}")), None)  # Textual's rack of this screen
        if rack is not None and rack.styles.margin.top != top:
            rack.styles.margin = (top, 0, 0, 0)

    def show_node(self, state: NodeState) -> None:
        rows = gpu_rows(state, self.hidden_columns)
        self._rows = rows
        gpus = self.query_one(GpuList)
        if self.sort_index or self.sort_reverse:
            gpus.set_order(self._order_of(rows, previous=gpus.order or ()))
        counted = len(gpus.shown_gpus)
        gpus.show_rows(rows)
        extra = (
            *((ORPHAN,) if any(shows_orphan(row) for row in rows) else ()),
            *((WORKER,) if any(shows_unsplit_worker(row) for row in rows) else ()),
            *((SERVER,) if any(shows_server(row) for row in rows) else ()),
        )
        if extra != self._legend_extra:
            self._legend_extra = extra
            self.query_one("#legend", Static).update(self._legend())
        self._say_why_empty(state, bool(rows))
        self._watch_worst(state)
        if len(gpus.shown_gpus) != counted:
            self._fit_layout()

    def _watch_worst(self, state: NodeState) -> None:
        """Keep the GPU in the most trouble on screen beside the selection; when the list cannot show
        every GPU and the first problem leaves it below the fold, select it (once, before any move)."""
        worst = node_worst_gpu(state.findings, state.snapshot)
        gpus = self.query_one(GpuList)
        if worst != self._worst:
            self._worst = worst
            gpus.keep_on_screen(worst)
        if worst is not None and not self._selected_worst:
            self._selected_worst = True
            self.call_after_refresh(self._select_if_hidden, worst)

    def _select_if_hidden(self, worst: int) -> None:
        gpus = self.query_one(GpuList)
        shown = gpus.shown_gpus
        if not shown or worst not in shown or worst in gpus.visible_gpus():
            return
        if gpus.selected in (None, shown[0]):  # the operator has not moved the selection yet
            gpus.selected = worst

    def _say_why_empty(self, state: NodeState, has_rows: bool) -> None:
        """Where the list shows no GPU, one line saying why (no data yet, a failing source, the filter)."""
        gpus = self.query_one(GpuList)
        empty = self.query_one("#empty", Static)
        filtered_out = has_rows and not gpus.shown_gpus
        if empty.display != (not has_rows or filtered_out):
            empty.display = not has_rows or filtered_out
        if gpus.filter_error:
            empty.display = True
            empty.update(Content.styled(f"filter: {gpus.filter_error}", "$error"))
        elif filtered_out:
            # as typed (`\` once, not repr's `\\`), a control character escaped
            empty.update(Content(f"no GPU matches '{safe_line(gpus.filter_text)}' (Esc clears the filter)"))
        elif not has_rows:
            waiting = f"waiting for {state.source_label}…"
            reason = state.failure_said or ("no GPUs in this snapshot" if state.snapshot is not None else waiting)
            empty.update(Content(reason))

    @property
    def selected_gpu(self) -> int | None:
        """The selected GPU, None when the filter hides it (or there are no GPUs)."""
        gpus = self.query_one(GpuList)
        return gpus.selected if gpus.selected in gpus.shown_gpus else None

    def show_findings(self, findings: Sequence[FindingLike]) -> None:
        """Fill the findings pane; with none, it says the node's verdict (`findings_note`), not a check not made."""
        snapshot = self.node.snapshot
        note: tuple[str, ...] = ()
        checked = True
        if snapshot is not None and not findings:
            note, checked = empty_findings_note(snapshot, self.node.exported)
        self.query_one(FindingsPane).show_findings(findings, note, checked=checked)

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        self.set_focus(box)  # now, not after the keys already typed behind `/` ("gpu:3": its "p" opened the planner)
        self.call_after_refresh(self._fit_layout)

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.display = False
        self.query_one(GpuList).focus()
        self.call_after_refresh(self._fit_layout)

    def action_findings(self) -> None:
        """Focus the findings (or back to the GPUs) now, not after the keys already typed: `f` and
        Enter typed together act on the findings."""
        pane = self.query_one(FindingsPane)
        self.set_focus(self.query_one(GpuList) if pane.has_focus else pane)

    def action_sort(self) -> None:
        """The next order of the GPU list (index, problems first, least free, most used, KV in use)."""
        self.sort_index = (self.sort_index + 1) % len(SORT_KEYS)
        self._apply_order()

    def action_reverse_sort(self) -> None:
        """The same order, highest first (nvitop's reverse)."""
        self.sort_reverse = not self.sort_reverse
        self._apply_order()

    def action_toggle_column(self, column: str) -> None:
        """Show or hide an optional part of the rows (NVML's vitals, the history sparklines)."""
        self.hidden_columns = self.hidden_columns ^ {column}
        self.show_node(self.node)
        self.query_one("#legend", Static).update(self._legend())
        self.post_message(PreferencesChanged())

    def apply_preferences(self, preferences: Preferences) -> None:
        """Start from what the operator chose last time: order, direction, columns."""
        names = [key.name for key in SORT_KEYS]
        self.sort_index = names.index(preferences.sort) if preferences.sort in names else 0
        self.sort_reverse = preferences.reverse_sort
        self.hidden_columns = frozenset(preferences.hidden_columns)
        if self.is_mounted:
            self.show_node(self.node)
            self._apply_order()

    def preferences(self, base: Preferences) -> Preferences:
        """`base` with this screen's order, direction and columns."""
        return base.model_copy(update={
            "sort": SORT_KEYS[self.sort_index].name if self.sort_index else None,
            "reverse_sort": self.sort_reverse, "hidden_columns": tuple(sorted(self.hidden_columns)),
        })  # fmt: skip

    def _order_of(self, rows: Sequence[GpuRowData], previous: Sequence[int] = ()) -> tuple[int, ...]:
        return ordered(rows, SORT_KEYS[self.sort_index], previous=previous, reverse=self.sort_reverse)

    def _apply_order(self) -> None:
        """Sort afresh (a new order owes nothing to the last one) and say so in the legend."""
        gpus = self.query_one(GpuList)
        plain = not self.sort_index and not self.sort_reverse
        gpus.set_order(None if plain else self._order_of(self._rows))
        self.query_one("#legend", Static).update(self._legend())
        self.post_message(PreferencesChanged())

    @on(FindingsPane.Selected)
    def mark_finding_gpus(self, message: FindingsPane.Selected) -> None:
        """The GPUs of the finding being looked at get a coloured edge; its worst GPU is selected."""
        finding = message.finding
        gpus = self.query_one(GpuList)
        if finding is None:
            gpus.mark_gpus(())
            return
        gpus.mark_gpus(finding.gpus, finding_tone(finding))
        worst = worst_gpu(finding, self.node.snapshot)
        if worst is not None and worst in gpus.shown_gpus:
            gpus.selected = worst

    @on(Input.Changed, "#filter")
    def apply_filter(self, event: Input.Changed) -> None:
        gpus = self.query_one(GpuList)
        gpus.filter_text = event.value
        self._say_why_empty(self.node, gpus.row_count > 0)
        self._fit_layout()

    @on(Input.Submitted, "#filter")
    def keep_filter(self) -> None:
        self.query_one(GpuList).focus()
