"""An attention-free model's capacity (`ModelSpec.attention_free`: Mamba, Mamba2, FalconMamba): in requests, not tokens.

Every request holds one fixed state per layer (conv + SSM, the KV book's state pool) and no KV per token, so memory
bounds how many requests run at once, never how long they are. The figure is the engine's own: the state slots its
pool sized from memory (SGLang 0.5.23 `_handle_max_mamba_cache`, docs/engines/sglang.md §4.2), against its cap on
running requests. Tokens are not bounded by memory (`TokenBound`); an engine may still cap them by its own rule
(SGLang's token pool of `--max-total-tokens`, else the context length, at 0 B a token: `token_pool`).

A plan's requests carry the interval the memory budget's does (`RequestInterval`): the slots and the requests solved
at both ends of the calibrated budget, as the token interval is made for a model that holds KV.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.base import EngineResult
from kvtop.domain.kv import KvBook
from kvtop.domain.wording import spread


class TokenBound(str, Enum):
    """What bounds a model's tokens: memory (the KV pool), or nothing kvtop's budgets hold (a state-only model)."""

    MEMORY = "memory"
    NOT_BOUNDED_BY_MEMORY = "not_bounded_by_memory"


class RequestCapacity(BaseModel):
    """One rank's capacity of an attention-free model, in requests."""

    model_config = ConfigDict(frozen=True)

    state_bytes_per_request: int  # every state layer of the rank: conv + SSM of one request
    requests_fit: int  # the state slots the engine's pool holds (sized from memory)
    slots_per_request: int = 1  # the slots one running request takes (`EngineResult.state_slots_per_request`)
    engine_cap: int  # the engine's cap on running requests (its flag or its default)
    requests: int  # what runs at once: the smaller of the two
    token_pool: int  # the engine's own token figure (SGLang's pool; vLLM's logged blocks × max_model_len), not memory's
    tokens: TokenBound = TokenBound.NOT_BOUNDED_BY_MEMORY


def request_capacity(kv: KvBook, engine: EngineResult) -> RequestCapacity | None:
    """The rank's capacity in requests; None where the engine sized no state pool (it plans KV tokens)."""
    state = kv.state_bytes_per_request
    if not state or not engine.state_slots or not engine.fits:
        return None
    requests = min(engine.state_slots, engine.max_running_requests)
    return RequestCapacity(state_bytes_per_request=state, requests_fit=engine.state_slots,
                           slots_per_request=engine.state_slots_per_request,
                           engine_cap=engine.max_running_requests, requests=requests,
                           token_pool=engine.token_capacity)  # fmt: skip


class RequestInterval(BaseModel):
    """The requests an attention-free plan holds at both ends of its budget's interval, and the slots under them
    (0 at an end where the launch does not fit there)."""

    model_config = ConfigDict(frozen=True)

    requests: int  # at the centre
    requests_min: int
    requests_max: int
    slots_min: int  # the state slots the pool holds at the budget's low end
    slots_max: int
    engine_cap: int  # the engine's cap on running requests at the centre (SGLang's follows the slots)
    memory_requests_min: int = 0  # the requests the slots at the budget's low end hold (slots ÷ slots per request)

    @property
    def cap_binds(self) -> bool:
        """The engine's cap, not memory, sets the requests at both ends: the slots at the low end hold more requests
        than the cap (a cap the slots set, SGLang's slots ÷ its mamba ratio, is memory's)."""
        return self.requests_min == self.requests_max == self.engine_cap and self.memory_requests_min > self.engine_cap

    @property
    def spread_ends(self) -> tuple[int, int]:
        """How far the ends lie below and above the centre, in requests (the budget's arithmetic is not symmetric)."""
        return self.requests - self.requests_min, self.requests_max - self.requests

    @property
    def spread(self) -> int:
        """The half-width in requests (the wider side)."""
        return max(self.spread_ends)

    def words(self, mostly: str = "") -> str:
        """'900 – 1,024 requests (± 124) …; state slots 900 – 1,100': the interval as every view states it
        (`mostly`: the term that widens it, worded by the caller's view, e.g. ', mostly weights (calibrated)')."""
        slots = f"state slots {self.slots_min:,} – {self.slots_max:,}"
        if self.requests_max == 0:
            return f"0 requests at both ends: it does not fit even where its estimated inputs are kindest{mostly}"
        if self.cap_binds:
            return (f"{self.requests:,} requests at both ends: the engine's cap binds, not memory ({slots} fit"
                    f"{mostly})")  # fmt: skip
        return f"{self.requests_min:,} – {self.requests_max:,} requests ({spread(*self.spread_ends)}){mostly}; {slots} fit"


def request_interval(
    central: RequestCapacity, low: RequestCapacity | None, high: RequestCapacity | None
) -> RequestInterval:
    """The requests at the centre and at both ends (`low`, `high`: the capacities solved at the budget's ends, None
    where the launch does not fit there); each end the smaller and the larger of the three, as the token
    interval's are."""
    ends = (central, low, high)
    requests = [end.requests if end is not None else 0 for end in ends]
    slots = [end.requests_fit if end is not None else 0 for end in ends]
    by_memory = [end.requests_fit // end.slots_per_request if end is not None else 0 for end in ends]
    return RequestInterval(requests=central.requests, requests_min=min(requests), requests_max=max(requests),
                           slots_min=min(slots), slots_max=max(slots), engine_cap=central.engine_cap,
                           memory_requests_min=min(by_memory))  # fmt: skip
