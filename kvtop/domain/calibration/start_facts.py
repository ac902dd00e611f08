"""What one engine's start measures of the terms a plan estimates: a fact each engine's package states.

The calibration store (`node.py`) keeps a term from a start's log only where the engine's own code makes the
log's figures measure it; shared code never guesses that from a value (a reserve of 0 is a measured 0 where the
engine solved it, and nothing where the engine never charged one).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StartMeasures(BaseModel):
    """Which terms a start's log measures, by the engine's own arithmetic, and where that arithmetic is."""

    model_config = ConfigDict(frozen=True)

    # the engine solves its runtime charge besides the weights from the KV memory it logs (vLLM: requested − weights
    # − KV): the ledger's reserve, rebuilt from that log, is measured (0 included)
    runtime_charge: bool = False
    # the engine's weights are the free memory's drop across the load (SGLang's 'mem usage'): both free figures
    # logged measure them where the log prints no weights line
    weights_from_free_drop: bool = False
    source: str  # the engine file (and release range) the two facts are read from
