"""What one GPU row of the dashboard shows: two lines, observed bar above predicted bar, rank, state, trends.

The figure right of each bar is NVML's `used` (driver reserved not in it, as in `kvtop snapshot`):
observed above; below, the same figure as predicted (the predicted worker plus what others hold).

`row_parts` reduces a GPU's figures to what is drawn (cells per bar segment, the texts), split
where it changes: the body, and the trend at the right; equal parts draw equal cells, so the
list (`row_painter.RowPainter`) compares them to skip redraws. `render_row` is the whole row as `Content`.
The row's input (`GpuRowData`), its labels and state cell are `row_data`'s (re-exported here).

```
 0 H100 80GB sglang TP0 obs  █████▓▓▓▓▓▓▓▓▓▓▒▒▚··  77.6 GiB  KV  42% ▂▃▅▆
   79.6 GiB  OK ★tight pred █████▓▓▓▓▓▓▓▓▓▓▒▒▒··  79.6 GiB  mem     ▅▅▅▅
```

On a short or narrow terminal each GPU takes one line (`compact=True`): index, rank, state, the
observed bar, NVML used and the KV pool's use.

```
 3 sglang TP3 OK ★ ▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▒▒▒×× 79.3 GiB KV  38% ▄▄▄
```

The state cell (`OK`, `LOST`, …) shows a rank's capacity against its clean prediction when the
capacity waterfall has moved it (`GpuRowData.capacity`, e.g. `−129k tok`: the waterfall's `change_tokens`,
kvtop's own miss included; the findings and the ledger say what each cause costs): the row draws that cell, it
never derives a figure.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from textual.content import Content

from kvtop.domain.observe import GpuObservation
from kvtop.ui.state import GpuTrend
from kvtop.ui.widgets.memory_bar import (
    SegmentKind,
    Segments,
    cell_widths,
    observed_segments,
    predicted_segments,
)
from kvtop.ui.widgets.row_data import (
    FIGURE_WIDTH,
    ID_WIDTH,
    LABEL_WIDTH,
    MIN_BAR_WIDTH,
    RANK_WIDTH,
    CapacityCell,
    GpuRowData,
    fit,
    rank_label,
    short_gpu_name,
    state_cell,
    who_label,
)
from kvtop.units import fmt_gib, fmt_percent

#: The row's input and labels live in `row_data`; callers may keep importing them from here.
__all__ = [
    "COMPACT_UTIL_MIN_WIDTH",
    "FIGURE_WIDTH",
    "ID_WIDTH",
    "LABEL_WIDTH",
    "MIN_BAR_WIDTH",
    "MIN_TWO_LINE_WIDTH",
    "RANK_WIDTH",
    "CapacityCell",
    "GpuRowData",
    "Line",
    "RowBody",
    "RowParts",
    "RowTrend",
    "body_lines",
    "compact_bar_width",
    "compact_body_line",
    "compact_row_parts",
    "compact_state_width",
    "heading_widths",
    "line_content",
    "parts_content",
    "rank_label",
    "render_row",
    "row_parts",
    "short_gpu_name",
    "state_cell",
    "trend_lines",
    "trend_width",
    "vitals_lines",
]


def trend_width(row_width: int) -> int:
    """The trend column grows with the terminal: 15 cells at 80 columns, 35 at 160."""
    return 15 + max(0, row_width - 80) // 4


class RowBody(NamedTuple):
    """The left of both lines (identity, rank, state, bars, figures), reduced to what is drawn.

    Bars are kept as cells per segment, not bytes, so a few MiB of drift draw no new row.
    Tuples, not dataclasses: built for every row every tick, compared and hashed in C.
    """

    id_lines: tuple[str, str]
    who: str
    has_rank: bool
    state: tuple[str, str]  # text, style
    tightest: bool
    observed: tuple[tuple[SegmentKind, int], ...] | None  # cells; None: `message` spans both lines
    observed_figure: str = ""
    predicted: tuple[tuple[SegmentKind, int], ...] | None = None  # cells; None: `predicted_figure` says why
    predicted_figure: str = ""
    message: tuple[str, str] = ("", "")
    state_width: int = 0  # the one-line row's state cells (`_compact_geometry`); 0: the two-line row's


class RowTrend(NamedTuple):
    """The right of both lines: NVML's vitals (when shown), KV-pool use now and the two sparklines."""

    kv_text: str
    kv_spark: str
    used_label: str
    used_spark: str
    vitals: tuple[str, str] = ("", "")


