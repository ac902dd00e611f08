"""What every reader calls the engine's own token figure: the endpoint's reading now, or its startup log's.

One wording for one fact (`token_capacity_logged`): the header, the rank ledger, the planner and the domain's
findings (`CapacitySource.stated`) read it here (session 57 found four in the views: "engine's log printed",
"logged", "from the log", "engine logged"; session 58 a fifth in `kvtop diagnose`'s findings)."""

from __future__ import annotations

from typing import Protocol


class EngineFigure(Protocol):
    """A reading that holds the engine's token figure and whether its startup log printed it
    (`EngineLive`, `RankObserved`)."""

    @property
    def token_capacity_logged(self) -> bool: ...


#: (long, compact) by where the figure comes from (`CapacitySource`'s values): the long form names who states the
#: figure ("engine reports 37,728"), the compact one qualifies it ("37,728 logged"). A figure the log printed is
#: the start's, never called live.
WORDS = {
    "live": ("engine reports", "live"),
    "logged": ("engine logged", "logged"),
}


def capacity_said(reading: EngineFigure, compact: bool = False) -> str:
    """'engine reports' / 'engine logged' before the figure; compact: 'live' / 'logged' after it."""
    long, short = WORDS["logged" if reading.token_capacity_logged else "live"]
    return short if compact else long
