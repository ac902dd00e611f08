"""Which GPU the eye should land on: a finding's worst GPU, the node's, and the orders the list can take.

Nothing here computes a figure: it ranks GPUs by what the domain already says (findings and
their severity, the engine's tightest rank, NVML's state and bytes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kvtop.domain.node import NodeSnapshot
from kvtop.domain.observe import GpuState
from kvtop.domain.wording import GIB
from kvtop.ui.widgets.findings import FindingLike, finding_tone
from kvtop.ui.widgets.row_data import GpuRowData

#: Severities that make a GPU one to look at (info findings are advice).
PROBLEM_TONES = ("error", "warning")
_TONE_RANK = {"error": 0, "warning": 1, "info": 2}
_BROKEN = (GpuState.LOST, GpuState.ERROR)


def is_problem(finding: FindingLike) -> bool:
    """A warning or worse (info findings are advice, not faults)."""
    return finding_tone(finding) in PROBLEM_TONES


def worst_gpu(finding: FindingLike, snapshot: NodeSnapshot | None) -> int | None:
    """The GPU of `finding` to select: a lost or failing one, else its engine's tightest rank, else the
    one with the least free memory, else the first it names (None: it names no GPU)."""
    gpus = list(finding.gpus)
    if not gpus:
        return None
    if snapshot is None or len(gpus) == 1:
        return gpus[0]
    observed = {g: gpu for g in gpus if (gpu := snapshot.observation.gpu(g)) is not None}
    broken = [g for g in gpus if g in observed and observed[g].state in _BROKEN]
    if broken:
        return broken[0]
    for g in gpus:
        engine = snapshot.engine_of_gpu(g)
        tightest = engine.tightest_rank if engine is not None else None
        if tightest is not None and tightest.gpu_index in gpus:
            return tightest.gpu_index
    free = [(gpu.free_bytes, g) for g, gpu in observed.items() if gpu.free_bytes is not None]
    return min(free)[1] if free else gpus[0]


def node_worst_gpu(findings: Sequence[FindingLike], snapshot: NodeSnapshot | None) -> int | None:
    """The worst GPU of the worst problem finding (findings come worst first); None when all is well."""
    for finding in findings:
        if is_problem(finding) and finding.gpus:
            return worst_gpu(finding, snapshot)
    return None


def tones_by_gpu(findings: Sequence[FindingLike]) -> dict[int, str]:
    """Each GPU's worst finding tone ('error', 'warning', 'info'), for GPUs any finding names."""
    tones: dict[int, str] = {}
    for finding in findings:
        tone = finding_tone(finding)
        for g in finding.gpus:
            if g not in tones or _TONE_RANK[tone] < _TONE_RANK[tones[g]]:
                tones[g] = tone
    return tones


@dataclass(frozen=True)
class SortKey:
    """One order of the GPU list: its name in the legend, how a row ranks (lowest first) and how far
    apart two rows' first figures must be to change places (a figure that jitters tick to tick, such
    as free memory, must not reshuffle the rows every refresh)."""

    name: str
    rank: Callable[[GpuRowData], tuple[float, ...]]
    tolerance: float = 0.0  # in the units of the rank's first figure; 0: the whole tuple decides


def _problems(row: GpuRowData) -> tuple[float, ...]:
    broken = row.gpu.state in _BROKEN
    tone = _TONE_RANK.get(row.finding_tone or "", 3)
    return (0 if broken else 1, tone, 0 if row.tightest else 1, row.gpu.index)


def _least_free(row: GpuRowData) -> tuple[float, ...]:
    free = row.gpu.free_bytes
    return (math.inf if free is None else free, row.gpu.index)


def _most_used(row: GpuRowData) -> tuple[float, ...]:
    used, total = row.gpu.used_bytes, row.gpu.total_bytes
    return (-(used / total) if used is not None and total else 1.0, row.gpu.index)


def _kv_in_use(row: GpuRowData) -> tuple[float, ...]:
    kv = row.trend.kv_usage[-1] if row.trend.kv_usage else None
    return (1.0 if kv is None else -kv, row.gpu.index)


SORT_KEYS: tuple[SortKey, ...] = (
    SortKey("GPU index", lambda row: (row.gpu.index,)),
    SortKey("problems first", _problems),
    SortKey("least free", _least_free, tolerance=GIB),
    SortKey("most used", _most_used, tolerance=0.01),
    SortKey("KV in use", _kv_in_use, tolerance=0.02),
)


def _before(a: tuple[float, ...], b: tuple[float, ...], tolerance: float) -> bool:
    """Whether a row ranked `a` goes before one ranked `b`; within the tolerance neither moves."""
    if not tolerance:
        return a < b
    apart = abs(a[0] - b[0])
    return apart > tolerance and a[0] < b[0]  # an infinite gap (no figure) is apart; inf − inf (nan) is not


def ordered(
    rows: Sequence[GpuRowData], key: SortKey, *, previous: Sequence[int] = (), reverse: bool = False
) -> tuple[int, ...]:
    """The rows' GPU indices in `key`'s order (reversed: highest first). Rows whose figures lie within the
    key's tolerance keep the order they had (`previous`, else by index), so a refresh that moves free
    memory by a few MiB moves no row."""
    by_index = {row.gpu.index: row for row in rows}
    start = [i for i in previous if i in by_index] + sorted(i for i in by_index if i not in previous)
    ranks = {i: key.rank(by_index[i]) for i in start}
    result: list[int] = []
    for index in start:  # insertion: a row moves up only past rows it clearly goes before
        place = len(result)
        while place and (
            _before(ranks[result[place - 1]], ranks[index], key.tolerance) if reverse
            else _before(ranks[index], ranks[result[place - 1]], key.tolerance)
        ):  # fmt: skip
            place -= 1
        result.insert(place, index)
    return tuple(result)
