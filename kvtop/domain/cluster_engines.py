"""Engines across the cluster: each node's part of an engine joined into one engine, and disaggregated
prefill/decode engines grouped by the model they serve.

Each node's exporter reports its part of an engine (`EnginePiece`): the engine's identity as its launch
states it (`EngineSpan`), the tightest rank there and that rank's capacity waterfall. Pieces with equal
`EngineSpan.join_key` are one `JoinedEngine`. Its capacity is set by the tightest rank anywhere (every
engine kvtop models takes the least over its ranks: SGLang sizes every rank from the least free GPU of
the world, vLLM takes the least block count of its workers), so the engine's waterfall is the tightest
piece's: its clean prediction and measured causes, each named with its node, then what the engine itself
reports — from whichever node reports it (SGLang's node rank 0 serves the figure for every rank) — with
the rest unexplained. A cause on one node can so explain a loss another node's exporter could not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property

from pydantic import ConfigDict

from kvtop.domain.capacity import CapacityCause, CapacitySource, largest_loss
from kvtop.domain.fresh_copy import FreshCopyModel
from kvtop.domain.span import EngineSpan, ServingRole
from kvtop.domain.wording import percent, signed

#: Sources of `kvtop_rank_token_capacity` that are the engine's own figure, best first.
ENGINE_SOURCES = (CapacitySource.LIVE, CapacitySource.LOGGED, CapacitySource.SIMULATED)
EXPLAINED = "explained"
CLEAN = "clean"
PREDICTED = "predicted"


class _Frozen(FreshCopyModel):
    model_config = ConfigDict(frozen=True)


class EnginePiece(_Frozen):
    """One node's part of an engine, as that node's kvtop exporter reports it."""

    node: str
    instance: str
    engine_id: str  # kvtop's id on that node ("sglang:41000")
    span: EngineSpan
    layout: str | None = None  # "TP16", "TP8 PP2" (the whole engine's)
    ranks_here: int | None = None  # ranks of the engine on this node
    ranks_label: str | None = None  # 'TP8–TP15'
    context_length: int | None = None
    pools: int = 1  # KV pools of the whole engine (DP replicas × attention-DP ranks)
    tightest_rank: str | None = None  # 'dp0-tp11-pp0': the rank with the fewest tokens here
    tightest_gpu: str | None = None
    tightest_clear: bool = False  # the node's own rule found one GPU clearly least free (EngineView.tightest_rank)
    capacity: dict[str, int] = {}  # source ("clean", "explained", "predicted", "live", "logged", "simulated") → tokens
    terms: dict[CapacityCause, int] = {}  # the tightest rank's waterfall terms
    kv_usage_fraction: float | None = None
    engine_metrics_only: bool = False  # seen only through the engine's own metrics (no kvtop exporter)

    @property
    def explained_tokens(self) -> int | None:
        """The tightest rank's clean prediction with every cause this node measured (else the prediction)."""
        return self.capacity.get(EXPLAINED, self.capacity.get(PREDICTED))

    @property
    def engine_tokens(self) -> tuple[int, CapacitySource] | None:
        """The engine's own figure as this node reports it (live before logged; a demo node's simulated), if any."""
        for source in ENGINE_SOURCES:
            if source.value in self.capacity:
                return self.capacity[source.value], source
        return None


class ClusterTerm(_Frozen):
    """One step of an engine's waterfall across nodes: a cause, its tokens, and where it sits."""

    cause: CapacityCause
    tokens: int
    node: str | None = None  # None: the engine's own report less everything measured (unexplained)
    gpu: str | None = None

    def describe(self) -> str:
        where = f" ({self.node}" + (f" GPU {self.gpu})" if self.gpu else ")") if self.node else ""
        return f"{self.cause.label} {signed(self.tokens)}{where}"


class TightestRank(_Frozen):
    """The rank with the fewest tokens anywhere in the engine."""

    node: str
    gpu: str | None
    rank: str | None
    tokens: int
    clear: bool  # clearly the tightest: fewer tokens than every other node's part, or its node's least free GPU


