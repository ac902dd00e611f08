"""An attention-free model's capacity (`ModelSpec.attention_free`: Mamba, Mamba2, FalconMamba): in requests, not tokens.

Every request holds one fixed state per layer (conv + SSM, the KV book's state pool) and no KV per token, so memory
bounds how many requests run at once, never how long they are. The figure is the engine's own: the state slots its
pool sized from memory (SGLang 0.5.23 `_handle_max_mamba_cache`, docs/engines/sglang.md §4.2), against its cap on
running requests. Tokens are not bounded by memory (`TokenBound`); an engine may still cap them by its own rule
(SGLang's token pool of `--max-total-tokens`, else the context length, at 0 B a token: `token_pool`).
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.base import EngineResult
from kvtop.domain.kv import KvBook

# what a plan's interval says for such a model: the calibrated interval spans tokens, which no memory bounds there
NO_REQUEST_INTERVAL = "none in requests yet: the calibrated interval spans tokens, which memory does not bound here"


class TokenBound(str, Enum):
    """What bounds a model's tokens: memory (the KV pool), or nothing kvtop's budgets hold (a state-only model)."""

    MEMORY = "memory"
    NOT_BOUNDED_BY_MEMORY = "not_bounded_by_memory"


class RequestCapacity(BaseModel):
    """One rank's capacity of an attention-free model, in requests."""

    model_config = ConfigDict(frozen=True)

    state_bytes_per_request: int  # every state layer of the rank: conv + SSM of one request
    requests_fit: int  # the state slots the engine's pool holds (sized from memory)
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
                           engine_cap=engine.max_running_requests, requests=requests,
                           token_pool=engine.token_capacity)  # fmt: skip
