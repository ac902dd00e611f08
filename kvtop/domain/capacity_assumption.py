"""A logged capacity that rests on a default the log does not state, as a typed value: what is assumed and the
figures it rests on (`CapacityAssumption`), carried by `Logged.capacity_assumption`; `assumption_words` is its one
wording, which the views (explain's text, `--engine-log`'s note) print and JSON leaves as data.

The one kind so far: TensorRT-LLM's `Number of blocks in KV cache primary pool: B` read as B × the engine build's
default tokens per block of the release kvtop takes, where the log states neither its release nor its tokens per
block (`engines/trtllm/primary_pool.py`; docs/engines/trtllm.md §4.2).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from kvtop.domain.engines.versions import VersionSource, parse_release
from kvtop.domain.redact import quoted

AssumptionKind = Literal["primary_pool_tokens_per_block"]


class ReleaseSpan(BaseModel):
    """The releases a default held in: from `first` up to, not including, `next`. None is an open end, never a
    word: `first` None is from the earliest release kvtop read, `next` None is still the default at the latest.
    Each given end is a release label `parse_release` reads ('0.19.0'), refused otherwise."""

    model_config = ConfigDict(frozen=True)

    first: str | None
    next: str | None

    @field_validator("first", "next")
    @classmethod
    def _a_release(cls, label: str | None) -> str | None:
        if label is not None and parse_release(label) is None:
            raise ValueError(f"not a release label: {quoted(label)}")
        return label


class OtherReading(BaseModel):
    """Another release's default and the capacity it would give: `blocks × tokens_per_block = tokens`."""

    model_config = ConfigDict(frozen=True)

    tokens_per_block: int
    releases: ReleaseSpan  # the releases whose builds took this default
    tokens: int


class CapacityAssumption(BaseModel):
    """`blocks` × `tokens_per_block`, the default of the release taken (`release`, found by `release_source`);
    `others` the other releases' readings; `settle_flags` the flags that would make it a fact."""

    model_config = ConfigDict(frozen=True)

    kind: AssumptionKind = "primary_pool_tokens_per_block"
    blocks: int
    tokens_per_block: int
    release: str  # the release's label ('~0.19.0', 'latest')
    release_source: VersionSource
    others: tuple[OtherReading, ...]
    settle_flags: tuple[str, ...]

    @property
    def tokens(self) -> int:
        """The capacity this reading gives."""
        return self.blocks * self.tokens_per_block


_WHY = {
    VersionSource.LOG: "its lines' wording points to",
    VersionSource.LOG_DATES: "out when its lines are dated",
    VersionSource.SERVER_ARGS: "its printed arguments point to",
    VersionSource.NOT_STATED: "kvtop takes when none is stated (the latest)",
}


def assumption_words(assumption: CapacityAssumption) -> str:
    """'assumed: 631 primary-pool blocks × 32 tokens per block, … builds before 0.19.0 took 64: 631 × 64 = 40,384
    (pass --engine-version or …)'."""
    a = assumption
    why = _WHY.get(a.release_source, "inferred")
    other = "; ".join(
        f"{_builds(o.releases)} took {o.tokens_per_block}: {a.blocks:,} × {o.tokens_per_block} = {o.tokens:,}"
        for o in a.others
    )
    return (
        f"assumed: {a.blocks:,} primary-pool blocks × {a.tokens_per_block} tokens per block, the engine build's "
        f"default at {a.release}, the release {why}; the log states neither its release nor "
        f"tokens_per_block, and {other} (pass {' or '.join(a.settle_flags)})"
    )


def _builds(span: ReleaseSpan) -> str:
    """'builds from 0.19.0', 'builds before 0.19.0', 'builds 0.9.0 to before 0.19.0' or 'every build'."""
    if span.first is not None and span.next is not None:
        return f"builds {span.first} to before {span.next}"
    if span.first is not None:
        return f"builds from {span.first}"
    return f"builds before {span.next}" if span.next is not None else "every build"