class RowParts(NamedTuple):
    """A row split where it changes: `body` over `body_width` cells, then `trend` (None: body spans all).

    `lines` holds each line's (body, trend) pieces (two, or one when compact); the trend is empty
    when the body spans the row.
    """

    body: RowBody
    trend: RowTrend | None
    body_width: int
    width: int
    lines: tuple[tuple[Line, Line], ...]


def _parts(body: RowBody, trend: RowTrend | None, body_width: int, width: int) -> RowParts:
    first, second = body_lines(body)
    if trend is None:
        return RowParts(body, None, body_width, width, ((first, ()), (second, ())))
    kv, used = trend_lines(trend)
    return RowParts(body, trend, body_width, width, ((first, kv), (second, used)))


def _cells_of(segments: Segments, width: int) -> tuple[tuple[SegmentKind, int], ...]:
    """The cells each segment of a bar gets at `width`."""
    cells = cell_widths([size for _, size in segments], width)
    return tuple((kind, count) for (kind, _), count in zip(segments, cells, strict=True))


_cells = lru_cache(maxsize=256)(_cells_of)  # the predicted bar: the same sizes and width tick after tick


@dataclass(frozen=True)
class _Geometry:
    """Where a row's columns fall at one width."""

    trend: int  # the KV and memory history (its label alone when the history is hidden)
    bar: int
    body: int  # identity, rank, label, bar and figure
    rest: int  # what follows the rank column: label, bar, figure, vitals and trend
    line: int
    vitals: int = 0  # NVML's vitals column (0: not shown)


@lru_cache(maxsize=64)
def _geometry(width: int, vitals: bool = True, history: bool = True) -> _Geometry:
    trend = trend_width(width) if history else len(KV_TEXT_NONE)
    shown = VITALS_WIDTH if vitals and width >= VITALS_MIN_WIDTH else 0
    bar = max(MIN_BAR_WIDTH, width - ID_WIDTH - RANK_WIDTH - LABEL_WIDTH - FIGURE_WIDTH - shown - trend)
    body = ID_WIDTH + RANK_WIDTH + LABEL_WIDTH + bar + FIGURE_WIDTH
    return _Geometry(trend, bar, body, LABEL_WIDTH + bar + FIGURE_WIDTH + shown + trend, body + shown + trend, shown)


def heading_widths(width: int, vitals: bool = True, history: bool = True) -> tuple[int, int, int]:
    """(bar, vitals, trend) cells of a two-line row `width` cells wide: the dashboard's legend line is laid over them."""
    geometry = _geometry(width, vitals, history)
    return geometry.bar, geometry.vitals, geometry.trend


#: NVML's vitals beside the bars: utilisation and its history, then temperature, power and SM clock.
VITALS_WIDTH = 20
#: Narrower rows leave the vitals out (the bars need the room); `V` hides them anywhere.
VITALS_MIN_WIDTH = 110
KV_TEXT_NONE = " KV   —  "


def kv_now_text(trend: GpuTrend) -> str:
    """' KV  97% ': the latest KV usage of the trend, the row's and the compact row's; `KV_TEXT_NONE` without one."""
    kv_now = trend.kv_usage[-1] if trend.kv_usage else None
    return f" KV {fmt_percent(kv_now):>4} " if kv_now is not None else KV_TEXT_NONE


def vitals_lines(gpu: GpuObservation, trend: GpuTrend, width: int) -> tuple[str, str]:
    """' GPU  64% ▃▄▅▆▆▇▆▅▄▃' over ' 56°C  372W 1980MHz': NVML's own figures, '—' where it has none."""
    util = "  —" if gpu.utilization_percent is None else f"{gpu.utilization_percent:>3}"
    head = f" GPU {util}% "
    first = head + trend.utilization_sparkline(width - len(head))
    temp = "—" if gpu.temperature_c is None else f"{gpu.temperature_c}°C"
    power = "—" if gpu.power_mw is None else f"{gpu.power_mw / 1000:.0f}W"
    clock = "—" if gpu.sm_clock_mhz is None else f"{gpu.sm_clock_mhz}MHz"
    return fit(first, width), fit(f" {temp:>4} {power:>5} {clock:>7}", width)


