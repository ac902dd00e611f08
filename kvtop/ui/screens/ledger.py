"""The rank ledger of one GPU: predicted vs observed, row by row, with bytes read as tokens.

After a probe of the GPU (`P`), a probe section under the rows states what it proved.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from kvtop.domain.capacity import capacity_said
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.probe import ProbeResult
from kvtop.ui.ledger_rows import RankLedgerView, probe_rows, rank_ledger
from kvtop.ui.screens.base import NodeScreen
from kvtop.ui.state import NodeState
from kvtop.ui.widgets.footer import Footer
from kvtop.ui.widgets.node_header import NodeHeader
from kvtop.ui.widgets.row_data import rank_label, short_gpu_name
from kvtop.units import fmt_both_legible, fmt_bytes, fmt_gib, fmt_percent, fmt_tokens

_ROW_STYLES = {"total": "bold", "gap": "bold $warning", "gpu": "$text-muted", "item": ""}
LABEL_WIDTH = 23  # the least: "unattributed (hidden)"; a longer label widens the column where it fits
BYTES_WIDTH = 20
TOKENS_WIDTH = 10
#: Columns right of the label: two byte cells and the tokens cell with their gaps, and the scroll's padding.
_SCROLL_WIDTH = 3  # the scroll's padding (1 a side) and its scrollbar
_FIGURES_WIDTH = 1 + BYTES_WIDTH + 1 + BYTES_WIDTH + 1 + TOKENS_WIDTH + _SCROLL_WIDTH
SUMMARY_LABEL_WIDTH = 15  # "token capacity " and its gap
PROBE_LABEL_WIDTH = 27  # "probe: bytes/token measured"


def _bytes_cell(value: int | None, style: str) -> Content:
    if value is None:
        return Content.styled(f"{'—':>{BYTES_WIDTH}}", "$text-muted")
    return Content.styled(f"{fmt_both_legible(value):>{BYTES_WIDTH}}", style)


def title_line(view: RankLedgerView, snapshot: NodeSnapshot) -> Content:
    gpu, rank = view.gpu, view.rank
    engine = snapshot.engine_of_gpu(gpu.index)
    parts: list[str | tuple[str, str]] = [
        (
            f"Rank ledger · GPU {gpu.index}" + (f" {short_gpu_name(gpu.name)}" if gpu.name else ""),
            "bold $primary",
        )
    ]
    if rank is not None and engine is not None:
        parts.append(f" · {engine.engine.label} {rank_label(rank, engine)}")
    else:
        parts.append((" · no engine rank on this GPU", "$text-muted"))
    if gpu.state_message:
        parts.append((f" · {gpu.state.value.upper()}: {gpu.state_message}", "bold $error"))
    return Content.assemble(*parts)


def summary_line(label: str, value: str | Content, width: int | None = None) -> Content:
    """The label in its column, then its value wrapped to the `width` left beside it, each further line under the
    value: at 80 columns 'tokens' and 'fraction from' wrapped back to column 1 (session 67's walk)."""
    head = Content.styled(f"{label:<{SUMMARY_LABEL_WIDTH}}", "bold")
    text = value if isinstance(value, Content) else Content(value)
    room = None if width is None else width - SUMMARY_LABEL_WIDTH
    if room is None or room < SUMMARY_LABEL_WIDTH:  # too narrow to hang: the widget wraps it as before
        return Content.assemble(head, text)
    lines = text.wrap(room)
    return Content("\n").join(Content.assemble(head if i == 0 else " " * SUMMARY_LABEL_WIDTH, line)
                              for i, line in enumerate(lines))  # fmt: skip


def summary_lines(view: RankLedgerView, snapshot: NodeSnapshot, width: int | None = None) -> Content:
    """Capacity predicted vs what the engine reports, and the exchange rate (`width`: the columns the lines have)."""
    rank = view.rank
    engine = snapshot.engine_of_gpu(view.gpu.index)
    if rank is None or engine is None:
        return Content.styled(
            "No engine rank: the observed rows are NVML's figures for the whole GPU.", "$text-muted"
        )
    lines = []
    observed = rank.observed
    # "predicted": the explained ledger's rank (every measured cause applied), as the header has it
    capacity = rank.capacity
    exported = engine.exported  # read through Prometheus: the exporter's figure, the same the header reads
    if rank.predicted:
        predicted_tokens = fmt_tokens(rank.predicted.token_capacity)
    else:
        predicted_tokens = exported.figure if exported is not None else "—"
    if capacity is not None and capacity.explained_tokens != capacity.clean_tokens:
        predicted_tokens += f" (clean {fmt_tokens(capacity.clean_tokens)})"
    live_tokens = (
        fmt_tokens(observed.token_capacity) if observed.token_capacity is not None else "not reported"
    )
    usage = (
        f" · KV in use {fmt_percent(observed.kv_usage_fraction)}"
        if observed.kv_usage_fraction is not None
        else ""
    )
    lines.append(
        summary_line(
            "token capacity", f"predicted {predicted_tokens} · {capacity_said(view.capacity_source)} {live_tokens}{usage}",
            width,
        )
    )
    solved = engine.explained or engine.ledger  # the header's "predicted" ledger
    requests = solved.request_capacity if solved is not None else None
    if requests is not None:  # attention-free: capacity in requests, tokens bounded by no memory
        lines.append(summary_line(
            "requests",
            f"predicted {fmt_tokens(requests.requests)} (a state of {fmt_bytes(requests.state_bytes_per_request)} "
            f"each, {fmt_tokens(requests.requests_fit)} fit) · no KV per token: tokens bounded by no memory", width,
        ))  # fmt: skip
    if rank.capacity is not None and rank.capacity.terms:
        lines.append(summary_line("tokens", rank.capacity.describe(), width))
    per_gib, per_gb = view.tokens_per_gib, view.tokens_per_gb  # the rank's rates, as the domain has them
    if view.kv_bytes_per_token and per_gib and per_gb:
        lines.append(summary_line(
            "exchange rate",
            f"{per_gib:,.0f} tokens/GiB · {per_gb:,.0f} tokens/GB · "
            f"{fmt_bytes(view.kv_bytes_per_token)} {view.kv_unit}", width,
        ))  # fmt: skip
    if engine.ledger is not None:
        result = engine.ledger.engine
        # an engine that takes no share of memory (llama.cpp: the KV cache is sized by -c) has no fraction to
        # show: its ledger's 1.0 is a placeholder, not a setting of the engine's
        shared = engine_rules(engine.ledger.settings.engine).memory_fraction_field is not None
        fraction = f"memory fraction {result.memory_fraction:.3f}" if shared else "no memory fraction"
        lines.append(summary_line(
            "engine budget", f"max running requests {result.max_running_requests:,} · {fraction}", width,
        ))  # fmt: skip
        lines.append(summary_line(
            "fraction from" if shared else "KV sized", Content.styled(result.memory_fraction_source, "$text-muted"), width,
        ))  # fmt: skip
    elif exported is not None:
        lines.append(Content.styled(exported.no_ledger, "$text-muted"))
    elif engine.ledger_error:
        lines.append(Content.styled(f"no prediction: {engine.ledger_error}", "$warning"))
    return Content("\n").join(lines)


def label_width(labels: list[str], screen_width: int | None) -> int:
    """The label column: wide enough for the longest label (`weights · routed_experts`, a weights row
    of the book), as far as the screen leaves room beside the figures; never under `LABEL_WIDTH`."""
    longest = max((len(label) for label in labels), default=0)
    room = screen_width - _FIGURES_WIDTH if screen_width is not None else longest
    return max(LABEL_WIDTH, min(longest, room))


def _cell(label: str, width: int) -> str:
    """`label` in `width` characters; one cut short ends in "…" rather than in a clipped word."""
    return label if len(label) <= width else f"{label[: width - 1]}…"


def table_lines(view: RankLedgerView, screen_width: int | None = None) -> Content:
    """The rows as fixed-width columns: row, predicted, observed, ≈ tokens."""
    width = label_width([row.label for row in view.rows], screen_width)
    header = Content.styled(
        f"{'row':<{width}} {'predicted':>{BYTES_WIDTH}} {'observed':>{BYTES_WIDTH}} {'≈ tokens':>{TOKENS_WIDTH}}",
        "bold $text-muted",
    )
    lines = [header]
    for row in view.rows:
        style = _ROW_STYLES[row.kind]
        shown = row.observed_bytes if row.observed_bytes is not None else row.predicted_bytes
        tokens = row.reported_tokens if row.reported_tokens is not None else view.tokens(shown)
        tokens = tokens if row.kind != "gpu" else None
        lines.append(Content.assemble(
            (f"{_cell(row.label, width):<{width}} ", style),
            _bytes_cell(row.predicted_bytes, "$kv-predicted"), " ", _bytes_cell(row.observed_bytes, style or "$foreground"),
            (f" {fmt_tokens(tokens) if tokens is not None else '':>{TOKENS_WIDTH}}", style),
        ))  # fmt: skip
    lines += note_lines(view)
    return Content("\n").join(lines)


def note_lines(view: RankLedgerView) -> list[Content]:
    """Which exchange rate the ≈ tokens column uses, and what others' bytes cost per the findings."""
    if not view.kv_bytes_per_token:
        return []
    # only a rank's worker rows carry the engine's count (the KV pool row)
    reported = next((row.label for row in view.rows if row.reported_tokens is not None), None) if view.rank else None
    rate = f"observed bytes, else predicted, ÷ {fmt_bytes(view.kv_bytes_per_token)} {view.kv_unit}"
    notes = (
        [Content.styled(f"≈ tokens, {reported}: the count the {capacity_said(view.capacity_source)}"
                        " (not its bytes ÷ rate)", "$text-muted"),
         Content.styled(f"≈ tokens, other rows: {rate}", "$text-muted")]
        if reported else [Content.styled(f"≈ tokens: each row's {rate}", "$text-muted")]
    )  # fmt: skip
    predicted = view.rank.predicted if view.rank is not None else None
    if predicted is not None and predicted.context_source != "measured":  # an estimate is never a fact
        error = f" ± {fmt_gib(predicted.context_error_bytes)}" if predicted.context_error_bytes else ""
        notes.append(Content.styled(
            f"context, NCCL: {predicted.context_source}{error} (before the weights load; docs/calibration.md)",
            "$text-muted",
        ))  # fmt: skip
    for cost in view.outside_costs:
        notes.append(Content.styled(
            f"{cost.row} cost {cost.tokens:,} tokens per rank (finding: {cost.finding})",
            "$warning",
        ))  # fmt: skip
    return notes


def probe_lines(result: ProbeResult) -> Content:
    """The probe section: a heading with the verdict, then planned vs measured per row."""
    width = PROBE_LABEL_WIDTH
    verdict = "OK" if result.target_met else result.outcome.value.upper().replace("_", " ")
    lines = [
        Content.assemble(
            (f"probe · {result.device}", "bold $primary"),
            (f" · {verdict}", "bold $success" if result.target_met else "bold $warning"),
            (f": {result.message}", "$text-muted"),
        ),
        Content.styled(
            f"{'row':<{width}} {'planned':>{BYTES_WIDTH}} {'measured':>{BYTES_WIDTH}}", "bold $text-muted"
        ),
    ]
    for row in probe_rows(result):
        style = "bold $error" if row.alarm else ""
        lines.append(Content.assemble(
            (f"{row.label:<{width}} ", "bold" if row.alarm else ""),
            (f"{row.planned:>{BYTES_WIDTH}} ", "$kv-predicted"), (f"{row.measured:>{BYTES_WIDTH}}", style),
        ))  # fmt: skip
    return Content("\n").join(lines)


class RankLedgerScreen(NodeScreen):
    """Opened with Enter on a GPU; Escape goes back."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("up,k", "scroll('up')", "Up", show=False),
        Binding("down,j", "scroll('down')", "Down", show=False),
    ]

    def __init__(
        self,
        gpu_index: int,
        state: NodeState,
        now: float,
        interval_s: float,
        *,
        probe_result: ProbeResult | None = None,
    ) -> None:
        super().__init__(state, now, interval_s)
        self.gpu_index = gpu_index
        self.probe_result = probe_result

    def compose(self) -> ComposeResult:
        yield NodeHeader(self.interval_s, engines=False, id="header").data_bind(
            state=NodeScreen.node, now=NodeScreen.now
        )
        yield Static(id="ledger-title")
        with VerticalScroll(id="ledger-scroll", can_focus=True):
            yield Static(id="ledger-summary")
            yield Static(id="ledger-table")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#ledger-scroll").focus()

    def action_scroll(self, direction: str) -> None:
        scroll = self.query_one("#ledger-scroll", VerticalScroll)
        if direction == "up":
            scroll.scroll_up(animate=False)
        else:
            scroll.scroll_down(animate=False)

    def show_node(self, state: NodeState) -> None:
        snapshot = state.snapshot
        view = rank_ledger(snapshot, self.gpu_index, state.findings) if snapshot else None
        title = self.query_one("#ledger-title", Static)
        table = self.query_one("#ledger-table", Static)
        summary = self.query_one("#ledger-summary", Static)
        if snapshot is None or view is None:
            title.update(
                Content.styled(f"GPU {self.gpu_index} is not in the current snapshot", "bold $error")
            )
            table.update("")
            summary.update("")
            return
        title.update(title_line(view, snapshot))
        rows = table_lines(view, self.size.width)
        if self.probe_result is not None:
            rows = Content("\n\n").join([rows, probe_lines(self.probe_result)])
        table.update(rows)
        summary.update(summary_lines(view, snapshot, self.size.width - _SCROLL_WIDTH))

    def on_resize(self) -> None:
        """The label column follows the terminal's width (`label_width`)."""
        if self.is_mounted:
            self.show_node(self.node)

    def show_probe(self, result: ProbeResult) -> None:
        """Show this GPU's latest probe under the rows."""
        self.probe_result = result
        if self.is_mounted:
            self.show_node(self.node)
