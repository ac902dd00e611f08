"""What a rank has left once its KV pool is allocated, against what later phases will allocate there.

Engines size the pool at start; what runs later (activations at the largest batch the engine admits,
CUDA graphs captured after the pool, DeepEP buffers at the first MoE forward) has to fit in what is
left. `headroom_of` sets that beside the needs kvtop knows: the engine's own reserve rule where it has
one (SGLang's automatic share keeps room for its chunked prefill and graphs), and the deployment's
after-pool terms; a need kvtop cannot price is listed as not modelled, never counted as 0 bytes. Where the
engine keeps a reserve of its own for a feature (a `reserve` term: SGLang's draft reserve, by release in
engines/sglang/deployment_eras.py) that feature's after-pool terms count against that reserve, not on top of the
engine's own need. SGLang keeps its draft reserve for the draft's CUDA graphs too: kvtop does not price those, so
they are a named not-modelled need (engines/sglang/draft_graphs.py), and terms that fit the reserve may still overrun
it once they are captured. A given share (SGLang's explicit
--mem-fraction-static) emits no reserve term, but the reserve its engine's rule would keep (`reserve_needed_bytes`)
holds that feature's share all the same: the engine names it (`need_reserve_terms`), so the explicit and the
automatic launch of one fraction read one headroom.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, computed_field

from kvtop.domain.deployment import BudgetTerm, Charge, Feature
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.ledger import Ledger


class HeadroomNeed(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    bytes: int | None  # None: not modelled
    held_by: Feature | None = None  # the feature whose engine reserve (`Headroom.reserves`) it counts against


class HeadroomReserve(BaseModel):
    """The engine's reserve for one feature: that feature's after-pool needs count against it."""

    model_config = ConfigDict(frozen=True)

    label: str
    bytes: int
    feature: Feature


class Headroom(BaseModel):
    """The tightest rank's memory after its pool, and what later phases need of it."""

    model_config = ConfigDict(frozen=True)

    left_bytes: int  # GPU total less context, weights, resident terms, KV pools and req_to_token
    needs: tuple[HeadroomNeed, ...] = ()  # the first: the engine's own reserve, less `reserves`
    reserves: tuple[HeadroomReserve, ...] = ()  # the engine's reserves for a feature, each holding its feature's needs

    @computed_field  # type: ignore[prop-decorator]
    @property
    def needed_bytes(self) -> int:
        """What the priced later phases need (in `plan --json`'s `deployment.headroom`, as a computed field): each
        engine reserve for a feature counts as the larger of itself and the needs it holds."""
        free = sum(n.bytes for n in self.needs if n.bytes is not None and n.held_by is None)
        return free + sum(max(r.bytes, self.held_bytes(r)) for r in self.reserves)

    def held_bytes(self, reserve: HeadroomReserve) -> int:
        """What the priced needs `reserve` holds come to."""
        return sum(n.bytes for n in self.needs if n.bytes is not None and n.held_by is reserve.feature)

    def reserve_of(self, need: HeadroomNeed) -> HeadroomReserve | None:
        """The reserve `need` counts against (None: on top of the rest)."""
        return next((r for r in self.reserves if r.feature is need.held_by), None)

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
    after = [term for term in ledger.terms if term.charge is Charge.AFTER_POOL]
    features = {term.feature for term in after}
    inside = () if own is None else engine_rules(ledger.settings.engine).need_reserve_terms(ledger.settings, ledger.version)
    reserves = [t for t in (*ledger.terms, *inside)
                if t.charge is Charge.RESERVE and t.modelled and t.bytes and t.feature in features]  # fmt: skip
    kept = sum(t.bytes for t in reserves)
    needs = [HeadroomNeed(
        label="activations at the largest batch and CUDA graphs (the engine's own reserve"
        + (", less its reserve for what follows)" if reserves else ")"),
        bytes=max(0, (ledger.engine.reserve_bytes if own is None else own) - kept),
    )]  # fmt: skip
    held = tuple(HeadroomReserve(label=t.label, bytes=t.bytes, feature=t.feature) for t in reserves)
    held_features = {r.feature for r in held}
    needs += [_need(term, term.feature if term.feature in held_features else None) for term in after]
    return Headroom(left_bytes=ledger.engine.reserve_bytes, needs=tuple(needs), reserves=held)


def after_pool_short_bytes(ledger: Ledger) -> int:
    """How far the deployment's after-pool terms overrun what the pool leaves (the engine's own reserve
    shortfall is `EngineResult.reserve_short_bytes`, a finding of its own)."""
    headroom = headroom_of(ledger)
    if headroom is None:
        return 0
    after_pool = headroom.needed_bytes - (headroom.needs[0].bytes or 0)
    return min(headroom.short_bytes, after_pool)


def _need(term: BudgetTerm, held_by: Feature | None) -> HeadroomNeed:
    return HeadroomNeed(label=term.label, bytes=term.bytes if term.modelled else None, held_by=held_by)