@lru_cache(maxsize=64)
def _id_lines(index: int, name: str | None, total_bytes: int | None) -> tuple[str, str]:
    return (
        fit(f"{index:>2} {short_gpu_name(name)}", ID_WIDTH),
        fit("   " + (fmt_gib(total_bytes, 1) if total_bytes else ""), ID_WIDTH),
    )


@lru_cache(maxsize=256)
def _figure(num_bytes: int) -> str:
    return f"{fmt_gib(num_bytes, 1):>{FIGURE_WIDTH}}"


def row_parts(data: GpuRowData, width: int) -> RowParts:
    """What the row draws at `width` cells, as plain values (cheap; compared to skip redraws)."""
    gpu, rank = data.gpu, data.rank
    at = _geometry(width, "vitals" not in data.hidden, "history" not in data.hidden)
    id_lines = _id_lines(gpu.index, gpu.name, gpu.total_bytes)
    state = state_cell(data)
    who, has_rank = who_label(data), rank is not None
    observed = observed_segments(gpu, rank)
    if observed is None:
        message = f"{state[0]}: {gpu.state_message or 'no memory figures from NVML'}"
        wrapped = textwrap.wrap(message, at.rest, max_lines=2, placeholder="…") + ["", ""]
        lines = (fit(wrapped[0], at.rest), fit(wrapped[1], at.rest))
        return _parts(
            RowBody(id_lines, who, has_rank, state, data.tightest, observed=None, message=lines), None, at.line, width
        )  # fmt: skip
    used_bytes = gpu.used_bytes or 0  # NVML's used, as `kvtop snapshot` has it (driver reserved apart)
    predicted = predicted_segments(rank, gpu.total_bytes or 0) if rank else None
    predicted_used = rank.predicted_used_bytes if rank else None
    if predicted is not None and predicted_used is not None:
        predicted_cells: tuple[tuple[SegmentKind, int], ...] | None = _cells(predicted, at.bar)
        predicted_figure = _figure(predicted_used)
    else:
        reason = (
            data.engine.ledger_error
            if data.engine and data.engine.ledger_error
            else "no engine rank: nothing predicted"
        )
        predicted_cells, predicted_figure = None, fit(f"pred {reason}", LABEL_WIDTH + at.bar + FIGURE_WIDTH)
    body = RowBody(
        id_lines,
        who,
        has_rank,
        state,
        data.tightest,
        observed=_cells_of(observed, at.bar),
        observed_figure=_figure(used_bytes),
        predicted=predicted_cells,
        predicted_figure=predicted_figure,
    )
    kv_text = kv_now_text(data.trend)
    spark_width = at.trend - len(kv_text)
    trend = RowTrend(
        kv_text=kv_text,
        kv_spark=data.trend.kv_sparkline(spark_width),
        used_label=fit(" mem", len(kv_text)),
        used_spark=data.trend.used_sparkline(spark_width),
        vitals=vitals_lines(gpu, data.trend, at.vitals) if at.vitals else ("", ""),
    )
    return _parts(body, trend, at.body, width)


Piece = tuple[str, str]  # text and its style ("" for the base style)
Line = tuple[Piece, ...]


def _drawn_bar(cells: tuple[tuple[SegmentKind, int], ...]) -> Line:
    return tuple((kind.glyph * count, kind.style) for kind, count in cells if count)


@lru_cache(maxsize=64)  # a tick mostly moves the trend: the body of the tick before, drawn again
def _tight_mark(tightest: bool, state_width: int) -> str:
    """' ★tight' where the state leaves room, else ' ★', else nothing (a space stays before the bar)."""
    if not tightest:
        return ""
    if state_width + 7 < RANK_WIDTH:
        return " ★tight"
    return " ★" if state_width + 2 < RANK_WIDTH else ""


