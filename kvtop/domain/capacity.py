"""The capacity waterfall: from the clean prediction to what the engine holds, every step a named cause.

For each rank:

    clean   the engine's own allocation (its release's rules) on an empty GPU of this model and launch,
            without a token cap and without the deployment beside the model
    terms   one per cause, in this order, each re-solved by the engine's rules on top of the last:
            speculative draft → expert parallelism → encoder → LoRA   (the launch's deployment features,
                                                                      kvtop.domain.deployment: what each
                                                                      takes from the pool)
            other processes → hidden processes → orphaned workers   (bytes held on the engine's GPUs
                                                                      before it started: an engine
                                                                      sized by the least free GPU
                                                                      loses them on every rank)
            weights larger than predicted                            (what the engine reports)
            runtime reserve larger than predicted                    (the engine's own KV pool, where
                                                                      the engine budgets a share of
                                                                      the total)
            a cap (--max-total-tokens, a block override)
            unexplained                                              (the rest: actual − all above; shown
                                                                      "engine vs prediction", not bytes)
    actual  the engine's live figure, else the one its log printed, else the prediction

so that `clean + Σ terms == actual` exactly, in integer tokens. The state after every explained
term is the engine "as measured": the planner's before, and the basis every fix is priced on
(`kvtop.domain.whatif`). Page rounding is inside every figure: the engine floors each one to its page.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from kvtop.domain.wording import signed


class CapacityCause(str, Enum):
    """Why a rank holds fewer (or more) tokens than the clean prediction."""

    SPECULATIVE = "speculative"  # a draft's weights and KV, the engine's reserve for it (deployment.Feature)
    EXPERT_PARALLEL = "expert_parallel"  # EPLB's redundant experts, the engine's all-to-all reserve
    ENCODER = "encoder"  # a multimodal encoder's cache / profile peak
    LORA = "lora"  # LoRA adapter slots
    OTHER_PROCESSES = "other_processes"  # co-tenants and other engines' processes on the engine's GPUs
    HIDDEN_PROCESSES = "hidden_processes"  # pids kvtop cannot see (another PID namespace)
    ORPHANED_WORKERS = "orphaned_workers"  # engine workers whose server is gone
    WEIGHTS = "weights"  # the engine reports more resident weights than predicted
    RUNTIME_RESERVE = "runtime_reserve"  # the engine kept more outside its KV pool than predicted
    CAP = "cap"  # --max-total-tokens, --num-gpu-blocks-override
    # the engine's own figure, less everything above: one name in every view (the TUI, the snapshot, the metrics'
    # `cause` label), never "unexplained", which names the rank's bytes no predicted term holds
    ENGINE_VS_PREDICTION = "engine_vs_prediction"

    @property
    def label(self) -> str:
        """The cause as a person reads it: its id's words ("engine vs prediction": the engine's own token figure
        against kvtop's with every measured cause; never read for the rank's "unexplained bytes", worker memory no
        predicted term holds, `RankView.unexplained_bytes`: the demo's GPU 0 once said "unexplained +7,642" tokens
        beside an "unexplained" 0.00 GiB, and the metrics' cause="unexplained" beside kvtop_rank_unexplained_bytes)."""
        return self.value.replace("_", " ")


class CapacitySource(str, Enum):
    """Where a rank's actual capacity comes from."""

    LIVE = "live"  # the engine's endpoint said it now
    LOGGED = "logged"  # the engine's startup log printed it
    PREDICTED = "predicted"  # nothing said it: kvtop's prediction with every measured cause
    SIMULATED = "simulated"  # a demo node's (--demo): its scenario set it, no engine stated it, live or logged

    @classmethod
    def of_reading(cls, logged: bool, simulated: bool) -> CapacitySource:
        """Where an engine's own token figure comes from, decided once for every view: the startup log's where it
        printed it (`--engine-log`: a real file, on a demo node too); else a demo node's is the scenario's, never
        live (as its header's '● simulated'); else the endpoint's now."""
        if logged:
            return cls.LOGGED
        return cls.SIMULATED if simulated else cls.LIVE

    @property
    def stated(self) -> str:
        """Who states the figure, as a sentence's subject: 'the engine reports', 'the engine logged', 'the demo
        simulates', 'kvtop predicts': the views' own words (`capacity_said`)."""
        said = _SAID[self][0]
        return said if self is CapacitySource.PREDICTED else f"the {said}"


