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
from enum import Enum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger
from kvtop.domain.wording import gib

if TYPE_CHECKING:
    from kvtop.domain.diagnose import EngineOnNode
    from kvtop.domain.diagnose_rules import Thresholds

#: The share's grid: hundredths, as operators type it (and as vLLM's start check names the share that fits).
SHARE_STEPS = 100


class AlternativeLimit(str, Enum):
    """Why the alternative's share is not larger."""

    REACHED = "reached"  # it holds what stopping the processes gives back: no more is needed
    RESERVE = "reserve"  # a larger one takes the runtime reserve below the engine's own (kvtop's tolerance)
    START = "start"  # a larger one does not start (vLLM: less free than the share asks)
    OWN_SHARE = "own_share"  # the launch's or the engine's default share: kvtop cannot price more for the runtime

    def __str__(self) -> str:
        return self.value


class FlagAlternative(BaseModel):
    """A restart of `engine_id` with its memory flag at `share`, the processes left running."""

    model_config = ConfigDict(frozen=True)

    engine_id: str
    engine_name: str  # 'SGLang'
    pids: tuple[int, ...]  # the processes it leaves running
    flag: str  # the engine's own spelling: '--mem-fraction-static'
    share: float  # two decimals
    tokens: int  # tokens per rank that restart holds
    restart_tokens: int  # … a restart with the flags as they are (0: the engine would not start)
    stopped_tokens: int  # … a restart with the processes stopped (the finding's own fix)
    reserve_bytes: int  # the runtime reserve the share leaves on the tightest rank
    reserve_needed_bytes: int | None  # the reserve the engine keeps itself, where it states one
    limit: AlternativeLimit
    settings: LaunchSettings  # the launch with the share applied (the planner's "after")

    @property
    def fix(self) -> str:
        """'--mem-fraction-static 0.83'."""
        return f"{self.flag} {self.share:.2f}"

    @property
    def gain_tokens(self) -> int:
        """Tokens per rank it holds above a restart with the flags as they are."""
        return self.tokens - self.restart_tokens

    def describe(self) -> str:
        """The alternative with its price, as the findings pane and `diagnose` print it: 'keep pid 4242
        running and restart sglang:41000 with --mem-fraction-static 0.83: +22,750 tokens per rank over a
        restart as launched (1,142,838 against 1,120,088); runtime reserve 12.29 GiB, …'."""
        if self.restart_tokens:
            held = f"+{self.gain_tokens:,} tokens per rank over a restart as launched ({self.tokens:,} against {self.restart_tokens:,})"
        else:
            held = f"{self.tokens:,} tokens per rank (as launched it would not start)"
        reserve = f"runtime reserve {gib(self.reserve_bytes)}"
        if self.reserve_needed_bytes is not None:
            reserve += f" ({self.engine_name} keeps {gib(self.reserve_needed_bytes)} itself)"
        why = _LIMITS[self.limit].format(engine=self.engine_name)
        processes = ("pids " if len(self.pids) > 1 else "pid ") + ", ".join(map(str, self.pids))
        return f"keep {processes} running and restart {self.engine_id} with {self.fix}: {held}; {reserve}; {why}"


_LIMITS = {
    AlternativeLimit.REACHED: "it holds what stopping them gives back",
    AlternativeLimit.RESERVE: "a larger share takes the runtime reserve more than 1 GiB below {engine}'s own",
    AlternativeLimit.START: "{engine} does not start with a larger share on the memory free now",
    AlternativeLimit.OWN_SHARE: "not above the launch's or {engine}'s default share (kvtop cannot price the runtime beyond it)",
}


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
    return FlagAlternative(
        engine_id=engine.id, engine_name=rules.display_name, pids=pids, flag=rules.memory_fraction_flag, share=best / SHARE_STEPS, tokens=_tokens(solved),
        restart_tokens=restart_tokens, stopped_tokens=stopped_tokens,
        reserve_bytes=solved.engine.reserve_bytes, reserve_needed_bytes=solved.engine.reserve_needed_bytes,
        limit=limit, settings=solved.settings,
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
