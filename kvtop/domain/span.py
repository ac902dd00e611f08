"""Which engine a launch on one node belongs to, and that node's place in it.

An engine can span nodes (SGLang `--nnodes 2 --node-rank 1 --dist-init-addr 10.0.0.1:5000`, vLLM
`--nnodes 2 --node-rank 1 --master-addr 10.0.0.1 --headless`) or be one half of a disaggregated pair
(`--disaggregation-mode prefill`). Each engine package reads its own flags into an `EngineSpan`
(`engine_rules(kind).span_rule.span(settings)`, asked by `kvtop.domain.placement.span_of`); the cluster joins launches whose `join_key` is equal
into one engine, and prefill and decode engines whose `pair_key` is equal into one disaggregated group.
Nothing here names an engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.errors import InputError, LayoutError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_tokens import switch_in
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.redact import quoted


class ServingRole(str, Enum):
    """What part of serving an engine does (disaggregated serving splits prefill from decode)."""

    WHOLE = "whole"  # prefill and decode in one engine
    PREFILL = "prefill"
    DECODE = "decode"


class EngineSpan(BaseModel):
    """What one node's launch says about the engine it belongs to."""

    model_config = ConfigDict(frozen=True)

    kind: str  # the engine's id (kvtop.domain.engines.registry)
    served_model: str | None = None  # the name clients ask for: --served-model-name, else the model
    rendezvous: str | None = None  # the address every node of a multi-node engine names (None: one node)
    nnodes: int = 1
    node_rank: int = 0
    serves_api: bool = True  # this node runs the engine's HTTP API (node rank 0, not a headless node)
    role: ServingRole = ServingRole.WHOLE
    transfer: str | None = None  # the KV transfer path between prefill and decode (NIXL, Mooncake, LMCache…)
    not_modelled: str | None = None  # why kvtop cannot join this launch with its other nodes

    @property
    def spans_nodes(self) -> bool:
        """Whether the engine runs on several nodes and kvtop can join them."""
        return self.nnodes > 1 and self.rendezvous is not None and self.not_modelled is None

    def join_key(self, local_id: str) -> tuple[str, ...]:
        """Launches with equal keys are one engine: a multi-node engine by its rendezvous, served model
        and node count; any other by `local_id` (its node and kvtop's engine id there)."""
        if self.spans_nodes:
            return ("span", self.kind, self.rendezvous or "", self.served_model or "", str(self.nnodes))
        return ("local", local_id)

    @property
    def no_api_reason(self) -> str | None:
        """Why this node serves no engine API (None: it serves one)."""
        if self.serves_api:
            return None
        if self.nnodes > 1:
            return f"node rank {self.node_rank} of {self.nnodes} runs no API server: the engine's is on node rank 0"
        return "a headless launch runs no API server"

    @property
    def pair_key(self) -> tuple[str, ...] | None:
        """Prefill and decode engines with equal keys serve one model together (None: not disaggregated)."""
        if self.role is ServingRole.WHOLE or not self.served_model:
            return None
        return ("disaggregated", self.served_model)


class NodeLaunch(BaseModel):
    """What each node's launch over several nodes adds to the plan's engine-flags line, as the engine's span rule
    says it (`per_node`, the one reader for `kvtop plan`, its JSON `per_node` and the planner): node i's own flags in
    the engine's spelling, a host the launch does not name written as a placeholder the operator fills, and the same
    in words."""

    model_config = ConfigDict(frozen=True)

    nodes: int
    #: node i's flags (i = 0 … nodes − 1); empty where one launch starts every node (an MPI world)
    by_node: tuple[tuple[str, ...], ...] = ()
    #: the placeholders in them the operator replaces (the head's address, a port), as written
    placeholders: tuple[str, ...] = ()
    #: node flags the release's parser lacks (vLLM's --nnodes before v0.11.1): a line copied for it leaves them out,
    #: though the planner carries its node count in them
    unread_flags: tuple[str, ...] = ()
    said: str  # in words: 'on node i of 2 (0 … 1) add --node-rank i --master-addr HEAD …'


class MetricsRank(BaseModel):
    """Which rank of which engine one series of the engine's own metrics speaks for (no kvtop exporter on
    the node: `vllm:`/`sglang:` series scraped straight from the engine). Ranks are the engine's global
    ones, so two nodes' series of one engine never name the same rank."""

    model_config = ConfigDict(frozen=True)

    kind: str  # the engine's id (kvtop.domain.engines.registry)
    served_model: str
    role: ServingRole = ServingRole.WHOLE
    dp_rank: int = 0
    pp_rank: int = 0
    tp_rank: int = 0
    # a label the operator gave the engine's series to name its deployment (`DEPLOYMENT_LABEL`), if any
    deployment: str | None = None
    # the axes its series name ranks on (vLLM's engine core names only its DP rank: its TP and PP are not said)
    named_axes: tuple[str, ...] = ("DP", "PP", "TP")
    # the axes on which some ranks may not report (SGLang: only attention-TP rank 0 of each DP group, unless
    # `--enable-metrics-for-all-schedulers`): their highest rank seen is a least count, and rank 0 alone says nothing
    partial_axes: tuple[str, ...] = ()
    # its DP ranks are attention-DP groups inside the TP group, numbered tp_rank // (tp ÷ dp) (SGLang's DP attention)
    dp_inside_tp: bool = False

    @property
    def position(self) -> tuple[int, int, int]:
        return (self.dp_rank, self.pp_rank, self.tp_rank)


