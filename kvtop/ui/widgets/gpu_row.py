"""One GPU on the dashboard: two lines, observed bar above predicted bar, with rank, state and trends.

```
 0 H100 80GB sglang TP0 obs  █████▓▓▓▓▓▓▓▓▓▓▒▒▚··  77.6 GiB  KV  42% ▂▃▅▆
   79.6 GiB  OK ★tight pred █████▓▓▓▓▓▓▓▓▓▓▒▒▒··  79.6 GiB  mem     ▅▅▅▅
```
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from kvtop.domain.node import EngineView, RankView
from kvtop.domain.observe import GpuObservation, GpuState
from kvtop.ui.state import GpuTrend
from kvtop.ui.widgets.memory_bar import bar, observed_segments, predicted_segments, sparkline
from kvtop.units import fmt_gib

ID_WIDTH = 13
RANK_WIDTH = 11
LABEL_WIDTH = 5
FIGURE_WIDTH = 10
MIN_BAR_WIDTH = 10

_STATE_LABELS = {
    GpuState.OK: ("OK", "$success"),
    GpuState.LOST: ("LOST", "bold $error"),
    GpuState.ERROR: ("ERROR", "bold $error"),
    GpuState.UNIFIED_MEMORY: ("UNIFIED", "$warning"),
    GpuState.MIG: ("MIG", "$warning"),
    GpuState.PROCESS_MEMORY_UNAVAILABLE: ("NO-PMEM", "$warning"),
}


@dataclass(frozen=True)
class GpuRowData:
    """Everything one row shows."""

    gpu: GpuObservation
    rank: RankView | None
    engine: EngineView | None
    tightest: bool
    trend: GpuTrend

    def search_text(self) -> str:
        """What the `/` filter matches against."""
        parts = [str(self.gpu.index), self.gpu.name or "", self.gpu.state.value, self.gpu.state_message or ""]
        if self.engine is not None:
            parts += [self.engine.engine.engine_id, self.engine.engine.model or ""]
        if self.rank is not None:
            parts.append(rank_label(self.rank))
        return " ".join(parts).lower()


def short_gpu_name(name: str | None) -> str:
    """'NVIDIA H100 80GB HBM3' → 'H100 80GB'."""
    if not name:
        return "GPU"
    words = [w for w in name.replace("NVIDIA", "").replace("GeForce", "").split() if w]
    return " ".join(words[:2])[:9] or "GPU"


def rank_label(rank: RankView) -> str:
    """'TP3', 'PP1 TP3', 'DP2 TP0' — only the parallel dimensions that exist."""
    parts = []
    if rank.rank.dp:
        parts.append(f"DP{rank.rank.dp}")
    if rank.rank.pp:
        parts.append(f"PP{rank.rank.pp}")
    parts.append(f"TP{rank.rank.tp}")
    return " ".join(parts)


def trend_width(row_width: int) -> int:
    """The trend column grows with the terminal: 15 cells at 80 columns, 35 at 160."""
    return 15 + max(0, row_width - 80) // 4


def _fit(text: str, width: int) -> str:
    return text[:width].ljust(width)


def _who(data: GpuRowData) -> str:
    """'sglang TP3'; the rank alone when both do not fit ('DP1 TP0'); '—' idle; 'no engine'."""
    if data.engine is None or data.rank is None:
        return "no engine" if data.gpu.processes else "—"
    label = rank_label(data.rank)
    if len(data.engine.engine.kind) + 1 + len(label) < RANK_WIDTH:
        return f"{data.engine.engine.kind} {label}"
    return label if len(label) < RANK_WIDTH else label.replace(" ", "")


def render_row(data: GpuRowData, width: int) -> Content:
    gpu, rank = data.gpu, data.rank
    trend_cells = trend_width(width)
    bar_width = max(MIN_BAR_WIDTH, width - ID_WIDTH - RANK_WIDTH - LABEL_WIDTH - FIGURE_WIDTH - trend_cells)
    id_lines = (
        _fit(f"{gpu.index:>2} {short_gpu_name(gpu.name)}", ID_WIDTH),
        _fit("   " + (fmt_gib(gpu.total_bytes, 1) if gpu.total_bytes else ""), ID_WIDTH),
    )
    state_text, state_style = _STATE_LABELS.get(gpu.state, (gpu.state.value.upper(), "$warning"))
    who = _who(data)
    first = Content.assemble(
        (id_lines[0], "bold"), (_fit(who, RANK_WIDTH), "$text-primary" if rank else "$text-muted")
    )
    second = Content.assemble(
        id_lines[1], (state_text, state_style), (" ★tight" if data.tightest else "", "bold $warning"),
        " " * (RANK_WIDTH - len(state_text) - (7 if data.tightest else 0)),
    )  # fmt: skip
    observed = observed_segments(gpu, rank)
    rest_width = LABEL_WIDTH + bar_width + FIGURE_WIDTH + trend_cells
    if observed is None:
        message = f"{state_text}: {gpu.state_message or 'no memory figures from NVML'}"
        wrapped = textwrap.wrap(message, rest_width, max_lines=2, placeholder="…") + ["", ""]
        return Content("\n").join(
            [first + Content.styled(_fit(wrapped[0], rest_width), "bold $error"),
             second + Content.styled(_fit(wrapped[1], rest_width), "$error")]
        )  # fmt: skip
    kv_values, used_values = data.trend.kv_usage, data.trend.used_fraction
    kv_now = kv_values[-1] if kv_values else None
    kv_text = f" KV {kv_now * 100:>3.0f}% " if kv_now is not None else " KV   —  "
    spark_width = trend_cells - len(kv_text)
    shown_bytes = (
        rank.observed.process_bytes
        if rank and rank.observed.process_bytes is not None
        else gpu.used_bytes or 0
    )
    first += Content.assemble(
        ("obs  ", "$text-muted"), bar(observed, bar_width), f"{fmt_gib(shown_bytes, 1):>{FIGURE_WIDTH}}",
        (kv_text, "$text-muted"), (sparkline(kv_values, spark_width), "$kv-pool"),
    )  # fmt: skip
    predicted = predicted_segments(rank, gpu.total_bytes or 0) if rank else None
    if predicted is not None and rank is not None and rank.predicted_resident_bytes is not None:
        second += Content.assemble(
            ("pred ", "$text-muted"), bar(predicted, bar_width), (f"{fmt_gib(rank.predicted_resident_bytes, 1):>{FIGURE_WIDTH}}", "$kv-predicted"),
        )  # fmt: skip
    else:
        reason = (
            data.engine.ledger_error
            if data.engine and data.engine.ledger_error
            else "no engine rank: nothing predicted"
        )
        second += Content.styled(
            _fit(f"pred {reason}", LABEL_WIDTH + bar_width + FIGURE_WIDTH), "$text-muted"
        )
    second += Content.assemble(
        (_fit(" mem", len(kv_text)), "$text-muted"), (sparkline(used_values, spark_width), "$kv-runtime")
    )
    return Content("\n").join([first, second])


class GpuRow(Widget):
    """A GPU's two lines; the list marks the selected one with the `-selected` class."""

    data: reactive[GpuRowData | None] = reactive(None, layout=False)

    def __init__(self, data: GpuRowData) -> None:
        super().__init__(classes="gpu-row")
        self.set_reactive(GpuRow.data, data)

    @property
    def gpu_index(self) -> int:
        assert self.data is not None
        return self.data.gpu.index

    def render(self) -> Content:
        if self.data is None:
            return Content("")
        return render_row(self.data, self.content_size.width)
