"""Stacked memory bars and sparklines as `Content`, coloured by the theme's `kv-*` tokens.

A bar spans the GPU's whole memory. Observed: weights | KV pool | runtime | driver/context |
foreign | orphan | free (orphan: engine workers whose server is gone, named in the legend
only when a row shows one). Predicted (`RankView.predicted_split`): weights | KV pool | runtime reserve (+ context) |
server | driver | others, as observed | the predicted free. Drawn at the
same scale, one above the other, a difference shows as a shifted edge. A worker nothing splits
(no predicted ledger, e.g. a node read through Prometheus) is one "engine worker" segment, or
weights and KV pool as observed plus the rest as that segment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.content import Content

from kvtop.domain.node import RankView, outside_bytes
from kvtop.domain.observe import GpuObservation
from kvtop.ui.state import sparkline as sparkline  # re-exported: the trend beside the bars


@dataclass(frozen=True, eq=False)  # the kinds below are the only ones: compared (and hashed) by identity
class SegmentKind:
    label: str
    glyph: str
    style: str
    compact: str  # one word, told apart from every other kind's (a narrower legend)
    short: str  # the fewest letters that still read as the kind (the narrowest legend: 120 columns)


WEIGHTS = SegmentKind("weights", "█", "$kv-weights", "weights", "wts")
KV_POOL = SegmentKind("KV pool", "▓", "$kv-pool", "KV", "KV")
RUNTIME = SegmentKind("runtime", "▒", "$kv-runtime", "runtime", "rt")
DRIVER = SegmentKind("driver", "▚", "$kv-driver", "driver", "drv")
FOREIGN = SegmentKind("foreign", "×", "bold $kv-foreign", "foreign", "fgn")
ORPHAN = SegmentKind("orphan worker", "⊘", "$kv-foreign", "orphan", "orph")  # an engine worker whose server is gone
FREE = SegmentKind("free", "·", "$kv-free", "free", "free")
WORKER = SegmentKind("engine worker", "░", "$kv-runtime", "worker", "wkr")  # a worker's bytes no figure splits
SERVER = SegmentKind("engine server", "▞", "$kv-runtime", "server", "srv")  # an engine server's own (its CUDA context)
LEGEND_ORDER = (WEIGHTS, KV_POOL, RUNTIME, DRIVER, FOREIGN, FREE)

Segments = tuple[tuple[SegmentKind, int], ...]


def legend(compact: bool = False, kinds: Sequence[SegmentKind] = LEGEND_ORDER, *, short: bool = False,
           gap: str = " ") -> Content:  # fmt: skip
    """`█weights ▓KV pool …` in the bar colours; `compact`: one word a kind (`█weights ▓KV`), `short`: the fewest
    letters (`█wts ▓KV ▒rt ▚drv ×fgn ·free`), `gap` '' where the glyphs alone part them (`█wts▓KV▒rt`)."""
    parts: list[Content | str | tuple[str, str]] = []
    for kind in kinds:
        parts += [(kind.glyph, kind.style), (kind.short if short else kind.compact if compact else kind.label), gap]
    return Content.assemble(*parts)


def fitted_legend(width: int, kinds: Sequence[SegmentKind] = LEGEND_ORDER) -> Content:
    """The legend in exactly `width` cells (the bar column, so the headings after it stand over their figures):
    the labels whole, else one word each, else their fewest letters (a 120-column dashboard cut "×for…" and lost
    "·free"), else those without the gaps (80 columns), else cut with a visible '…'."""
    for compact, short, gap in ((False, False, " "), (True, False, " "), (True, True, " "), (True, True, "")):
        shown = legend(compact, kinds, short=short, gap=gap)
        if shown.cell_length <= width:
            return shown.pad_right(width - shown.cell_length)
    return shown.truncate(width, ellipsis=True, pad=True)


def shortest_legend_cells(kinds: Sequence[SegmentKind] = LEGEND_ORDER) -> int:
    """The cells `fitted_legend` needs to show every kind uncut: its shortest form ('█wts▓KV▒rt▚drv×fgn·free', 23)."""
    return legend(True, kinds, short=True, gap="").cell_length


def observed_segments(gpu: GpuObservation, rank: RankView | None) -> Segments | None:
    """What NVML and the engine say the GPU holds, split as far as the figures allow."""
    if gpu.total_bytes is None or gpu.used_bytes is None:
        return None
    # the split the snapshot made once for this rank, else the GPU's own
    outside = rank.observed.outside if rank is not None else outside_bytes(gpu, None)
    foreign, orphan, server = outside.foreign + outside.unattributed, outside.orphan, outside.server
    split = rank.worker_split if rank is not None else None
    if rank is not None and split is not None:
        worker, weights, pool = rank.observed.process_bytes or 0, split.weights_bytes, split.kv_pool_bytes
        runtime, unsplit = (split.rest_bytes, 0) if split.split else (0, split.rest_bytes)
    else:
        worker, weights, pool, runtime, unsplit = 0, 0, 0, 0, 0
    driver = (gpu.reserved_bytes or 0) + max(0, outside.used_by_no_process(gpu.used_bytes, worker))
    free = gpu.free_or_remainder_bytes or 0  # total and used are known here: never None
    return (
        (WEIGHTS, weights),
        (KV_POOL, pool),
        (RUNTIME, runtime),
        (WORKER, unsplit),
        (SERVER, server),
        (DRIVER, driver),
        (FOREIGN, foreign),
        (ORPHAN, orphan),
        (FREE, max(0, free)),
    )


def predicted_segments(rank: RankView, total_bytes: int) -> Segments | None:
    """The prediction's split of the same GPU (`RankView.predicted_split`): weights, KV pool, the worker's rest, what
    NVML counts beyond the worker as observed, and the predicted free the figure beside the bar is the rest of."""
    split = rank.predicted_split(total_bytes)
    if split is None:
        return None
    return (
        (WEIGHTS, split.weights_bytes),
        (KV_POOL, split.kv_pool_bytes),
        (RUNTIME, split.runtime_bytes),
        (SERVER, split.server_bytes),
        (DRIVER, split.driver_bytes),
        (FOREIGN, split.foreign_bytes),
        (ORPHAN, split.orphan_bytes),
        (FREE, split.free_bytes),
    )


def cell_widths(sizes: Sequence[int], width: int) -> list[int]:
    """Split `width` cells in proportion to `sizes`, summing exactly to `width`.

    Each segment ends at the cell nearest its running total's share of the bar (integer
    arithmetic on bytes; a half rounds up). Two bars over the same total (observed above
    predicted) so put an edge in the same cell whenever the bytes before it are equal, and a
    shifted edge is a real difference, never a rounding of the segments after it.
    """
    whole = [max(0, int(size)) for size in sizes]
    total = sum(whole)
    if total <= 0 or width <= 0:
        return [0] * len(whole)
    cells: list[int] = []
    running = edge_before = 0
    for size in whole:
        running += size
        edge = (2 * running * width + total) // (2 * total)
        cells.append(edge - edge_before)
        edge_before = edge
    return cells


def bar(segments: Segments, width: int) -> Content:
    """The segments drawn over `width` cells."""
    cells = cell_widths([size for _, size in segments], width)
    return Content.assemble(
        *[
            (kind.glyph * count, kind.style)
            for (kind, _), count in zip(segments, cells, strict=False)
            if count
        ]
    )
