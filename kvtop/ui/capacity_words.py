"""What every view calls the engine's own token figure: the endpoint's reading now, or its startup log's.

One wording for one fact (`token_capacity_logged`): the header, the rank ledger and the planner read it here
(session 57 found four: "engine's log printed", "logged", "from the log", "engine logged")."""

from __future__ import annotations

from typing import Protocol

from kvtop.domain.capacity import CapacitySource


class EngineFigure(Protocol):
    """A reading that holds the engine's token figure and whether its startup log printed it
    (`EngineLive`, `RankObserved`)."""

    @property
    def token_capacity_logged(self) -> bool: ...


#: (long, compact): the long form names who states the figure ("engine reports 37,728"), the compact one
#: qualifies it ("37,728 logged"). A figure the log printed is the start's, never called live.
_WORDS = {
    CapacitySource.LIVE: ("engine reports", "live"),
    CapacitySource.LOGGED: ("engine logged", "logged"),
}


def capacity_said(reading: EngineFigure, compact: bool = False) -> str:
    """'engine reports' / 'engine logged' before the figure; compact: 'live' / 'logged' after it."""
    long, short = _WORDS[CapacitySource.LOGGED if reading.token_capacity_logged else CapacitySource.LIVE]
    return short if compact else long