class JoinedEngine(_Frozen):
    """One engine with every node's part of it (ordered by node rank)."""

    pieces: tuple[EnginePiece, ...]

    @property
    def span(self) -> EngineSpan:
        return self.pieces[0].span

    @property
    def name(self) -> str:
        """'sglang deepseek-r1 @10.0.0.1:5000', or the node-local id of a one-node engine."""
        span = self.span
        if span.spans_nodes:
            return f"{span.kind} {span.served_model or '?'} @{span.rendezvous}"
        piece = self.pieces[0]
        return f"{piece.engine_id} on {piece.node}"

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(piece.node for piece in self.pieces)

    @property
    def missing_node_ranks(self) -> tuple[int, ...]:
        """Node ranks the launch names that no exporter reported (their part is unknown)."""
        seen = {piece.span.node_rank for piece in self.pieces}
        return tuple(rank for rank in range(self.span.nnodes) if rank not in seen) if self.span.spans_nodes else ()

    @staticmethod
    def _rank_tokens(piece: EnginePiece) -> int | None:
        """The piece's tightest rank's tokens: kvtop's prediction, or (seen only through the engine's own
        metrics) the least its ranks' series state."""
        if piece.engine_metrics_only:
            return piece.capacity.get(CapacitySource.LIVE.value)
        return piece.explained_tokens

    @cached_property
    def _tightest_piece(self) -> EnginePiece | None:
        known = [p for p in self.pieces if self._rank_tokens(p) is not None]
        return min(known, key=lambda p: (self._rank_tokens(p) or 0, p.node)) if known else None

    @property
    def tightest(self) -> TightestRank | None:
        piece = self._tightest_piece
        tokens = self._rank_tokens(piece) if piece is not None else None
        if piece is None or tokens is None:
            return None
        others = [t for p in self.pieces if p is not piece and (t := self._rank_tokens(p)) is not None]
        below_all = bool(others) and all(tokens < other for other in others)
        return TightestRank(node=piece.node, gpu=piece.tightest_gpu, rank=piece.tightest_rank,
                            tokens=tokens, clear=piece.tightest_clear or below_all)  # fmt: skip

    @property
    def engine_metrics_only(self) -> bool:
        """Seen only through the engine's own metrics: no kvtop exporter reports any of its nodes."""
        return all(piece.engine_metrics_only for piece in self.pieces)

    @property
    def actual_source(self) -> str | None:
        """Where `actual` comes from, as a person reads it: 'live', 'logged', 'predicted', or 'engine metrics'
        (the engine's own series in Prometheus, no kvtop exporter on its nodes)."""
        actual = self.actual
        if actual is None:
            return None
        return "engine metrics" if self.engine_metrics_only else actual[1].value

    @property
    def tightest_unknown(self) -> str | None:
        """Why no tightest rank is named where that is not its ranks holding alike: 'not known from metrics'
        (its series state no rank's capacity, and name no GPU); None otherwise."""
        if self.tightest is None and self.engine_metrics_only:
            return "not known from metrics (its series state no rank's capacity)"
        return None

    @property
    def clean_tokens(self) -> int | None:
        piece = self._tightest_piece
        return piece.capacity.get(CLEAN) if piece else None

    @property
    def actual(self) -> tuple[int, CapacitySource] | None:
        """What the engine holds: the least of the figures its nodes report, else the tightest prediction."""
        reported = [r for p in self.pieces if (r := p.engine_tokens) is not None]
        if reported:
            return min(reported, key=lambda r: r[0])
        tightest = self.tightest
        return (tightest.tokens, CapacitySource.PREDICTED) if tightest else None

    @property
    def terms(self) -> tuple[ClusterTerm, ...]:
        """The waterfall from the clean prediction to `actual`: the tightest rank's measured causes (on its
        node), then what the engine's own figure leaves unexplained; clean + Σ tokens == actual."""
        piece, actual, clean = self._tightest_piece, self.actual, self.clean_tokens
        if piece is None or actual is None or clean is None:
            return ()
        measured = [
            ClusterTerm(cause=cause, tokens=tokens, node=piece.node, gpu=piece.tightest_gpu)
            for cause, tokens in sorted(piece.terms.items(), key=lambda item: list(CapacityCause).index(item[0]))
            if cause is not CapacityCause.ENGINE_VS_PREDICTION and tokens
        ]
        rest = actual[0] - clean - sum(t.tokens for t in measured)
        return (*measured, *([ClusterTerm(cause=CapacityCause.ENGINE_VS_PREDICTION, tokens=rest)] if rest else []))

    @property
    def largest_loss(self) -> ClusterTerm | None:
        """The step that costs the most tokens (None when none costs any; `capacity.largest_loss`, a rank's
        rule): the engine table's 'largest cause'."""
        return largest_loss(self.terms)

    def describe_waterfall(self) -> str:
        """'clean 1,255,785 → other processes −128,660 (node-b GPU 3) → 1,127,125 live'."""
        actual, clean = self.actual, self.clean_tokens
        if actual is None:
            return "no capacity reported"
        if clean is None:  # seen only through its own metrics: no kvtop exporter predicted it
            return f"{actual[0]:,} {self.actual_source}, the engine's own figure (no kvtop prediction to compare)"
        steps = [f"clean {clean:,}", *(t.describe() for t in self.terms)]
        return " → ".join([*steps, f"{actual[0]:,} {actual[1].value}"])

    @property
    def kv_usage_fraction(self) -> float | None:
        usage = [p.kv_usage_fraction for p in self.pieces if p.kv_usage_fraction is not None]
        return max(usage) if usage else None

    @property
    def full_context_requests(self) -> float | None:
        """Requests of the engine's full context length its pools hold at once."""
        actual, piece = self.actual, self.pieces[0]
        if actual is None or not piece.context_length:
            return None
        return actual[0] * piece.pools / piece.context_length


