"""Engines seen only through their own metrics, joined across nodes by the ranks their series name.

Where no kvtop exporter runs, the engine's own `/metrics` (`vllm:`, `sglang:` series scraped straight from
it) are all the cluster view has: each series names its model and the rank it speaks for, read by the
engine's own rule (`engine_rules(kind).span_rule.metrics_rank`). An engine's ranks are global, so the
parts of one engine on several instances name disjoint ranks and only one part names its first rank
(every rank 0). Parts of one model, role and deployment label join into one engine when no two name the
same rank and at most one names the first. When two engines serve the model (two first ranks) a part
without the first rank cannot be told to belong to either: it stays its own engine, saying why, never
guessed. Nothing here names an engine.

What the series say is all that is shown: the engine's layout from the highest rank named on each axis
its series name (an axis they do not name is said to be unknown), and its tightest rank only where the
series state each rank's capacity (vLLM's per engine core, SGLang's per scheduler) and one rank holds
fewer tokens than every other; no GPU, since an engine's own series name none.
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
Position = tuple[int, int, int]


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
    axes: MetricsRank  # its first series' rank: the axes the engine's series name, and those only partly
    positions: set[Position] = field(default_factory=set)
    tokens: dict[Position, int] = field(default_factory=dict)  # each rank's capacity, where a series states it
    usage: float | None = None

    @property
    def head(self) -> bool:
        """It names the engine's first rank."""
        return FIRST in self.positions

    def add(self, sample: MetricsSample) -> None:
        position = sample.rank.position
        if sample.states_capacity:
            held = self.tokens.get(position)
            self.tokens[position] = int(sample.value) if held is None else min(held, int(sample.value))
        else:
            self.usage = max(sample.value, self.usage if self.usage is not None else sample.value)


def join_metric_samples(samples: Iterable[MetricsSample]) -> list[EnginePiece]:
    """Every engine's parts as pieces: one engine's pieces share a span (`EngineSpan.join_key`). A series
    that names no model (vLLM's `cache_config_info`) belongs to its instance's part naming the same rank."""
    groups: dict[tuple[str, str, ServingRole, str | None], dict[str, _Part]] = {}
    unnamed: list[MetricsSample] = []
    for sample in samples:
        rank = sample.rank
        if not rank.served_model:
            unnamed.append(sample)
            continue
        key = (rank.kind, rank.served_model, rank.role, rank.deployment)
        parts = groups.get(key)
        if parts is None:
            parts = groups[key] = {}
        part = parts.get(sample.instance)
        if part is None:
            part = parts[sample.instance] = _Part(node=sample.node, instance=sample.instance, axes=rank)
        part.positions.add(rank.position)
        part.add(sample)
    on_instance: dict[tuple[str, str, ServingRole, str | None], list[_Part]] = {}
    for (kind, _, role, deployment), parts in groups.items() if unnamed else ():
        for instance, part in parts.items():
            on_instance.setdefault((instance, kind, role, deployment), []).append(part)
    for sample in unnamed:
        rank = sample.rank
        owners = [part for part in on_instance.get((sample.instance, rank.kind, rank.role, rank.deployment), ())
                  if rank.position in part.positions]  # fmt: skip
        if len(owners) == 1:  # else no series of its instance names the model of that rank: left out
            owners[0].add(sample)
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
        layout, tightest = metrics_layout(ordered), _tightest(ordered)
        return [
            _piece(part, span.model_copy(update={"node_rank": first + index, "serves_api": part.head}), shown,
                   layout, tightest)
            for index, part in enumerate(ordered)
        ]  # fmt: skip
    others = [part for part in parts if not part.head]
    if not others or (disjoint and not heads):  # replicas of one model, or one part: each its own engine
        return [_piece(part, base, shown, metrics_layout([part]), _tightest([part])) for part in parts]

    def why(part: _Part) -> str:
        if len(heads) > 1:
            return (f"{len(heads)} engines serve {base.served_model} and no label tells which one ranks "
                    f"{_ranks_label(sorted(part.positions), shown)} here belong to")  # fmt: skip
        return f"its parts of {base.served_model} on several instances name the same ranks: not one engine's"

    return [_piece(part, base if part.head else base.model_copy(update={"not_modelled": why(part)}), shown,
                   metrics_layout([part]) if part.head else None, _tightest([part]))
            for part in parts]  # fmt: skip


