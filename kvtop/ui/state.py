"""What every screen shows, as one frozen value the app replaces on each message.

`NodeState` holds the last good snapshot, when it arrived (by the app's clock), whether the
source is failing, and a bounded per-GPU history for the sparklines. `GpuHistory` is the
app's only mutable store of the past; screens only ever see its frozen `view()`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from kvtop.domain.node import NodeSnapshot

HISTORY_LENGTH = 120  # samples kept per GPU (two minutes at the default 1 s interval)
SPARK_GLYPHS = "▁▂▃▄▅▆▇█"


def spark_glyph(value: float | None) -> str:
    """One sample (0..1) as a block glyph; a missing sample is a space."""
    if value is None:
        return " "
    top = len(SPARK_GLYPHS) - 1
    return SPARK_GLYPHS[min(top, max(0, round(value * top)))]


def sparkline(values: Sequence[float | None], width: int) -> str:
    """The last `width` samples (0..1) as block glyphs, right-aligned; a missing sample is a space."""
    if width <= 0:
        return ""
    shown = values[-width:] if isinstance(values, (tuple, list)) else list(values)[-width:]
    return "".join(spark_glyph(value) for value in shown).rjust(width)


@dataclass(frozen=True)
class GpuTrend:
    """Recent samples of one GPU, oldest first: used fraction of total and KV-pool usage (0..1).

    `used_glyphs` and `kv_glyphs`, when given, are the same samples as sparkline glyphs (the
    history draws each sample once, not once per redraw).
    """

    used_fraction: tuple[float | None, ...] = ()
    kv_usage: tuple[float | None, ...] = ()
    used_glyphs: str = ""
    kv_glyphs: str = ""

    def used_sparkline(self, width: int) -> str:
        return _drawn(self.used_fraction, self.used_glyphs, width)

    def kv_sparkline(self, width: int) -> str:
        return _drawn(self.kv_usage, self.kv_glyphs, width)


def _drawn(values: tuple[float | None, ...], glyphs: str, width: int) -> str:
    if len(glyphs) != len(values):
        return sparkline(values, width)
    return glyphs[-width:].rjust(width) if width > 0 else ""


@dataclass(frozen=True)
class NodeState:
    """The node as the UI knows it now."""

    source_label: str
    snapshot: NodeSnapshot | None = None
    received_at: float | None = None  # app clock when the snapshot arrived
    failure: str | None = None  # why the latest collect() failed (None: it answered)
    failed_at: float | None = None
    trends: Mapping[int, GpuTrend] = field(default_factory=lambda: MappingProxyType({}))

    def age_s(self, now: float) -> float | None:
        """Seconds since the shown snapshot arrived (None before the first one)."""
        return None if self.received_at is None else max(0.0, now - self.received_at)

    def is_stale(self, now: float, interval_s: float) -> bool:
        """The source is failing, or nothing arrived for three intervals (at least 3 s)."""
        age = self.age_s(now)
        return self.failure is not None or (age is not None and age > max(3.0, 3 * interval_s))


class GpuHistory:
    """Bounded per-GPU history fed by snapshots (lives on the app, touched only on the event loop)."""

    def __init__(self, length: int = HISTORY_LENGTH) -> None:
        self._length = length
        self._used: dict[int, deque[float | None]] = {}
        self._kv: dict[int, deque[float | None]] = {}
        self._used_glyphs: dict[int, deque[str]] = {}
        self._kv_glyphs: dict[int, deque[str]] = {}

    def record(self, snapshot: NodeSnapshot) -> None:
        for gpu in snapshot.observation.gpus:
            used = None
            if gpu.total_bytes and gpu.used_bytes is not None:
                used = (gpu.used_bytes + (gpu.reserved_bytes or 0)) / gpu.total_bytes
            rank = snapshot.rank_on_gpu(gpu.index)
            kv = rank.observed.kv_usage_fraction if rank else None
            self._used.setdefault(gpu.index, deque(maxlen=self._length)).append(used)
            self._kv.setdefault(gpu.index, deque(maxlen=self._length)).append(kv)
            self._used_glyphs.setdefault(gpu.index, deque(maxlen=self._length)).append(spark_glyph(used))
            self._kv_glyphs.setdefault(gpu.index, deque(maxlen=self._length)).append(spark_glyph(kv))

    def view(self) -> Mapping[int, GpuTrend]:
        return MappingProxyType(
            {
                index: GpuTrend(
                    tuple(self._used[index]),
                    tuple(self._kv[index]),
                    "".join(self._used_glyphs[index]),
                    "".join(self._kv_glyphs[index]),
                )  # fmt: skip
                for index in self._used
            }
        )