def join_engines(pieces: Iterable[EnginePiece]) -> tuple[JoinedEngine, ...]:
    """Pieces with equal join keys as one engine each, pieces by node rank; engines by name."""
    groups: dict[tuple[str, ...], list[EnginePiece]] = {}
    for piece in pieces:
        groups.setdefault(piece.span.join_key(f"{piece.node}/{piece.engine_id}"), []).append(piece)
    engines = [
        JoinedEngine(pieces=tuple(sorted(group, key=lambda p: (p.span.node_rank, p.node))))
        for group in groups.values()
    ]
    return tuple(sorted(engines, key=lambda e: e.name))


class DisaggregatedFinding(_Frozen):
    """The decode side's pools, not the prefill side's, limit how many requests run at once."""

    decode_requests: float  # full-context requests the decode pools hold
    prefill_requests: float
    tokens_short: int  # decode tokens missing to hold as many requests as the prefill side
    context_length: int
    message: str


class DisaggregatedGroup(_Frozen):
    """Prefill and decode engines serving one model, and the KV transfer path between them."""

    served_model: str
    prefill: tuple[JoinedEngine, ...]
    decode: tuple[JoinedEngine, ...]

    @property
    def transfer(self) -> tuple[str, ...]:
        """The KV transfer paths its engines name (NIXL, Mooncake, LMCache…)."""
        names = {e.span.transfer for e in (*self.prefill, *self.decode) if e.span.transfer}
        return tuple(sorted(names))

    @staticmethod
    def _requests(engines: Sequence[JoinedEngine]) -> float | None:
        counts = [e.full_context_requests for e in engines]
        return sum(c for c in counts if c is not None) if counts and all(c is not None for c in counts) else None

    @property
    def finding(self) -> DisaggregatedFinding | None:
        """When the decode pools hold fewer full-context requests than the prefill pools: every request
        keeps its whole KV on the decode side for its lifetime, so decode's pools cap concurrency."""
        decode, prefill = self._requests(self.decode), self._requests(self.prefill)
        context = next((p.context_length for e in self.decode for p in e.pieces if p.context_length), None)
        if decode is None or prefill is None or context is None or decode >= prefill:
            return None
        short = int((prefill - decode) * context)
        usage = max((u for e in self.decode if (u := e.kv_usage_fraction) is not None), default=None)
        now = f"; decode KV {percent(usage)} used now" if usage is not None else ""
        return DisaggregatedFinding(
            decode_requests=decode, prefill_requests=prefill, tokens_short=short, context_length=context,
            message=(f"decode pools hold {decode:,.1f} full-context requests of {context:,} tokens, prefill pools "
                     f"{prefill:,.1f}: decode limits concurrency ({short:,} decode tokens short{now})"),
        )  # fmt: skip


def group_disaggregated(engines: Iterable[JoinedEngine]) -> tuple[DisaggregatedGroup, ...]:
    """Prefill and decode engines with equal pair keys, as one group each (a lone side is still a group)."""
    sides: dict[tuple[str, ...], tuple[list[JoinedEngine], list[JoinedEngine], str]] = {}
    for engine in engines:
        key = engine.span.pair_key
        if key is None:
            continue
        prefill, decode, _ = sides.setdefault(key, ([], [], engine.span.served_model or "?"))
        (prefill if engine.span.role is ServingRole.PREFILL else decode).append(engine)
    return tuple(
        DisaggregatedGroup(served_model=name, prefill=tuple(prefill), decode=tuple(decode))
        for prefill, decode, name in sorted(sides.values(), key=lambda side: side[2])
    )
