"""How far a logged capacity lies outside the predicted interval, and what that figure is.

A verdict's gap is counted from the interval's nearer END, never from its centre: "MISMATCH by +131,488" read as
kvtop's error when the plan's centre lay further off (session 69's operator pass). `CapacityGap` names the end it is
counted from and carries the plan's centre and the log's figure beside it, so the text, the JSON and any view read
the one figure (`tokens_beyond`) and say what it is.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from kvtop.domain.errors import KvtopError
from kvtop.domain.wording import signed


class ReversedInterval(KvtopError):
    """A capacity gap asked of an interval whose low end lies above its high end: kvtop's own inconsistency (the plan
    made both ends), never the person's input, so no field is named; refused by name (never pydantic's raw
    ValidationError) on one line, which the CLI prints without a traceback. No figure of such an interval is a gap:
    its 'nearer end' is not defined."""

    def __init__(self, low: int, high: int) -> None:
        super().__init__(f"internal inconsistency: the plan's interval is reversed (its low end {low:,} tokens above "
                         f"its high end {high:,}), so no capacity gap is counted; please report it")  # fmt: skip


def tokens_beyond(logged: int, low: int, high: int) -> int:
    """Logged − the interval's nearer end: negative below `low`, positive above `high`, 0 inside."""
    return logged - low if logged < low else (logged - high if logged > high else 0)


class CapacityGap(BaseModel):
    """A logged capacity outside [low, high]: the distance to the end it passed, and to the plan's centre.

    Only a log outside the interval has one: a log inside it (a gap of zero) is "within", never a gap, so building
    one there is refused by validation (`capacity_gap_of` answers None for it); an interval whose ends are reversed is
    refused by name (`ReversedInterval`, not a ValueError, so pydantic passes it through unwrapped)."""

    model_config = ConfigDict(frozen=True)

    logged_tokens: int
    plan_tokens: int  # the central prediction (as the engine prints it)
    low_tokens: int
    high_tokens: int

    @model_validator(mode="after")
    def _outside(self) -> CapacityGap:
        if self.low_tokens > self.high_tokens:
            raise ReversedInterval(self.low_tokens, self.high_tokens)
        if self.low_tokens <= self.logged_tokens <= self.high_tokens:
            raise ValueError(f"the log's {self.logged_tokens:,} tokens lie within {self.low_tokens:,}–"
                             f"{self.high_tokens:,}: no capacity gap")  # fmt: skip
        return self

    @property
    def end(self) -> Literal["low", "high"]:
        return "low" if self.logged_tokens < self.low_tokens else "high"

    @property
    def end_tokens(self) -> int:
        return self.low_tokens if self.end == "low" else self.high_tokens

    @property
    def beyond_end_tokens(self) -> int:
        """The verdict's figure: logged − the interval's nearer end (`tokens_beyond`)."""
        return tokens_beyond(self.logged_tokens, self.low_tokens, self.high_tokens)

    @property
    def from_plan_tokens(self) -> int:
        """Logged − the plan's centre: how far the engine's figure lies from the figure `plan` states."""
        return self.logged_tokens - self.plan_tokens

    def words(self) -> str:
        """'+131,488 tokens from the interval's high end (log 1,431,488, interval 1,200,000–1,300,000; from the plan's
        1,250,000 the log is +181,488)': the figure, what it is counted from, and the plan's centre beside it."""
        return (f"{signed(self.beyond_end_tokens)} tokens from the interval's {self.end} end (log {self.logged_tokens:,}, "
                f"interval {self.low_tokens:,}–{self.high_tokens:,}; from the plan's {self.plan_tokens:,} the log is "
                f"{signed(self.from_plan_tokens)})")  # fmt: skip

    def as_json(self) -> dict[str, object]:
        """The named fields `explain --json` writes under "gap"; the figure itself is the top-level "gap_tokens" (the
        contract tests/domain/test_explain_cases.py reads, 0 too where only printed pool sizes disagree), not repeated."""
        return {
            "interval_end": self.end,
            "interval_end_tokens": self.end_tokens, "logged_tokens": self.logged_tokens,
            "plan_tokens": self.plan_tokens, "tokens_from_plan": self.from_plan_tokens, "words": self.words(),
        }  # fmt: skip


def capacity_gap_of(logged: int | None, plan: int | None, low: int | None, high: int | None) -> CapacityGap | None:
    """The capacity gap of a logged figure against an interval about a plan's centre; None where a figure is missing
    or the log lies within [low, high] (no gap). A reversed interval (low > high) is refused (`ReversedInterval`)."""
    if logged is None or plan is None or low is None or high is None or low <= logged <= high:
        return None
    return CapacityGap(logged_tokens=logged, plan_tokens=plan, low_tokens=low, high_tokens=high)
