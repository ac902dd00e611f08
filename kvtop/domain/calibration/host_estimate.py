"""What a plan states about memory the host holds, as typed figures (`host_memory.py` computes them): a unified-memory
host's assumed share and an engine's start against it, a desktop's share at the low end. `plan --json` reads these;
the prose `note` is the same figures in words."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict


class StartVerdict(str, Enum):
    """Whether an engine that asks a share of the total free at its start (vLLM's `request_memory`) starts where the
    host holds what it is assumed to: the most the host may hold against the assumed span (centre ± error)."""

    REFUSED_ACROSS_SPAN = "refused_across_span"  # the most the host may hold is below the span's low end
    REFUSED_AT_CENTRE = "refused_at_centre"  # below the centre, not below the low end
    REFUSED_AT_HIGH_END = "refused_at_high_end"  # started at the centre, refused at the high end
    STARTED_ACROSS_SPAN = "started_across_span"  # at or above the span's high end


class UnifiedHost(BaseModel):
    """A unified-memory host's share of the GPU's memory (the host's RAM), assumed."""

    model_config = ConfigDict(frozen=True)

    total_bytes: int  # CUDA's total: the host's memory
    held_bytes: int  # the assumed centre of what the host holds before the engine starts
    error_bytes: int  # the assumption's half-width
    charged: bool  # in the budget (the engine sizes from the free memory), else only said
    start_needs_bytes: int | None = None  # what an engine that sizes from the total asks free at its start
    most_held_bytes: int | None = None  # the most the host may hold for that start: total − start_needs_bytes
    start_verdict: StartVerdict | None = None
    note: str


class DesktopHost(BaseModel):
    """A desktop (Windows, WSL2) sharing the card: not modelled, said, and taken at the interval's low end."""

    model_config = ConfigDict(frozen=True)

    low_end_bytes: (
        int  # what the low end takes off the free memory before the load (0: not charged, or measured)
    )
    note: str
