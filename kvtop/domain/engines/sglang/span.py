"""How SGLang spreads one engine over nodes, and pairs prefill with decode (docs/engines/sglang.md §16).

One engine on N nodes is N launches of the same command with `--nnodes N --node-rank i` and the same
`--dist-init-addr HOST:PORT` (alias `--nccl-init-addr`), the rendezvous of its torch.distributed world:
that address, with the served model and N, names the engine. `_calculate_rank_ranges`
(python/sglang/srt/entrypoints/engine.py) gives node i the pipeline stages
`[pp_per_node · (i // nodes_per_stage), …)` and the TP ranks `[tp_per_node · (i % nodes_per_stage), …)`,
with `pp_per_node = max(pp // N, 1)`, `nodes_per_stage = max(N // pp, 1)`, `tp_per_node = tp //
nodes_per_stage`: consecutive ranks, stage by stage. Only node rank 0 runs the tokenizer and the HTTP
API; the others run their schedulers behind a health-check stub. `--disaggregation-mode prefill|decode`
makes the engine one side of a disaggregated pair, its KV sent over `--disaggregation-transfer-backend`
(default mooncake). NVIDIA Dynamo launches the same server arguments as `python -m dynamo.sglang`.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.span import (
    DEPLOYMENT_LABEL,
    EngineSpan,
    MetricsRank,
    NodeLaunch,
    ServingRole,
    flag_count,
    flag_text,
    label_count,
    ranks_per_node,
)

#: `--disaggregation-transfer-backend` words as the transfer libraries name themselves
TRANSFER_NAMES = {"mooncake": "Mooncake", "nixl": "NIXL", "ascend": "Ascend", "mori": "MORI", "fake": "none (fake)"}
DEFAULT_TRANSFER = "mooncake"  # ServerArgs.disaggregation_transfer_backend
#: the flags the span reads, accepted as typed when given to kvtop (they do not change a rank's memory)
FLAGS = frozenset({
    "--nnodes", "--node-rank", "--dist-init-addr", "--nccl-init-addr", "--served-model-name",
    "--disaggregation-mode", "--disaggregation-transfer-backend", "--disaggregation-bootstrap-port",
})  # fmt: skip
#: the flags of one node of several (`--nnodes N --node-rank i --dist-init-addr HOST:PORT`)
NODE_FLAGS = frozenset({"--nnodes", "--node-rank", "--dist-init-addr", "--nccl-init-addr"})
node_flags = NODE_FLAGS  # the protocol's name (EngineSpanRule.node_flags)
#: alike on every node: `--nnodes N` (docs.sglang.io references/multi_node_deployment/multi_node.html: both nodes'
#: commands carry `--tp 16 --nnodes 2`, only `--node-rank` differs); the address is the head's, not the layout's
layout_flags = frozenset({"--nnodes"})


def per_node(settings: LaunchSettings, nodes: int) -> NodeLaunch | None:
    """SGLang's node i of N: `--nnodes N --node-rank i --dist-init-addr HOST:PORT` (ServerArgs `nnodes`,
    `node_rank`, `dist_init_addr`; node rank 0's address and a free port, the same on every node)."""
    if nodes <= 1:
        return None
    count = () if flag_count(settings, "nnodes", 1, least=1) == nodes else ("--nnodes", str(nodes))
    typed = flag_text(settings, "dist-init-addr", "nccl-init-addr")
    address = typed or "HOST:PORT"
    said = (f"on node i of {nodes} (0 … {nodes - 1}) add {' '.join((*count, ''))}--node-rank i --dist-init-addr"
            f" {address} (node rank 0's address, the same on every node)")
    by_node = tuple((*count, "--node-rank", str(node), "--dist-init-addr", address) for node in range(nodes))
    return NodeLaunch(nodes=nodes, by_node=by_node, placeholders=() if typed else (address,), said=said)


def serving_role(settings: LaunchSettings) -> ServingRole:
    """The launch's side of a disaggregated pair (`--disaggregation-mode prefill|decode`), else the whole engine."""
    mode = flag_text(settings, "disaggregation-mode") or "null"
    return {"prefill": ServingRole.PREFILL, "decode": ServingRole.DECODE}.get(mode, ServingRole.WHOLE)


