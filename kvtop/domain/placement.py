"""A ledger's ranks laid over N nodes of G GPUs, by the engine's own rule.

Every engine kvtop plans across nodes gives each node the same number of consecutive ranks in its
world order (DP replica, pipeline stage, TP rank; TP fastest): `kvtop.domain.span.node_of_ranks`.
The engine's package says which layouts it can lay over the nodes (`span_rule.check_nodes`: SGLang
splits stages over nodes or nodes over stages; LMDeploy across nodes is not modelled). A rank's memory
does not depend on its node: the ledger stays as solved, and the placement says where each rank runs.
`span_of` asks the engine's own rule which engine a launch belongs to (`kvtop.domain.span`'s `EngineSpan`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.catalogue import EngineId
from kvtop.domain.engines.registry import display_name, engine_rules
from kvtop.domain.errors import InputError, LayoutError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import Ledger, RankLedger
from kvtop.domain.span import EngineSpan, node_of_ranks, ranks_label, ranks_per_node
from kvtop.domain.wording import counted


class NodeRanks(BaseModel):
    """The ranks one node holds."""

    model_config = ConfigDict(frozen=True)

    node: int
    ranks: tuple[int, ...]  # indices into `Ledger.ranks`
    label: str  # 'PP1 TP0–TP7', 'DP2 TP0–TP7'


class Placement(BaseModel):
    """Which node runs each rank of a ledger."""

    model_config = ConfigDict(frozen=True)

    nodes: int
    gpus_per_node: int  # GPUs each node has (it may run fewer ranks)
    ranks_per_node: int  # the ranks each node runs (`span.ranks_per_node`)
    by_node: tuple[NodeRanks, ...]

    def node_of(self, rank: int) -> int:
        return next(n.node for n in self.by_node if rank in n.ranks)

    def describe(self) -> str:
        """'2 nodes × 8 GPUs (8 ranks each)'."""
        per = self.ranks_per_node
        used = f" ({counted(per, 'rank')} each)" if per != self.gpus_per_node else ""
        return f"{counted(self.nodes, 'node')} × {counted(self.gpus_per_node, 'GPU')}{used}"


def _label(ranks: list[RankLedger], ledger: Ledger) -> str:
    positions = [(r.dp_rank, r.pp_rank, r.tp_rank) for r in ranks]
    return ranks_label(positions, show_dp=ledger.layout.dp > 1, show_pp=ledger.layout.pp > 1)


def check_placement(
    engine: EngineId, layout: ParallelLayout, nodes: int, gpus_per_node: int | None = None
) -> tuple[int, int]:
    """(GPUs per node, ranks per node) of the layout on `nodes` nodes (GPUs: `gpus_per_node`, else just its ranks
    per node); a LayoutError naming --nodes or --gpus-per-node where the engine cannot lay it there. Checked before a
    plan is solved, so a layout too large for its nodes is named by its GPU count, not by what else it breaks."""
    engine_rules(engine).span_rule.check_nodes(layout, nodes)
    per_node = ranks_per_node(layout, nodes)
    gpus = per_node if gpus_per_node is None else gpus_per_node
    if gpus < 1:
        raise LayoutError(f"must be at least 1 (got {gpus})", field="--gpus-per-node")
    if per_node > gpus:
        raise LayoutError(
            f"{display_name(engine)} would run {per_node} ranks on each of {nodes} nodes, which have {gpus} GPUs",
            field="--gpus-per-node",
        )
    return gpus, per_node


def place(ledger: Ledger, nodes: int, gpus_per_node: int | None = None) -> Placement:
    """The ledger's ranks over `nodes` nodes of `gpus_per_node` GPUs (default: just the ranks each runs).

    A layout the engine cannot lay over the nodes, or more ranks per node than it has GPUs, is a
    LayoutError naming --nodes or --gpus-per-node."""
    layout = ledger.layout
    gpus, per_node = check_placement(ledger.settings.engine, layout, nodes, gpus_per_node)
    owners = node_of_ranks(layout, nodes)
    groups: list[list[int]] = [[] for _ in range(nodes)]
    for index, node in enumerate(owners):
        groups[node].append(index)
    by_node = tuple(
        NodeRanks(node=node, ranks=tuple(ranks), label=_label([ledger.ranks[i] for i in ranks], ledger))
        for node, ranks in enumerate(groups)
    )
    return Placement(nodes=nodes, gpus_per_node=gpus, ranks_per_node=per_node, by_node=by_node)


def span_of(kind: str, settings: LaunchSettings | None) -> EngineSpan:
    """The span the engine's own rule reads from its launch; without a launch, a one-node engine; a launch
    whose node flags cannot be read, an engine not joined, saying why."""
    if settings is None:
        return EngineSpan(kind=kind)
    try:
        return engine_rules(kind).span_rule.span(settings)
    except InputError as error:
        return EngineSpan(kind=kind, served_model=settings.model, not_modelled=str(error))