#: the label that names an engine's deployment where its metrics do not (set by Prometheus relabelling or,
#: for SGLang, `--extra-metric-labels '{"kvtop_engine": "10.0.0.1:5000"}'`): series with different values are
#: never one engine, whatever their ranks
DEPLOYMENT_LABEL = "kvtop_engine"


def label_count(labels: Mapping[str, str], name: str) -> int | None:
    """A rank label's whole number (0 when absent); None when it is no number (the series is not joined)."""
    text = labels.get(name, "0")
    return int(text) if text.isdigit() and len(text) <= 6 else None


class EngineSpanRule(Protocol):
    """How one engine spreads over nodes (each package's `span` module)."""

    #: the flags that say the launch is one node of several (a layout on one node has none of them)
    node_flags: frozenset[str]
    #: of those, the ones every node's launch carries alike (the node count): the plan's engine-flags line writes
    #: them back as typed; the others differ by node or name a host (`per_node` says them, never invents them)
    layout_flags: frozenset[str]

    def per_node(self, settings: LaunchSettings, nodes: int) -> NodeLaunch | None:
        """What each node's launch over `nodes` nodes needs beyond the plan's engine-flags line (its rank, the
        head's address), in the engine's own spelling; None on one node."""
        ...

    def span(self, settings: LaunchSettings) -> EngineSpan:
        """The engine this launch belongs to, from the engine's own flags."""
        ...

    def metrics_rank(self, labels: Mapping[str, str]) -> MetricsRank | None:
        """The rank one series of the engine's own Prometheus metrics speaks for, from its labels (None: its
        labels name no model, or the engine's metrics say nothing of ranks kvtop can join)."""
        ...

    def check_nodes(self, layout: ParallelLayout, nodes: int) -> None:
        """Raise LayoutError when the engine cannot lay `layout` over `nodes` nodes (its own rule)."""
        ...


def flag_text(settings: LaunchSettings, *spellings: str) -> str | None:
    """The first of `spellings` (without the leading dashes) the launch gave a value, as typed."""
    for spelling in spellings:
        value = settings.flags.get(spelling)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def flag_set(settings: LaunchSettings, spelling: str) -> bool:
    """Whether the launch gave the bare flag `--spelling` (or a true value for it)."""
    value = settings.flags.get(spelling)
    return value is True or (isinstance(value, str) and value.lower() in ("1", "true", "yes", "on"))


def flag_switch(settings: LaunchSettings, spelling: str) -> bool | None:
    """A switch argparse spells with and without `no-` (BooleanOptionalAction): False where the launch gave
    `--no-spelling` or `--spelling` at a false word (`launch_tokens.FALSE_WORDS`), True where it gave `--spelling`
    otherwise, None where it gave neither (the engine's default)."""
    given = switch_in(settings.flags, spelling)
    return None if given is None else given[0]


def flag_count(settings: LaunchSettings, spelling: str, default: int, *, least: int) -> int:
    """A whole number the launch gave `--spelling` (else `default`); below `least` or not a number is an
    InputError naming the flag."""
    text = flag_text(settings, spelling)
    if text is None:
        return default
    if not text.isdigit() or len(text) > 6 or int(text) < least:
        raise InputError(f"expected a whole number ≥ {least}, got {quoted(text)}", field=f"--{spelling}")
    return int(text)


def ranks_per_node(layout: ParallelLayout, nodes: int) -> int:
    """THE ranks (GPUs of the layout) each of `nodes` nodes runs, for every reader (the engines' span checks, the
    placement, the planner's node count): every engine kvtop models gives each node the same number of consecutive
    ranks (SGLang `_calculate_rank_ranges`, vLLM `global_start_rank = local_world_size × node_rank`, TensorRT-LLM's
    MPI ranks by host); a remainder is a LayoutError. Not the GPUs a node has (`Placement.gpus_per_node`,
    TensorRT-LLM's `Mapping.gpus_per_node`)."""
    if nodes < 1:
        raise LayoutError(f"must be at least 1 (got {nodes})", field="--nodes")
    if layout.gpus % nodes:
        raise LayoutError(
            f"{layout.describe()} runs {layout.gpus} GPUs, which do not split evenly over {nodes} nodes",
            field="--nodes",
        )
    return layout.gpus // nodes


def node_of_ranks(layout: ParallelLayout, nodes: int) -> tuple[int, ...]:
    """The node of each rank in the ledger's order (DP replica, pipeline stage, TP rank: TP fastest)."""
    per_node = ranks_per_node(layout, nodes)
    return tuple(index // per_node for index in range(layout.gpus))


def ranks_label(positions: Sequence[tuple[int, int, int]], *, show_dp: bool, show_pp: bool) -> str:
    """(dp, pp, tp) positions as ranges of the axes shown: 'PP1 TP0–TP7', 'DP0–DP1 TP0–TP3', 'TP8–TP15'."""
    if not positions:
        return "—"
    parts = []
    for axis, index, shown in (("DP", 0, show_dp), ("PP", 1, show_pp), ("TP", 2, True)):
        if shown:
            low, high = min(p[index] for p in positions), max(p[index] for p in positions)
            parts.append(f"{axis}{low}" if low == high else f"{axis}{low}–{axis}{high}")
    return " ".join(parts)