def metrics_layout(parts: Sequence[_Part]) -> str:
    """The engine's layout as its series name it: 'TP16 DP16 (DP attention)'; 'DP4, TP, PP not reported' where its
    series do not name an axis (vLLM's name only the engine core's DP rank; 'layout not reported' where they name
    none), as the other not-known states are said, never a bare 'TP?'. An axis counts its highest rank + 1
    where the ranks named on it run 0… without a gap, else at least that ('TP≥13'); on an axis where only
    some ranks report (`MetricsRank.partial_axes`) rank 0 alone says nothing ('TP not reported'). DP ranks that are no
    grid with the TP ranks live inside the TP group (SGLang's DP attention)."""
    positions = {p for part in parts for p in part.positions}
    named, partial = parts[0].axes.named_axes, parts[0].axes.partial_axes
    counts: dict[str, str] = {}
    sizes = []
    for axis, index in zip(_AXES, range(3), strict=True):
        seen = {p[index] for p in positions}
        sizes.append(len(seen))
        top = max(seen)
        if axis != "DP" and (axis not in named or (axis in partial and top == 0)):
            counts[axis] = f"{axis}?"
        elif top > 0:
            counts[axis] = f"{axis}{top + 1}" if len(seen) == top + 1 else f"{axis}≥{top + 1}"
    grid = len(positions) == sizes[0] * sizes[1] * sizes[2]
    tp = _tp_of_dp_groups(positions) if parts[0].axes.dp_inside_tp else None
    if tp is not None:  # every DP group seen: the TP group is their count × the width of one
        counts["TP"] = f"TP{tp}"
    unsaid = [axis for axis in ("TP", "PP") if counts.get(axis) == f"{axis}?"]
    text = " ".join(counts[axis] + (" (DP attention)" if axis == "DP" and not grid else "")
                    for axis in ("TP", "PP", "DP") if axis in counts and axis not in unsaid)  # fmt: skip
    if not unsaid:
        return text or "TP1"
    if not text:  # nothing the series name: the layout, not a size of 1
        return "layout not reported" if len(unsaid) == 2 else f"{unsaid[0]} not reported"
    return f"{text}, {', '.join(unsaid)} not reported"


def _tp_of_dp_groups(positions: set[Position]) -> int | None:
    """The TP size when DP ranks are attention-DP groups inside it (`MetricsRank.dp_inside_tp`): the groups
    named run 0…n-1 and each rank's group is tp_rank // w, w the first TP rank of group 1 (every group is w
    ranks wide), so TP = n × w however few of a group's ranks report; None when the ranks do not say."""
    groups = {dp for dp, _, _ in positions}
    second = [tp for dp, _, tp in positions if dp == 1]
    if len(groups) < 2 or groups != set(range(len(groups))) or not second or min(second) < 1:
        return None
    width = min(second)
    return len(groups) * width if all(tp // width == dp for dp, _, tp in positions) else None


def _tightest(parts: Sequence[_Part]) -> tuple[_Part, Position] | None:
    """The rank holding fewer tokens than every other rank the series state (None: none clearly)."""
    held = sorted((tokens, position, index) for index, part in enumerate(parts)
                  for position, tokens in part.tokens.items())  # fmt: skip
    if len(held) < 2 or held[0][0] == held[1][0]:
        return None
    return parts[held[0][2]], held[0][1]


def _piece(part: _Part, span: EngineSpan, shown: Sequence[str], layout: str | None,
           tightest: tuple[_Part, Position] | None) -> EnginePiece:  # fmt: skip
    tokens = min(part.tokens.values()) if part.tokens else None
    rank = _rank_name(tightest[1], part.axes.named_axes) if tightest and tightest[0] is part else None
    return EnginePiece(
        node=part.node, instance=part.instance, engine_id=part.instance, span=span, layout=layout,
        ranks_here=len(part.positions), ranks_label=_ranks_label(sorted(part.positions), shown),
        capacity={CapacitySource.LIVE.value: tokens} if tokens is not None else {},
        kv_usage_fraction=part.usage, engine_metrics_only=True, tightest_rank=rank, tightest_clear=rank is not None,
    )  # fmt: skip


def _rank_name(position: Position, named_axes: Sequence[str]) -> str:
    """kvtop's rank name over the axes the series name: 'dp3-tp3-pp0', vLLM's engine core 'dp1'."""
    dp, pp, tp = position
    return "-".join(name for axis, name in (("DP", f"dp{dp}"), ("TP", f"tp{tp}"), ("PP", f"pp{pp}"))
                    if axis in named_axes)  # fmt: skip


def _ranks_label(positions: Sequence[Position], shown: Sequence[str]) -> str:
    """'DP0–DP3', 'DP8–DP15 TP8–TP15': the axes any rank of the engine is not 0 on (else 'rank 0')."""
    parts = []
    for axis, index in zip(_AXES, range(3), strict=True):
        if axis in shown:
            low, high = min(p[index] for p in positions), max(p[index] for p in positions)
            parts.append(f"{axis}{low}" if low == high else f"{axis}{low}–{axis}{high}")
    return " ".join(parts) or "rank 0"