def body_lines(body: RowBody) -> tuple[Line, Line]:
    """The body's two lines, as styled pieces."""
    first: Line = ((body.id_lines[0], "bold"), (fit(body.who, RANK_WIDTH), "$text-primary" if body.has_rank else "$text-muted"))  # fmt: skip
    state_text, state_style = body.state
    mark = _tight_mark(body.tightest, len(state_text))
    state_text = state_text[: RANK_WIDTH - 1 - len(mark)]  # one blank cell at least before the bar's 'pred'
    gap = " " * (RANK_WIDTH - len(state_text) - len(mark))
    # the blanks ride in the cell's last drawn span: a blank-only span is left out of an exported screen's text
    # (Rich's SVG), where '−122k tok' then ran into the bar's label ('−122k tokpred': one figure, not two)
    second: Line = (
        (body.id_lines[1], ""),
        (state_text + ("" if mark else gap), state_style),
        (mark + gap if mark else "", "bold $warning"),
    )
    if body.observed is None:
        return first + ((body.message[0], "bold $error"),), second + ((body.message[1], "$error"),)
    first += (("obs  ", "$text-muted"), *_drawn_bar(body.observed), (body.observed_figure, ""))
    if body.predicted is not None:
        second += (
            ("pred ", "$text-muted"),
            *_drawn_bar(body.predicted),
            (body.predicted_figure, "$kv-predicted"),
        )
    else:
        second += ((body.predicted_figure, "$text-muted"),)
    return first, second


def trend_lines(trend: RowTrend) -> tuple[Line, Line]:
    """The trend's two lines: the vitals (utilisation and its history; temperature, power, clock), then
    KV % and its sparkline over used memory's."""
    first, second = trend.vitals
    return (
        ((first, "$text-muted"), (trend.kv_text, "$text-muted"), (trend.kv_spark, "$kv-pool")),
        ((second, "$text-muted"), (trend.used_label, "$text-muted"), (trend.used_spark, "$kv-runtime")),
    )


def line_content(line: Line) -> Content:
    """A line's pieces as `Content` (an unstyled piece stays plain text)."""
    return Content.assemble(*[(text, style) if style else text for text, style in line if text])


def parts_content(parts: RowParts) -> Content:
    """Both lines of the row as one `Content`."""
    return Content("\n").join([line_content(body + trend) for body, trend in parts.lines])


def render_row(data: GpuRowData, width: int, compact: bool = False) -> Content:
    """The row's lines (two, or one when `compact`) at `width` cells."""
    return parts_content(compact_row_parts(data, width) if compact else row_parts(data, width))


# --- one line per GPU --------------------------------------------------------------------------

COMPACT_INDEX_WIDTH = 3
#: What a rank's state cell ('−Nk tok') answers, as its hover text says it: not the ▶ answer's figure (one cause's
#: cost, 'loses 128,660 tokens to pid 4242' in the foreign-GPU demo), but every cause together.
STATE_CELL_MEANS = (
    "A rank's '−Nk tok': its tokens now (live, logged or simulated) against its clean prediction (the same launch "
    "on empty GPUs), every cause and kvtop's own miss together. The ▶ answer and each finding price one cause alone."
)
COMPACT_STATE_WIDTH = 12  # "−129k tok ★" and a space before the bar ("NO-PMEM ★")
NARROW_STATE_WIDTH = 9  # "−129k ★": where the wide cell would leave the bar fewer than MIN_BAR_WIDTH + 2 cells
#: Below this width the two-line row cannot draw its bars: the list goes compact.
MIN_TWO_LINE_WIDTH = ID_WIDTH + RANK_WIDTH + LABEL_WIDTH + MIN_BAR_WIDTH + FIGURE_WIDTH + 15


@dataclass(frozen=True)
class _CompactGeometry:
    spark: int
    bar: int
    body: int  # index, rank, state, bar and figure
    util: int = 0  # NVML's utilisation ('GPU  64% '), 0: not shown
    state: int = COMPACT_STATE_WIDTH  # the state cell's width


