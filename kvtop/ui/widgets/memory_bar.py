"""Stacked memory bars and sparklines as `Content`, coloured by the theme's `kv-*` tokens.

A bar spans the GPU's whole memory. Observed: weights | KV pool | runtime | driver/context |
foreign | free. Predicted: weights | KV pool | runtime reserve (+ context) | free. Drawn at the
same scale, one above the other, a difference shows as a shifted edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.content import Content

from kvtop.domain.node import RankView
from kvtop.domain.observe import GpuObservation, ProcessRole
from kvtop.ui.ledger_rows import observed_kv_pool_bytes


@dataclass(frozen=True)
class SegmentKind:
    label: str
    glyph: str
    style: str


WEIGHTS = SegmentKind("weights", "█", "$kv-weights")
KV_POOL = SegmentKind("KV pool", "▓", "$kv-pool")
RUNTIME = SegmentKind("runtime", "▒", "$kv-runtime")
DRIVER = SegmentKind("driver", "▚", "$kv-driver")
FOREIGN = SegmentKind("foreign", "×", "bold $kv-foreign")
FREE = SegmentKind("free", "·", "$kv-free")
LEGEND_ORDER = (WEIGHTS, KV_POOL, RUNTIME, DRIVER, FOREIGN, FREE)

Segments = tuple[tuple[SegmentKind, int], ...]

_SPARK_GLYPHS = "▁▂▃▄▅▆▇█"


def legend(compact: bool = False) -> Content:
    """`█ weights ▓ KV pool …` in the bar colours."""
    parts: list[Content | str | tuple[str, str]] = []
    for kind in LEGEND_ORDER:
        parts += [(kind.glyph, kind.style), (kind.label.split()[0] if compact else kind.label), " "]
    return Content.assemble(*parts)


def observed_segments(gpu: GpuObservation, rank: RankView | None) -> Segments | None:
    """What NVML and the engine say the GPU holds, split as far as the figures allow."""
    if gpu.total_bytes is None or gpu.used_bytes is None:
        return None
    foreign = sum(p.used_bytes or 0 for p in gpu.processes if p.role is not ProcessRole.ENGINE_WORKER)
    if rank is not None and rank.observed.process_bytes is not None:
        worker = rank.observed.process_bytes
        foreign = rank.observed.foreign_bytes + rank.observed.orphan_bytes + rank.observed.unattributed_bytes
        predicted = rank.predicted
        weights_hint = rank.observed.weights_bytes or (predicted.weights_bytes if predicted else 0)
        pool_hint = observed_kv_pool_bytes(rank)[0] or (predicted.kv_pool_bytes if predicted else 0)
        weights = min(weights_hint, worker)
        pool = min(pool_hint, worker - weights)
        runtime = worker - weights - pool
    else:
        worker, weights, pool, runtime = 0, 0, 0, 0
    driver = (gpu.reserved_bytes or 0) + max(0, gpu.used_bytes - worker - foreign)
    free = (
        gpu.free_bytes
        if gpu.free_bytes is not None
        else max(0, gpu.total_bytes - gpu.used_bytes - (gpu.reserved_bytes or 0))
    )
    return (
        (WEIGHTS, weights),
        (KV_POOL, pool),
        (RUNTIME, runtime),
        (DRIVER, driver),
        (FOREIGN, foreign),
        (FREE, max(0, free)),
    )


def predicted_segments(rank: RankView, total_bytes: int) -> Segments | None:
    """The ledger's split of the same GPU: weights, KV pool, reserve and context, free."""
    predicted = rank.predicted
    if predicted is None:
        return None
    runtime = predicted.reserve_bytes + predicted.context_bytes
    resident = predicted.weights_bytes + predicted.kv_pool_bytes + runtime
    return (
        (WEIGHTS, predicted.weights_bytes),
        (KV_POOL, predicted.kv_pool_bytes),
        (RUNTIME, runtime),
        (FREE, max(0, total_bytes - resident)),
    )


def cell_widths(sizes: Sequence[int], width: int) -> list[int]:
    """Split `width` cells in proportion to `sizes` (largest remainder), summing exactly to `width`."""
    total = sum(max(0, size) for size in sizes)
    if total <= 0 or width <= 0:
        return [0] * len(sizes)
    exact = [max(0, size) * width / total for size in sizes]
    cells = [int(value) for value in exact]
    order = sorted(range(len(sizes)), key=lambda i: exact[i] - cells[i], reverse=True)
    for index in order[: width - sum(cells)]:
        cells[index] += 1
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


def sparkline(values: Sequence[float | None], width: int) -> str:
    """The last `width` samples (0..1) as block glyphs, right-aligned; a missing sample is a space."""
    shown = list(values)[-width:] if width > 0 else []
    glyphs = []
    for value in shown:
        if value is None:
            glyphs.append(" ")
        else:
            level = min(len(_SPARK_GLYPHS) - 1, max(0, round(value * (len(_SPARK_GLYPHS) - 1))))
            glyphs.append(_SPARK_GLYPHS[level])
    return "".join(glyphs).rjust(width)
