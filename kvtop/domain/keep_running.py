"""The other way out of a co-tenant: leave it running and restart the engine with its memory flag moved.

A co-tenant's finding says "stop pid 4242, then restart sglang:41000". Where the process must stay,
the engine's own memory share is the lever left: SGLang's `--mem-fraction-static`, vLLM's
`--gpu-memory-utilization`, LMDeploy's `--cache-max-entry-count`, TensorRT-LLM's
`--kv_cache_free_gpu_memory_fraction` (each engine's `memory_fraction_flag`). `flag_alternative`
searches that share, on two decimals as an operator types it, for the restart that holds what
stopping the process would give back (the least share that does), else the most tokens it safely
can. Safely means:

- the engine starts with it (`EngineDiagnosis.restart_ledger`: vLLM refuses a share above what is free);
- its runtime reserve stays within kvtop's own tolerance (`Thresholds.reserve_excess_bytes`) of the
  reserve the engine keeps itself, where the engine states one (SGLang's automatic fraction): a share
  `reserve_below_engines_own` would warn about is never proposed;
- where the engine states no reserve of its own (LMDeploy, TensorRT-LLM), the share is not raised
  above the launch's or the engine's default, whichever is larger: kvtop cannot price what their
  runtime needs beyond it.

Every figure is the engine's own arithmetic re-solved by `whatif.Replay` on the GPUs as they are now
(the engine's workers gone, the co-tenant kept): the alternative is offered only where it holds more
than a restart with the flags as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from kvtop.domain.diagnose_findings import AlternativeLimit, FlagAlternative
from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_change import change_words
from kvtop.domain.ledger import Ledger

if TYPE_CHECKING:
    from kvtop.domain.diagnose_engine import EngineOnNode
    from kvtop.domain.diagnose_findings import Thresholds

#: The share's grid: hundredths, as operators type it (and as vLLM's start check names the share that fits).
SHARE_STEPS = 100


def flag_alternative(
    engine: EngineOnNode, pids: tuple[int, ...], freed: Mapping[int, int], thresholds: Thresholds
) -> FlagAlternative | None:
    """The memory flag that holds the most tokens a restart can with the processes `pids` (holding `freed`
    bytes per GPU) left running, up to what stopping them gives back; None where no share beats a plain
    restart."""
    ledger, replay = engine.ledger, engine.replay
    if ledger is None or replay is None or not engine.clean:
        return None
    rules = engine.rules
    field = rules.memory_fraction_field
    if field is None:  # the engine takes no share of memory: no flag to move
        return None
    left = engine.now()  # free at a restart: the engine's workers gone, the processes still there
    stopped = {g: free + freed.get(g, 0) for g, free in left.items()}
    stopped_tokens = engine.restart_capacity(stopped)
    as_launched = rules.diagnosis.restart_ledger(replay, left, ledger.settings)
    restart_tokens = as_launched.token_capacity if as_launched is not None else 0
    own = replay.solve(_with(ledger.settings, field, None))
    ceiling = max(ledger.engine.memory_fraction, own.engine.memory_fraction if own else 0.0)
    memo: dict[int, Ledger | None] = {}

    def at(steps: int) -> Ledger | None:
        if steps not in memo:
            settings = _with(ledger.settings, field, steps / SHARE_STEPS)
            memo[steps] = None if settings is None else rules.diagnosis.restart_ledger(replay, left, settings)
        return memo[steps]

    def safe(steps: int) -> bool:
        solved = at(steps)
        if solved is None or solved.engine.reserve_short_bytes >= thresholds.reserve_excess_bytes:
            return False
        return solved.engine.reserve_needed_bytes is not None or steps / SHARE_STEPS <= ceiling + 1e-9

    top = _last(1, SHARE_STEPS - 1, safe)
    if top is None:
        return None
    best, limit = top, _limit_of(top, at, safe)
    if _tokens(at(top)) >= stopped_tokens:  # the least share that gives back all of it
        least = _last(1, top, lambda steps: _tokens(at(steps)) < stopped_tokens)
        best, limit = (least + 1 if least is not None else 1), AlternativeLimit.REACHED
    solved = at(best)
    if solved is None or _tokens(solved) <= restart_tokens:
        return None
    moved = _with(ledger.settings, field, best / SHARE_STEPS)
    return FlagAlternative(
        engine_id=engine.id, engine_name=rules.display_name, pids=pids, flag=rules.memory_fraction_flag, share=best / SHARE_STEPS, tokens=_tokens(solved),
        restart_tokens=restart_tokens, stopped_tokens=stopped_tokens,
        reserve_bytes=solved.engine.reserve_bytes, reserve_needed_bytes=solved.engine.reserve_needed_bytes,
        limit=limit, settings=solved.settings, words=change_words(ledger.settings, moved) if moved is not None else "",
    )  # fmt: skip


def _with(settings: LaunchSettings, field: str, share: float | None) -> LaunchSettings | None:
    """`settings` with the engine's share moved, validated again (None: a share the engine refuses)."""
    try:
        return LaunchSettings.model_validate({**settings.model_dump(), field: share})
    except (KvtopError, ValueError):
        return None


def _tokens(solved: Ledger | None) -> int:
    return solved.token_capacity if solved is not None and solved.engine.fits else 0


def _last(low: int, high: int, holds: Callable[[int], bool]) -> int | None:
    """The largest step in [low, high] where `holds` (true up to some step, false after), else None."""
    found = None
    while low <= high:
        middle = (low + high) // 2
        if holds(middle):
            found, low = middle, middle + 1
        else:
            high = middle - 1
    return found


def _limit_of(top: int, at: Callable[[int], Ledger | None], safe: Callable[[int], bool]) -> AlternativeLimit:
    """Why `top` is the largest safe share: the next one does not start, or takes the reserve, or the ceiling."""
    if top + 1 >= SHARE_STEPS:
        return AlternativeLimit.OWN_SHARE
    beyond = at(top + 1)
    if beyond is None:
        return AlternativeLimit.START
    if beyond.engine.reserve_needed_bytes is not None:
        return AlternativeLimit.RESERVE
    return AlternativeLimit.OWN_SHARE
