"""The restart rule SGLang, LMDeploy, TensorRT-LLM and llama.cpp share (vLLM has its own): the launch re-solved
(its `WhatIf` replay) at the tightest GPU as it is now, and the finding where no KV fits there. What a restart
sizes lives in each replay: SGLang, LMDeploy and TensorRT-LLM size the KV pool from the free memory then (a
restart gets less); llama.cpp allocates the `-c` it is given whatever is free (all of it, or a failed
allocation). Each engine's `diagnosis` module gives its own words (what the restart leaves, its log's line, its
own fix); the figures are solved once, here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kvtop.domain.diagnose_findings import Finding, Severity
from kvtop.domain.wording import gib

if TYPE_CHECKING:
    from kvtop.domain.diagnose_engine import EngineOnNode


def free_what_others_hold(engine: EngineOnNode, gpu: int) -> str:
    """The fix where a restart does not fit: free what other processes hold on `gpu`, else more GPUs."""
    held = engine.clean[gpu] - engine.now()[gpu]
    return f"free {gib(held)} on GPU {gpu} (stop its other processes)" if held else f"free memory on GPU {gpu}, or use more GPUs"


def restart_without_kv(
    engine: EngineOnNode, *, leaves: str, evidence: tuple[str, ...],
    fix: Callable[[EngineOnNode, int], str] = free_what_others_hold,
) -> Finding | None:  # fmt: skip
    """`restart_will_not_fit` (critical): a restart with the tightest GPU as it is now leaves no KV; None where it
    fits (or kvtop cannot re-solve it). `leaves`: the engine's words for the failure ('leaves no KV blocks');
    `fix(engine, gpu)`: its advice for that GPU."""
    assert engine.ledger is not None and engine.replay is not None
    now = engine.now()
    tight = min(now, key=lambda g: now[g])
    solved = engine.replay.solve(free_shift=now[tight] - engine.replay.free_before_load_bytes)
    if solved is None or solved.engine.fits:
        return None
    capacity = engine.ledger.token_capacity
    return engine.finding(
        rule="restart_will_not_fit", severity=Severity.CRITICAL, gpus=(tight,), bytes=solved.engine.shortfall_bytes,
        tokens=capacity, gain_tokens=capacity,
        summary=f"a restart of {engine.id} {leaves}: GPU {tight} would have {gib(now[tight])} free",
        fix=fix(engine, tight), evidence=evidence,
    )  # fmt: skip
