"""What a start may charge beyond the plan where a cache kvtop cannot see before it is cold (vLLM's torch.compile
cache, docs/engines/vllm.md §2.6), as a typed value an engine's budget sets (`EngineResult.start_cache`).

The plan's capacity does not move for it (not modelled: whether a start finds the cache warm is not known before it);
a plan states it beside its terms (`CapacityPlan.start_notes`: `plan`'s text and JSON, the planner's pane). `words`
says the measured spread of cold less warm and its median in the plan's own tokens, read as the engine counts them
(`Ledger.tokens_in`: whole pages of the cell the capacity is solved with), so that the operator reads the cost in the
unit the capacity is in.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, model_validator

from kvtop.domain.wording import gib, gib_range


class SaidCacheState(Enum):
    """The cache's state where the operator said it (`plan --compile-cache`), as the start meets it; the engine's
    module words each (`StartCacheCharge.state_words`)."""

    COLD = "cold"  # said cold
    OVERRIDDEN_COLD = "overridden cold"  # said warm, but the launch turns the cache off: compiled cold
    WARM_UNCHARGED = "warm uncharged"  # said warm, where the engine charges nothing apart for the compile


class StartCacheCharge(BaseModel):
    """A cold start's excess over a warm one of the same launch and host, measured on kvtop's corpus: `least_bytes`
    to `most_bytes` a GPU, `median_bytes` their median; `cache` names the cache, `source` where the pairs are."""

    model_config = ConfigDict(frozen=True)

    cache: str  # "torch.compile's cache"
    least_bytes: int
    median_bytes: int
    most_bytes: int
    pairs: int  # the cold and warm pairs the figures are measured on
    source: str  # "docs/engines/vllm.md §2.6"
    # the cache's state where the operator said it; None: not known before a start
    state: SaidCacheState | None = None
    # each state's words, the engine's ('cold, as said (--compile-cache cold): …, the rest not modelled')
    state_words: tuple[tuple[SaidCacheState, str], ...] = ()
    # what the plan charges where the state is not said, the engine's words for the launch ('on vLLM's V1 runner the
    # plan charges nothing apart for the compile, …'); '' where the engine gives none: its fits sit between the two
    unsaid_words: str = ""

    @model_validator(mode="after")
    def _state_worded(self) -> StartCacheCharge:
        """A said state has the engine's words: never a state the note could not say."""
        if self.state is not None and self.state not in dict(self.state_words):
            raise ValueError(f"{self.cache}: no words for the said state {self.state.value!r}")
        return self

    def said(self) -> str:
        """The state's words where said, else 'not known before a start (not modelled)'."""
        unsaid = "not known before a start (not modelled)"
        return dict(self.state_words)[self.state] if self.state is not None else unsaid

    def spread(self) -> str:
        """'0.46–2.60 GiB a GPU': the least to the most excess measured (the plan's and `explain`'s words)."""
        return f"{gib_range(self.least_bytes, self.most_bytes)} a GPU"

    def median(self) -> str:
        """'0.98 GiB': the median excess a GPU (the plan's and `explain`'s words)."""
        return gib(self.median_bytes)

    def words(self, median_tokens: int | None) -> str:
        """'torch.compile's cache: not known before a start (not modelled); a first (cold) start on a node charged
        0.46–2.60 GiB a GPU more than a warm one on 9 pairs of kvtop's corpus (median 0.98 GiB, ≈ 36,688 tokens of this
        plan), …'; `median_tokens` the median read as the plan's tokens (`Ledger.tokens_in`; None or 0: no tokens to
        say). Unsaid, the hedge 'or nothing where its kernels were cached' and what the plan then charges
        (`unsaid_words`: the engine's, for the launch's runner). Where said, its `state`'s words (what the plan charges
        for that state) in place of 'not known before a start (not modelled)', and the measured spread without the
        hedge: the operator has said which start it is."""
        cost = f", ≈ {median_tokens:,} tokens of this plan" if median_tokens else ""
        measured = (f"a first (cold) start on a node charged {self.spread()} more than a warm one on {self.pairs} pairs "
                    f"of kvtop's corpus (median {self.median()}{cost})")  # fmt: skip
        if self.state is not None:
            return f"{self.cache}: {self.said()}; {measured}; {self.source}"
        charged = self.unsaid_words or "the plan's fitted figures sit between the two"
        return f"{self.cache}: {self.said()}; {measured}, or nothing where its kernels were cached; {charged} ({self.source})"