@lru_cache(maxsize=64)
def _compact_geometry(width: int, vitals: bool = True, history: bool = True) -> _CompactGeometry:
    spark = min(30, max(0, (width - 60) // 3)) if history else 0
    util = len(COMPACT_UTIL_NONE) if vitals and width >= COMPACT_UTIL_MIN_WIDTH else 0
    rest = width - (COMPACT_INDEX_WIDTH + RANK_WIDTH + FIGURE_WIDTH + len(" KV 100% ") + util + spark)
    state = COMPACT_STATE_WIDTH if rest - COMPACT_STATE_WIDTH >= MIN_BAR_WIDTH + 2 else NARROW_STATE_WIDTH
    bar = max(6, rest - state)
    return _CompactGeometry(spark, bar, COMPACT_INDEX_WIDTH + RANK_WIDTH + state + bar + FIGURE_WIDTH, util, state)


def compact_bar_width(width: int, vitals: bool = True, history: bool = True) -> int:
    """The bar's cells of a one-line row `width` cells wide (the legend line is laid over it)."""
    return _compact_geometry(width, vitals, history).bar


def compact_state_width(width: int, vitals: bool = True, history: bool = True) -> int:
    """The state cell's width of a one-line row `width` cells wide (the header's 'state' column)."""
    return _compact_geometry(width, vitals, history).state


#: One line per GPU shows NVML's utilisation from this width (`V` hides it).
COMPACT_UTIL_MIN_WIDTH = 100
COMPACT_UTIL_NONE = "GPU   —  "


def compact_row_parts(data: GpuRowData, width: int) -> RowParts:
    """The row as one line at `width` cells: index, rank, state, observed bar, NVML used, KV use."""
    gpu, rank = data.gpu, data.rank
    at = _compact_geometry(width, "vitals" not in data.hidden, "history" not in data.hidden)
    state = state_cell(data, compact=at.state)
    index = fit(f"{gpu.index:>2}", COMPACT_INDEX_WIDTH)
    who, has_rank = who_label(data), rank is not None
    observed = observed_segments(gpu, rank)
    if observed is None:
        message = f"{state[0]}: {gpu.state_message or 'no memory figures from NVML'}"
        rest = max(0, width - COMPACT_INDEX_WIDTH - RANK_WIDTH)
        text = textwrap.shorten(message, rest, placeholder="…") if len(message) > rest else message
        body = RowBody(
            (index, ""), who, has_rank, state, data.tightest, observed=None, message=(fit(text, rest), ""),
            state_width=at.state,
        )
        return RowParts(body, None, width, width, ((compact_body_line(body), ()),))
    body = RowBody(
        (index, ""),
        who,
        has_rank,
        state,
        data.tightest,
        observed=_cells_of(observed, at.bar),
        observed_figure=_figure(gpu.used_bytes or 0),
        state_width=at.state,
    )
    kv_text = kv_now_text(data.trend)
    if at.util:
        util = COMPACT_UTIL_NONE if gpu.utilization_percent is None else f"GPU {gpu.utilization_percent:>3}% "
        kv_text += util
    trend = RowTrend(
        kv_text=kv_text, kv_spark=data.trend.kv_sparkline(at.spark), used_label="", used_spark=""
    )
    kv, _ = trend_lines(trend)
    return RowParts(body, trend, at.body, width, ((compact_body_line(body), kv),))


@lru_cache(maxsize=64)
def compact_body_line(body: RowBody) -> Line:
    """The one-line body: index, rank, state (★ when tightest), observed bar and figure."""
    state_text, state_style = body.state
    star = " ★" if body.tightest else ""
    state_width = (body.state_width or COMPACT_STATE_WIDTH) - len(star)
    line: Line = (
        (body.id_lines[0], "bold"),
        (fit(body.who, RANK_WIDTH), "$text-primary" if body.has_rank else "$text-muted"),
        (state_text[:state_width], state_style),
        (star, "bold $warning"),
        (" " * max(0, state_width - len(state_text)), ""),
    )
    if body.observed is None:
        return line[:2] + ((body.message[0], "bold $error"),)
    return line + (*_drawn_bar(body.observed), (body.observed_figure, ""))