#: (long, compact) by who states an engine's own figure: the long form names who states it ("engine reports
#: 37,728"), the compact one qualifies it ("37,728 logged"). One wording for one fact (session 57 found four in the
#: views: "engine's log printed", "logged", "from the log", "engine logged"; session 58 a fifth in the findings and a
#: demo node's figure called "live"). A figure the log printed is the start's, a demo's the scenario's: never live.
_SAID = {
    CapacitySource.LIVE: ("engine reports", "live"),
    CapacitySource.LOGGED: ("engine logged", "logged"),
    CapacitySource.SIMULATED: ("demo simulates", "simulated"),
    CapacitySource.PREDICTED: ("kvtop predicts", "predicted"),  # every source has its words: no KeyError in a view
}


def capacity_said(source: CapacitySource, compact: bool = False) -> str:
    """'engine reports' / 'engine logged' / 'demo simulates' before an engine's own figure; compact: 'live' /
    'logged' / 'simulated' after it (every view: header, rank ledger, planner; the findings through `stated`)."""
    long, short = _SAID[source]
    return short if compact else long


class CapacityTerm(BaseModel):
    """One step of the waterfall: what a cause did to the rank's tokens (negative: fewer)."""

    model_config = ConfigDict(frozen=True)

    cause: CapacityCause
    tokens: int
    bytes: int = 0  # what the cause holds or adds (0 where it is not a byte figure)
    gpu_index: int | None = None  # the GPU the cause sits on (the least free one sizes every rank)
    pid: int | None = None  # the process behind it, when one process is

    def describe(self) -> str:
        """'other processes −128,660 (GPU 3, pid 4242)'."""
        where = ""
        if self.gpu_index is not None:
            where = f" (GPU {self.gpu_index}" + (f", pid {self.pid})" if self.pid else ")")
        return f"{self.cause.label} {signed(self.tokens)}{where}"


class CapacityWaterfall(BaseModel):
    """One rank's capacity, from the clean prediction to the actual figure, every token accounted for."""

    model_config = ConfigDict(frozen=True)

    clean_tokens: int
    terms: tuple[CapacityTerm, ...] = ()
    actual_tokens: int
    actual_source: CapacitySource

    @property
    def explained_tokens(self) -> int:
        """The prediction with every measured cause: clean + every term but the unexplained one."""
        return self.clean_tokens + sum(t.tokens for t in self.terms if t.cause is not CapacityCause.ENGINE_VS_PREDICTION)

    @property
    def change_tokens(self) -> int:
        """What the rank holds against the clean prediction: Σ terms (negative: fewer tokens)."""
        return self.actual_tokens - self.clean_tokens

    def describe(self) -> str:
        """'clean 1,255,785 → other processes −128,660 (GPU 3, pid 4242) → 1,127,125 live'."""
        steps = [f"clean {self.clean_tokens:,}", *(t.describe() for t in self.terms)]
        return " → ".join([*steps, f"{self.actual_tokens:,} {self.actual_source.value}"])

    def term(self, cause: CapacityCause) -> CapacityTerm | None:
        return next((t for t in self.terms if t.cause is cause), None)

    @property
    def largest_change(self) -> CapacityTerm | None:
        """The term that costs the most tokens, else (no term costs any) the one that adds the most: a rank
        holding more than its plan says why too (None when no term moves it)."""
        gains = [t for t in self.terms if t.tokens > 0]
        return self.largest_loss or (max(gains, key=lambda t: t.tokens) if gains else None)

    @property
    def plan_miss_fraction(self) -> float:
        """The engine's own figure against kvtop's prediction with every measured cause (the unexplained term),
        as a share of that prediction: +0.072 where the engine holds 7.2 % more (0.0 without a term)."""
        miss = self.term(CapacityCause.ENGINE_VS_PREDICTION)
        return miss.tokens / self.explained_tokens if miss is not None and self.explained_tokens > 0 else 0.0

    @property
    def largest_loss(self) -> CapacityTerm | None:
        """The term that costs the most tokens (None when nothing costs any)."""
        return largest_loss(self.terms)


class _Priced(Protocol):
    @property
    def tokens(self) -> int: ...


_PricedT = TypeVar("_PricedT", bound=_Priced)


def largest_loss(terms: Iterable[_PricedT]) -> _PricedT | None:
    """The step that costs the most tokens (None when none costs any): the one rule a rank's waterfall
    (`CapacityWaterfall.largest_loss`) and an engine's across nodes (`JoinedEngine.largest_loss`) pick by."""
    return min((t for t in terms if t.tokens < 0), key=lambda t: t.tokens, default=None)
