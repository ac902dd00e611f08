"""What a GPU row is about, before any drawing: its input (`GpuRowData`), who holds the GPU and its state cell.

The row's fixed column widths live here too, since the labels are cut to them; `row_parts` turns
these into cells and styled lines, one line or two.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from kvtop.domain.node import EngineView, RankView
from kvtop.domain.observe import GpuObservation, GpuState, ProcessRole
from kvtop.ui.state import GpuTrend

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


#: A GPU no engine uses, held by a dead server's workers; one with no process at all.
ORPHAN_STATE, IDLE_STATE = "ORPHAN", "IDLE"


class CapacityCell(NamedTuple):
    """A rank's tokens and state as the domain's capacity waterfall states them, ready to draw.

    Filled from the domain's figures by whoever builds the rows (None until the rows carry the
    waterfall); the row only draws it, in place of the GPU state, in `tone`'s colour.
    """

    text: str  # e.g. "−129k tok": the two-line row's state cell (the brief one where the ★ needs the room)
    tone: str  # "error", "warning", "success"
    short: bool  # the rank holds fewer tokens than its clean prediction (the filter's `state:short`)
    brief: str = ""  # e.g. "−129k": the one-line row's cell (the text when empty)


class GpuRowData(NamedTuple):
    """Everything one row shows (a tuple: eight of these are built every tick)."""

    gpu: GpuObservation
    rank: RankView | None
    engine: EngineView | None
    tightest: bool
    trend: GpuTrend
    finding_tone: str | None = None  # the worst finding naming this GPU: "error", "warning", "info"
    capacity: CapacityCell | None = None
    hidden: frozenset[str] = frozenset()  # optional columns the operator hid ("vitals", "history")
    engine_tag: str = ""  # "1", "2": which of several engines of one kind on the node (in the snapshot's order)


def short_gpu_name(name: str | None) -> str:
    """'NVIDIA H100 80GB HBM3' → 'H100 80GB'."""
    if not name:
        return "GPU"
    words = [w for w in name.replace("NVIDIA", "").replace("GeForce", "").split() if w]
    return " ".join(words[:2])[:9] or "GPU"


def rank_label(rank: RankView, engine: EngineView | None = None) -> str:
    """'TP3', 'PP1 TP3', 'DP0 TP0' — the parallel dimensions the engine has (DP0 too, on a DP layout)."""
    return _rank_text(*_shown_dims(rank, engine), rank.rank.tp)


def _shown_dims(rank: RankView, engine: EngineView | None) -> tuple[int | None, int | None]:
    """The rank's DP and PP index where the layout has that dimension (None: not shown)."""
    settings = engine.engine.settings if engine is not None else None
    dp = rank.rank.dp if rank.rank.dp or (settings is not None and settings.dp > 1) else None
    pp = rank.rank.pp if rank.rank.pp or (settings is not None and settings.pp > 1) else None
    return dp, pp


@lru_cache(maxsize=256)
def _rank_text(dp: int | None, pp: int | None, tp: int) -> str:
    shown = [*([f"DP{dp}"] if dp is not None else []), *([f"PP{pp}"] if pp is not None else [])]
    return " ".join([*shown, f"TP{tp}"])


def fit(text: str, width: int) -> str:
    """`text` cut or padded to exactly `width` cells."""
    return text[:width].ljust(width)


def who_label(data: GpuRowData) -> str:
    """'sglang TP3'; the engine's kind cut ('lmde… TP0', 'sgla… TP10') rather than left out, so a row always says
    which engine it is, with its number where the node runs several of one kind ('lmde…2 TP0'); the rank alone only
    where not even that fits ('DP1 PP0 TP0'); '—' idle; 'no engine'."""
    if data.engine is None or data.rank is None:
        return "no engine" if data.gpu.processes else "—"
    dp, pp = _shown_dims(data.rank, data.engine)
    return _engine_rank(data.engine.engine.kind, data.engine_tag, dp, pp, data.rank.rank.tp)


#: The fewest letters of an engine's kind a cut label keeps (fewer read as no name at all).
MIN_KIND_LETTERS = 3


@lru_cache(maxsize=256)
def _engine_rank(kind: str, tag: str, dp: int | None, pp: int | None, tp: int) -> str:
    label = _rank_text(dp, pp, tp)
    room = RANK_WIDTH - 1 - len(label) - 1 - len(tag)  # the kind's letters before ' TP3' (one cell kept blank)
    if len(kind) <= room:
        return f"{kind}{tag} {label}"
    if room - 1 >= MIN_KIND_LETTERS:
        return f"{kind[: room - 1]}…{tag} {label}"
    return label if len(label) < RANK_WIDTH else label.replace(" ", "")


def state_cell(data: GpuRowData, *, compact: int = 0) -> tuple[str, str]:
    """The row's state cell (text, style): the capacity waterfall's state when the row has it, else the GPU's;
    `compact`: the one-line row's state cells (0: the two-line row)."""
    if data.capacity is not None:
        text = data.capacity.text
        # the brief form only where the full one ('−129k tok') would leave no room for the tightest rank's ★ and a
        # space before the bar: a bare '+10k' does not say what it counts (the 80-column trial)
        room = (compact or RANK_WIDTH) - (len(" ★") if data.tightest else 0)
        if data.capacity.brief and len(text) >= room:
            text = data.capacity.brief
        return text, f"bold ${data.capacity.tone}"
    gpu = data.gpu
    if gpu.state is GpuState.OK and data.rank is None:  # no engine here: what holds the GPU, if anything
        if any(process.role is ProcessRole.ORPHAN for process in gpu.processes):
            return ORPHAN_STATE, "bold $warning"  # a dead server's worker: the whole GPU is out of service
        if not gpu.processes:
            return IDLE_STATE, "$text-muted"
    return _STATE_LABELS.get(gpu.state) or (gpu.state.value.upper(), "$warning")
