"""What every view calls the engine's own token figure: the endpoint's reading now, its startup log's, or a demo
scenario's.

One wording for one fact (`EngineView.capacity_source`, decided by `CapacitySource.of_reading`): the header, the
rank ledger and the planner read it here (session 57 found four: "engine's log printed", "logged", "from the log",
"engine logged"; session 58 found a demo node's figure called "live")."""

from __future__ import annotations

from kvtop.domain.capacity import CapacitySource

#: (long, compact): the long form names who states the figure ("engine reports 37,728"), the compact one
#: qualifies it ("37,728 logged"). A figure the log printed is the start's, a demo's the scenario's: never live.
_WORDS = {
    CapacitySource.LIVE: ("engine reports", "live"),
    CapacitySource.LOGGED: ("engine logged", "logged"),
    CapacitySource.SIMULATED: ("demo simulates", "simulated"),
}


def capacity_said(source: CapacitySource, compact: bool = False) -> str:
    """'engine reports' / 'engine logged' / 'demo simulates' before the figure; compact: 'live' / 'logged' /
    'simulated' after it."""
    long, short = _WORDS[source]
    return short if compact else long