def span(settings: LaunchSettings) -> EngineSpan:
    """The engine this launch belongs to: its rendezvous, its node rank, its side of a pair."""
    nnodes = flag_count(settings, "nnodes", 1, least=1)
    node_rank = flag_count(settings, "node-rank", 0, least=0)
    rendezvous = flag_text(settings, "dist-init-addr", "nccl-init-addr")
    role = serving_role(settings)
    backend = (flag_text(settings, "disaggregation-transfer-backend") or DEFAULT_TRANSFER).lower()
    not_modelled = None
    if nnodes > 1 and rendezvous is None:
        not_modelled = f"--nnodes {nnodes} without --dist-init-addr: its nodes cannot be told apart"
    elif node_rank >= nnodes:
        not_modelled = f"--node-rank {node_rank} is not below --nnodes {nnodes}"
    return EngineSpan(
        kind="sglang", served_model=flag_text(settings, "served-model-name") or settings.model,
        rendezvous=rendezvous if nnodes > 1 else None, nnodes=nnodes, node_rank=node_rank,
        serves_api=node_rank == 0, role=role,
        transfer=TRANSFER_NAMES.get(backend, backend) if role is not ServingRole.WHOLE else None,
        not_modelled=not_modelled,
    )  # fmt: skip


#: `engine_type` of SGLang's metrics (`unified`, `prefill`, `decode`: its `--disaggregation-mode`)
ENGINE_TYPES = {"unified": ServingRole.WHOLE, "prefill": ServingRole.PREFILL, "decode": ServingRole.DECODE}


def metrics_rank(labels: Mapping[str, str]) -> MetricsRank | None:
    """SGLang's `/metrics` (`--enable-metrics`; python/sglang/srt/observability/metrics_collector.py) label
    each scheduler's series `model_name`, `engine_type`, `tp_rank`, `pp_rank` and, with DP attention,
    `dp_rank` — the engine's global ranks (tests/data/samples/sglang_metrics, DP8 DeepSeek-R1, 2025–26).
    Node ranks ≥ 1 serve them from their health-check server (`launch_dummy_health_check_server(…,
    enable_metrics)`, 2025 on; before, only node rank 0 served /metrics); only attention-TP rank 0 of each
    DP group reports unless `--enable-metrics-for-all-schedulers`. The first generation (2024-11, PR 1853)
    labelled `name` and no rank: rank 0. DP ranks are attention-DP groups of the TP group:
    `compute_dp_attention_world_info` (python/sglang/srt/layers/dp_attention.py) numbers them
    tp_rank // (attn_tp_size × attn_cp_size), so the group after rank 0's starts at TP rank tp ÷ dp."""
    model = labels.get("model_name") or labels.get("name")
    role = ENGINE_TYPES.get(labels.get("engine_type", "unified"))
    ranks = [label_count(labels, name) for name in ("dp_rank", "pp_rank", "tp_rank")]
    if not model or role is None or None in ranks:
        return None
    dp, pp, tp = (rank or 0 for rank in ranks)
    return MetricsRank(kind="sglang", served_model=model, role=role, dp_rank=dp, pp_rank=pp, tp_rank=tp,
                       deployment=labels.get(DEPLOYMENT_LABEL) or None, partial_axes=("TP",),
                       dp_inside_tp=True)  # fmt: skip


def check_nodes(layout: ParallelLayout, nodes: int) -> None:
    """SGLang's `_calculate_rank_ranges`: stages split over nodes, or nodes over stages; a stage's TP ranks
    split evenly over its nodes. DP replicas without DP attention are separate servers, one per replica."""
    ranks_per_node(layout, nodes)
    if nodes == 1:
        return
    per_replica = layout.nodes_per_replica(nodes)
    if layout.replicas > 1 and nodes % layout.replicas and layout.replicas % nodes:
        raise LayoutError(
            f"SGLang runs each of the {layout.replicas} DP replicas as its own server: "
            f"{nodes} nodes do not hold them evenly",
            field="--nodes",
        )
    if layout.replicas > 1 and per_replica == 1:
        return  # one or more whole replicas per node: each is a one-node server
    pp = layout.pp
    if (pp < per_replica and per_replica % pp) or (pp >= per_replica and pp % per_replica):
        raise LayoutError(
            f"SGLang splits the pipeline stages over the nodes or the nodes over the stages: "
            f"pp {pp} and {per_replica} nodes per replica do not divide",
            field="--nodes",
        )
    nodes_per_stage = max(per_replica // pp, 1)
    if layout.tp % nodes_per_stage:
        raise LayoutError(
            f"SGLang splits each stage's tp {layout.tp} over {nodes_per_stage} nodes: they do not divide",
            field="--nodes",
        )
