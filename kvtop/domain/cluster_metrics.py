"""Engines seen only through their own metrics, joined across nodes by the ranks their series name.

Where no kvtop exporter runs, the engine's own `/metrics` (`vllm:`, `sglang:` series scraped straight from
it) are all the cluster view has: each series names its model and the rank it speaks for, read by the
engine's own rule (`engine_rules(kind).span_rule.metrics_rank`). An engine's ranks are global, so the
parts of one engine on several instances name disjoint ranks and only one part names its first rank
(every rank 0). Parts of one model, role and deployment label join into one engine when no two name the
same rank and at most one names the first. When two engines serve the model (two first ranks) a part
without the first rank cannot be told to belong to either: it stays its own engine, saying why, never
guessed. Nothing here names an engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from kvtop.domain.capacity import CapacitySource
from kvtop.domain.cluster_engines import EnginePiece
from kvtop.domain.span import EngineSpan, MetricsRank, ServingRole

FIRST = (0, 0, 0)
_AXES = ("DP", "PP", "TP")


class MetricsSample(NamedTuple):
    """One sample of an engine's own KV gauge: where it was scraped, the rank it speaks for, its figure
    (a named tuple: an SGLang cluster of 1,000 nodes reporting every scheduler holds 16,000 of them)."""

    node: str
    instance: str
    rank: MetricsRank
    value: float
    states_capacity: bool  # tokens per rank (else the share of KV in use, 0–1)


@dataclass(eq=False)
class _Part:
    """One instance's series of one engine while they are gathered."""

    node: str
    instance: str
    positions: set[tuple[int, int, int]] = field(default_factory=set)

    @property
    def head(self) -> bool:
        """It names the engine's first rank."""
        return FIRST in self.positions

    tokens: int | None = None
    usage: float | None = None


def join_metric_samples(samples: Iterable[MetricsSample]) -> list[EnginePiece]:
    """Every engine's parts as pieces: one engine's pieces share a span (`EngineSpan.join_key`)."""
    groups: dict[tuple[str, str, ServingRole, str | None], dict[str, _Part]] = {}
    for sample in samples:
        rank = sample.rank
        key = (rank.kind, rank.served_model, rank.role, rank.deployment)
        parts = groups.get(key)
        if parts is None:
            parts = groups[key] = {}
        part = parts.get(sample.instance)
        if part is None:
            part = parts[sample.instance] = _Part(node=sample.node, instance=sample.instance)
        part.positions.add((rank.dp_rank, rank.pp_rank, rank.tp_rank))
        if sample.states_capacity:
            part.tokens = min(int(sample.value), part.tokens if part.tokens is not None else int(sample.value))
        else:
            part.usage = max(sample.value, part.usage if part.usage is not None else sample.value)
    pieces: list[EnginePiece] = []
    for (kind, model, role, _), parts in sorted(groups.items(), key=lambda item: str(item[0])):
        pieces += _pieces(EngineSpan(kind=kind, served_model=model, role=role), list(parts.values()))
    return pieces


def _pieces(base: EngineSpan, parts: list[_Part]) -> list[EnginePiece]:
    heads = [part for part in parts if part.head]
    named = [position for part in parts for position in part.positions]
    disjoint = len(named) == len(set(named))
    shown = tuple(axis for axis, index in zip(_AXES, range(3), strict=True) if any(p[index] for p in named))
    if len(parts) > 1 and len(heads) <= 1 and disjoint:
        ordered = heads + sorted((p for p in parts if not p.head), key=lambda p: min(p.positions))
        first = 0 if heads else 1  # no part names rank 0: its node is unseen
        span = base.model_copy(update={"rendezvous": ordered[0].instance, "nnodes": len(ordered) + first})
        return [
            _piece(part, span.model_copy(update={"node_rank": first + index, "serves_api": part.head}), shown)
            for index, part in enumerate(ordered)
        ]
    others = [part for part in parts if not part.head]
    if not others or (disjoint and not heads):  # replicas of one model, or one part: each its own engine
        return [_piece(part, base, shown) for part in parts]

    def why(part: _Part) -> str:
        if len(heads) > 1:
            return (f"{len(heads)} engines serve {base.served_model} and no label tells which one ranks "
                    f"{_ranks_label(sorted(part.positions), shown)} here belong to")  # fmt: skip
        return f"its parts of {base.served_model} on several instances name the same ranks: not one engine's"

    return [_piece(part, base if part.head else base.model_copy(update={"not_modelled": why(part)}), shown)
            for part in parts]  # fmt: skip


def _piece(part: _Part, span: EngineSpan, shown: Sequence[str]) -> EnginePiece:
    return EnginePiece(
        node=part.node, instance=part.instance, engine_id=part.instance, span=span,
        ranks_here=len(part.positions), ranks_label=_ranks_label(sorted(part.positions), shown),
        capacity={CapacitySource.LIVE.value: part.tokens} if part.tokens is not None else {},
        kv_usage_fraction=part.usage,
    )  # fmt: skip


def _ranks_label(positions: Sequence[tuple[int, int, int]], shown: Sequence[str]) -> str:
    """'DP0–DP3', 'DP8–DP15 TP8–TP15': the axes any rank of the engine is not 0 on (else 'rank 0')."""
    parts = []
    for axis, index in zip(_AXES, range(3), strict=True):
        if axis in shown:
            low, high = min(p[index] for p in positions), max(p[index] for p in positions)
            parts.append(f"{axis}{low}" if low == high else f"{axis}{low}–{axis}{high}")
    return " ".join(parts) or "rank 0"
