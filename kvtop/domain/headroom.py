"""What a rank has left once its KV pool is allocated, against what later phases will allocate there.

Engines size the pool at start; what runs later (activations at the largest batch the engine admits,
CUDA graphs captured after the pool, DeepEP buffers at the first MoE forward) has to fit in what is
left. `headroom_of` sets that beside the needs kvtop knows: the engine's own reserve rule where it has
one (SGLang's automatic share keeps room for its chunked prefill and graphs), and the deployment's
after-pool terms; a need kvtop cannot price is listed as not modelled, never counted as 0 bytes.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, computed_field

from kvtop.domain.deployment import BudgetTerm, Charge
from kvtop.domain.ledger import Ledger


class HeadroomNeed(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    bytes: int | None  # None: not modelled


class Headroom(BaseModel):
    """The tightest rank's memory after its pool, and what later phases need of it."""

    model_config = ConfigDict(frozen=True)

    left_bytes: int  # GPU total less context, weights, resident terms, KV pools and req_to_token
    needs: tuple[HeadroomNeed, ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def needed_bytes(self) -> int:
        """What the priced later phases need (in `plan --json`'s `deployment.headroom`, as a computed field)."""
        return sum(n.bytes for n in self.needs if n.bytes is not None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def short_bytes(self) -> int:
        """How far the memory left after the pool falls short of `needed_bytes` (0: it holds them)."""
        return max(0, self.needed_bytes - self.left_bytes)

    @property
    def unpriced(self) -> tuple[str, ...]:
        return tuple(n.label for n in self.needs if n.bytes is None)


def headroom_of(ledger: Ledger) -> Headroom | None:
    """The tightest rank's headroom: its runtime reserve against the reserve its engine's own rule needs and
    the deployment's after-pool terms (None: the layout does not fit, so no pool is allocated)."""
    if not ledger.engine.fits or not ledger.ranks:
        return None
    own = ledger.engine.reserve_needed_bytes
    needs = [HeadroomNeed(
        label="activations at the largest batch and CUDA graphs (the engine's own reserve)",
        bytes=ledger.engine.reserve_bytes if own is None else own,
    )]  # fmt: skip
    needs += [_need(term) for term in ledger.terms if term.charge is Charge.AFTER_POOL]
    return Headroom(left_bytes=ledger.engine.reserve_bytes, needs=tuple(needs))


def after_pool_short_bytes(ledger: Ledger) -> int:
    """How far the deployment's after-pool terms overrun what the pool leaves (the engine's own reserve
    shortfall is `EngineResult.reserve_short_bytes`, a finding of its own)."""
    headroom = headroom_of(ledger)
    if headroom is None:
        return 0
    after_pool = sum(n.bytes or 0 for n in headroom.needs[1:])
    return min(headroom.short_bytes, after_pool)


def _need(term: BudgetTerm) -> HeadroomNeed:
    return HeadroomNeed(label=term.label, bytes=term.bytes if term.modelled else None)
