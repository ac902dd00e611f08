"""What every screen shows, as one frozen value the app replaces on each message.

`NodeState` holds the last good snapshot, when it arrived (by the app's clock), whether the
source is failing, and a bounded per-GPU history for the sparklines. `GpuHistory` is the
app's only mutable store of the past; screens only ever see its frozen `view()`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from kvtop.domain.cluster_findings import ExportedCounts
from kvtop.domain.diagnose_findings import Finding
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.node_failure import NodeFailure

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
    """Recent samples of one GPU, oldest first: used fraction of total, KV-pool usage and NVML's
    utilisation (0..1).

    `used_glyphs`, `kv_glyphs` and `utilization_glyphs`, when given, are the same samples as sparkline glyphs (the
    history draws each sample once, not once per redraw).
    """

    used_fraction: tuple[float | None, ...] = ()
    kv_usage: tuple[float | None, ...] = ()
    used_glyphs: str = ""
    kv_glyphs: str = ""
    utilization: tuple[float | None, ...] = ()  # NVML's GPU utilisation, 0..1
    utilization_glyphs: str = ""

    def used_sparkline(self, width: int) -> str:
        return _drawn(self.used_fraction, self.used_glyphs, width)

    def kv_sparkline(self, width: int) -> str:
        return _drawn(self.kv_usage, self.kv_glyphs, width)

    def utilization_sparkline(self, width: int) -> str:
        return _drawn(self.utilization, self.utilization_glyphs, width)


def _drawn(values: tuple[float | None, ...], glyphs: str, width: int) -> str:
    if len(glyphs) != len(values):
        return sparkline(values, width)
    return glyphs[-width:].rjust(width) if width > 0 else ""


@dataclass(frozen=True, eq=False)
class NodeState:
    """The node as the UI knows it now.

    Compared by identity: each one is a new arrival. Textual compares a reactive's old and new
    value on every assignment (three per tick: app, screen, header), and a value compare would
    walk the whole snapshot each time on a node whose figures stand still.
    """

    source_label: str
    snapshot: NodeSnapshot | None = None
    received_at: float | None = None  # app clock when the snapshot arrived
    failure: NodeFailure | None = None  # why the latest collect() failed (None: it answered)
    failed_at: float | None = None
    trends: Mapping[int, GpuTrend] = field(default_factory=lambda: MappingProxyType({}))
    findings: tuple[Finding, ...] = ()  # what the worker diagnosed on this snapshot, worst first
    # read through Prometheus with nothing to diagnose: what the node's own `kvtop export` counted (None: not so read)
    exported: ExportedCounts | None = None
    paused: bool = False  # the operator froze the screens (`z`); the worker keeps polling

    def age_s(self, now: float) -> float | None:
        """Seconds since the shown snapshot arrived (None before the first one)."""
        return None if self.received_at is None else max(0.0, now - self.received_at)

    @property
    def failure_said(self) -> str | None:
        """The latest failure as every view shows it ('source failing: …'; None while the source answers)."""
        return None if self.failure is None else self.failure.said


class GpuHistory:
    """Bounded per-GPU history fed by snapshots (lives on the app, touched only on the event loop).

    Each GPU's samples and glyphs are kept as immutable tuples and strings, so `view()` hands
    out the current `GpuTrend`s without copying anything (a tick appends one sample per GPU).
    """

    def __init__(self, length: int = HISTORY_LENGTH) -> None:
        self._length = length
        self._trends: dict[int, GpuTrend] = {}

    def record(self, snapshot: NodeSnapshot) -> None:
        keep = self._length
        for gpu in snapshot.observation.gpus:
            used = gpu.not_free_fraction
            rank = snapshot.rank_on_gpu(gpu.index)
            kv = rank.observed.kv_usage_fraction if rank else None
            util = None if gpu.utilization_percent is None else gpu.utilization_percent / 100
            past = self._trends.get(gpu.index, GpuTrend())
            self._trends[gpu.index] = GpuTrend(
                (*past.used_fraction, used)[-keep:],
                (*past.kv_usage, kv)[-keep:],
                (past.used_glyphs + spark_glyph(used))[-keep:],
                (past.kv_glyphs + spark_glyph(kv))[-keep:],
                (*past.utilization, util)[-keep:],
                (past.utilization_glyphs + spark_glyph(util))[-keep:],
            )

    def view(self) -> Mapping[int, GpuTrend]:
        return MappingProxyType(dict(self._trends))
