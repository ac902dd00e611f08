"""What a plan states about memory the host holds, as typed figures (`host_memory.py` computes them): a unified-memory
host's assumed share and an engine's start against it, a desktop's share at the low end. `plan --json` reads these;
the prose `note` is the same figures in words."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, model_validator


class StartVerdict(str, Enum):
    """Whether an engine that asks a share of the total free at its start (vLLM's `request_memory`) starts where the
    host holds what it is assumed to: the most the host may hold against the assumed span (centre ± error)."""

    REFUSED_ACROSS_SPAN = "refused_across_span"  # the most the host may hold is below the span's low end
    REFUSED_AT_CENTRE = "refused_at_centre"  # below the centre, not below the low end
    REFUSED_AT_HIGH_END = "refused_at_high_end"  # started at the centre, refused at the high end
    STARTED_ACROSS_SPAN = "started_across_span"  # at or above the span's high end


class UnifiedHost(BaseModel):
    """A unified-memory host's share of the GPU's memory (the host's RAM), assumed."""

    model_config = ConfigDict(frozen=True)

    total_bytes: int  # CUDA's total: the host's memory
    held_bytes: int  # the assumed centre of what the host holds, the engine's context in it
    error_bytes: int  # the assumption's half-width
    charged: bool  # in the budget (the engine sizes from the free memory), else only said
    page_cache_free: bool = False  # the engine reads the kernel's available memory: the span leaves the page cache out
    start_needs_bytes: int | None = None  # what an engine that sizes from the total asks free at its start
    most_held_bytes: int | None = None  # the most the host may hold for that start: total − start_needs_bytes
    start_verdict: StartVerdict | None = None
    note: str


# the desktop's term of the interval, as the plan names it where it widens the interval most (`desktop_term`): both
# ends where the high end gives back what a desktop gave back during the profile, else the low end alone
DESKTOP_LABEL = "what a desktop sharing the GPU may take or give back"
DESKTOP_LOW_END_LABEL = "what a desktop sharing the GPU may take, at the low end only"


class DesktopHost(BaseModel):
    """A desktop (Windows, WSL2) sharing the card: not modelled, said, and taken at the interval's ends."""

    model_config = ConfigDict(frozen=True)

    low_end_bytes: (
        int  # what the low end takes off the free memory before the load (0: not charged, or measured)
    )
    note: str
    # what the low end takes as runtime memory beside weights and KV, for an engine that sizes from the total and reads
    # the device's free memory while it profiles (vLLM's non-torch memory): measured, 0 where none was
    profile_bytes: int = 0
    # what the high end gives back of that runtime memory: the most such a start left below its plan's runtime terms
    # (what a desktop gave back during the profile enters vLLM's non-KV memory with its sign), 0 where none was
    given_back_bytes: int = 0
    # an engine that asks a share of the total free at its start (vLLM's `request_memory`): what it asks, the most the
    # desktop may hold beyond a Linux start's context for it to start (total − context − that), and the verdict
    # against the most the corpus's desktops held beyond Linux (`held_span_bytes`): started across it, refused at its
    # high end, or refused across it (refused even with no desktop); None where the engine asks no such share
    start_needs_bytes: int | None = None
    most_held_bytes: int | None = None
    held_span_bytes: int = 0
    start_verdict: StartVerdict | None = None

    @property
    def label(self) -> str:
        """Its term's label: what it moves of the interval (`DESKTOP_LABEL` where the high end gives back)."""
        return DESKTOP_LABEL if self.given_back_bytes else DESKTOP_LOW_END_LABEL


class HostStart(BaseModel):
    """Whether an engine that sizes from the total starts on a unified-memory host holding its assumed share, and
    where it does not, the largest share of the total that does and the tokens it gives: the plan's one answer to
    'does it start?' that the headline, the interval, `plan --json` and the planner read (host_start.py builds it).
    What the start asks, the most the host may hold and the verdict are the host's (`UnifiedHost`), read, not copied."""

    model_config = ConfigDict(frozen=True)

    host: UnifiedHost  # the assumption and the start's need against it (host_memory.py), with a verdict
    fraction: float  # the share of the total the launch asks free at its start
    fraction_flag: str  # the engine's flag for it (`--gpu-memory-utilization`)
    starting_fraction: float | None = None  # the largest share that starts at the assumed centre (where it is refused)
    starting_tokens: int | None = None  # the capacity per rank at that share (0: the weights leave no KV)
    reason: str  # the verdict in words, with the figures

    @model_validator(mode="after")
    def _host_has_a_start(self) -> HostStart:
        if self.host.start_verdict is None or self.host.start_needs_bytes is None or self.host.most_held_bytes is None:
            raise ValueError("a start verdict needs a host whose start asks a share of the total free")
        return self

    @property
    def verdict(self) -> StartVerdict:
        return self.host.start_verdict or StartVerdict.STARTED_ACROSS_SPAN  # never None: the validator holds it

    @property
    def needs_bytes(self) -> int:
        """What the asked share asks free at the start (the engine's rule, `EngineRules.start_needs_bytes`)."""
        return self.host.start_needs_bytes or 0

    @property
    def most_held_bytes(self) -> int:
        """The most the host may hold for the asked share to start: the total less what it asks free."""
        return self.host.most_held_bytes or 0

    @property
    def left_bytes(self) -> int:
        """What the host leaves at the assumed centre."""
        return self.host.total_bytes - self.host.held_bytes

    @property
    def starts_at_centre(self) -> bool:
        """The launch starts where the host holds what it is assumed to (at the centre the verdict says 'may not
        start' otherwise; the headline is the capacity unless even the low end refuses, `refused_across_span`)."""
        return self.verdict in (StartVerdict.REFUSED_AT_HIGH_END, StartVerdict.STARTED_ACROSS_SPAN)

    @property
    def refused_in_span(self) -> bool:
        """Part of the assumed span refuses it: the interval's low end is a refusal (0 tokens)."""
        return self.verdict is not StartVerdict.STARTED_ACROSS_SPAN

    @property
    def refused_across_span(self) -> bool:
        """Every share the host is assumed to hold refuses it: the interval is 0 at both ends."""
        return self.verdict is StartVerdict.REFUSED_ACROSS_SPAN
