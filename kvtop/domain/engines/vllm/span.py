"""How vLLM spreads one engine over nodes, and pairs prefill with decode (docs/engines/vllm.md §11).

Multiprocessing across nodes (`vllm serve M --tensor-parallel-size 8 --pipeline-parallel-size 2
--nnodes 2 --node-rank i --master-addr HEAD [--master-port P]`, `--headless` on the others): the
`MultiprocExecutor` of node i starts the workers of global ranks `local_world_size · i + local_rank`,
ranks ordered pipeline stage by stage, TP fastest (vllm/v1/executor/multiproc_executor.py), so with
TP8 PP2 node 0 is stage 0 and node 1 stage 1. Data parallel across nodes (`--data-parallel-size D
--data-parallel-size-local L --data-parallel-start-rank S --data-parallel-address HEAD
--data-parallel-rpc-port P`, `--headless` on all but the head) runs L engine cores per node. The
master (or DP) address, the served model and the node count name the engine. A headless node runs no
API server. Ray places workers on other nodes as Ray actors with no vLLM command line: kvtop cannot
join those (said, not guessed). Disaggregated serving (NVIDIA Dynamo's `python -m dynamo.vllm
--disaggregation-mode prefill|decode`, the older `--is-prefill-worker`) moves KV over the connector
of `--kv-transfer-config` (NixlConnector, LMCacheConnectorV1, MooncakeConnector, P2pNcclConnector).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.rounding import ceil_div
from kvtop.domain.span import (
    DEPLOYMENT_LABEL,
    EngineSpan,
    MetricsRank,
    NodeLaunch,
    ServingRole,
    flag_count,
    flag_set,
    flag_text,
    label_count,
    ranks_per_node,
)

#: `kv_connector` of --kv-transfer-config (and Dynamo's older `--connector` words) → the transfer path
CONNECTORS = {
    "nixlconnector": "NIXL", "nixl": "NIXL", "lmcacheconnectorv1": "LMCache", "lmcacheconnector": "LMCache",
    "lmcache": "LMCache", "mooncakeconnector": "Mooncake", "mooncakeconnectorv1": "Mooncake",
    "mooncakestoreconnector": "Mooncake", "p2pncclconnector": "NCCL", "pyncclconnector": "NCCL",
}  # fmt: skip
#: `kv_role` of --kv-transfer-config: a producer prefills, a consumer decodes (kv_both says neither)
KV_ROLES = {"kv_producer": ServingRole.PREFILL, "kv_consumer": ServingRole.DECODE}
FLAGS = frozenset({
    "--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless", "--served-model-name",
    "--data-parallel-address", "--data-parallel-rpc-port", "--data-parallel-size-local",
    "--data-parallel-start-rank", "--distributed-executor-backend", "--kv-transfer-config",
})  # fmt: skip
#: the flags of one node of several: multiprocessing over nodes, data parallel over nodes (the module docstring)
NODE_FLAGS = frozenset({
    "--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless", "--data-parallel-address",
    "--data-parallel-rpc-port", "--data-parallel-size-local", "--data-parallel-start-rank",
})  # fmt: skip
node_flags = NODE_FLAGS  # the protocol's name (EngineSpanRule.node_flags)
#: alike on every node (docs/serving/parallelism_scaling.md: both nodes' commands carry `--nnodes 2`; with data
#: parallel over nodes both carry `--data-parallel-size-local L`); the rank, start rank and head address differ
layout_flags = frozenset({"--nnodes", "--data-parallel-size-local"})


def per_node(settings: LaunchSettings, nodes: int) -> NodeLaunch | None:
    """vLLM's node i of N: multiprocessing over nodes takes `--nnodes N --node-rank i --master-addr HEAD`
    (`--master-port`) and `--headless` on ranks ≥ 1; data parallel over nodes takes `--data-parallel-start-rank`
    i × L, `--data-parallel-address HEAD`, `--data-parallel-rpc-port` and `--headless` but on the head
    (ParallelConfig's `nnodes`, `node_rank`, `master_addr`, `data_parallel_*`; docs/engines/vllm.md §11)."""
    if nodes <= 1:
        return None
    local = flag_count(settings, "data-parallel-size-local", settings.dp, least=1)
    if settings.dp > local:
        head = flag_text(settings, "data-parallel-address")
        rpc = flag_text(settings, "data-parallel-rpc-port")
        unknown = tuple(word for typed, word in ((head, "HEAD"), (rpc, "PORT")) if typed is None)
        head, rpc = head or "HEAD", rpc or "PORT"
        said = (f"on node i of {nodes} (0 … {nodes - 1}) add --data-parallel-start-rank i × {local}"
                f" --data-parallel-address {head} --data-parallel-rpc-port {rpc} (the head's), --headless"
                " on every node but the head")
        by_node = tuple(("--data-parallel-start-rank", str(node * local), "--data-parallel-address", head,
                         "--data-parallel-rpc-port", rpc, *(("--headless",) if node else ()))
                        for node in range(nodes))  # fmt: skip
        return NodeLaunch(nodes=nodes, by_node=by_node, placeholders=unknown, said=said)
    count = () if flag_count(settings, "nnodes", 1, least=1) == nodes else ("--nnodes", str(nodes))
    typed = flag_text(settings, "master-addr")
    address = typed or "HEAD"
    port = flag_text(settings, "master-port")
    said = (f"on node i of {nodes} (0 … {nodes - 1}) add {' '.join((*count, ''))}--node-rank i --master-addr"
            f" {address}{f' --master-port {port}' if port else ''} (node rank 0's address), --headless on node"
            " ranks ≥ 1")
    by_node = tuple((*count, "--node-rank", str(node), "--master-addr", address,
                     *(("--master-port", port) if port else ()), *(("--headless",) if node else ()))
                    for node in range(nodes))  # fmt: skip
    return NodeLaunch(nodes=nodes, by_node=by_node, placeholders=() if typed else (address,), said=said)


def _transfer_config(settings: LaunchSettings) -> dict[str, object]:
    text = flag_text(settings, "kv-transfer-config")
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _role_and_transfer(settings: LaunchSettings) -> tuple[ServingRole, str | None]:
    config = _transfer_config(settings)
    connector = str(config.get("kv_connector") or flag_text(settings, "connector") or "")
    transfer = CONNECTORS.get(connector.lower(), connector or None)
    mode = (flag_text(settings, "disaggregation-mode") or "").lower()
    if mode in ("prefill", "decode"):
        role = ServingRole(mode)
    elif flag_set(settings, "is-prefill-worker"):
        role = ServingRole.PREFILL
    else:
        role = KV_ROLES.get(str(config.get("kv_role", "")), ServingRole.WHOLE)
    return role, transfer if role is not ServingRole.WHOLE else None


def span(settings: LaunchSettings) -> EngineSpan:
    """The engine this launch belongs to: across nodes by the master (or DP) address."""
    served = flag_text(settings, "served-model-name")
    role, transfer = _role_and_transfer(settings)
    base = EngineSpan(kind="vllm", served_model=served.split()[0] if served else settings.model, role=role,
                      transfer=transfer)  # fmt: skip
    nnodes = flag_count(settings, "nnodes", 1, least=1)
    headless = flag_set(settings, "headless")
    if nnodes > 1:
        node_rank = flag_count(settings, "node-rank", 0, least=0)
        address = flag_text(settings, "master-addr")
        port = flag_text(settings, "master-port")
        return base.model_copy(update={
            "nnodes": nnodes, "node_rank": node_rank, "serves_api": node_rank == 0 and not headless,
            "rendezvous": f"{address}:{port}" if address and port else address,
            "not_modelled": None if address else f"--nnodes {nnodes} without --master-addr: its nodes cannot be told apart",
        })  # fmt: skip
    local = flag_count(settings, "data-parallel-size-local", settings.dp, least=1)
    if settings.dp > local:  # data parallel over nodes: `local` engine cores here
        address = flag_text(settings, "data-parallel-address")
        port = flag_text(settings, "data-parallel-rpc-port")
        start = flag_count(settings, "data-parallel-start-rank", 0, least=0)
        return base.model_copy(update={
            "nnodes": ceil_div(settings.dp, local), "node_rank": start // local, "serves_api": not headless,
            "rendezvous": f"{address}:{port}" if address and port else address,
            "not_modelled": None if address else "data parallel over nodes without --data-parallel-address",
        })  # fmt: skip
    if (flag_text(settings, "distributed-executor-backend") or "").lower() == "ray":
        return base.model_copy(update={
            "not_modelled": "Ray places the workers: those on other nodes are Ray actors kvtop cannot join"
        })  # fmt: skip
    return base.model_copy(update={"serves_api": not headless})


def metrics_rank(labels: Mapping[str, str]) -> MetricsRank | None:
    """vLLM's `/metrics` label every series `model_name` and, in V1 (vllm/v1/metrics/loggers.py; present in
    v0.11.0, absent from an early-V1 page of 2025-03: tests/data/samples/vllm_metrics), `engine`: the engine
    core's global data-parallel rank. Its API server
    reports the ranks it manages (`engine_ranks_managed`, vllm/v1/engine/core_client.py): every DP rank
    under internal load balancing and Ray placement (all on the head node's API server), this node's
    `--data-parallel-start-rank` … + `--data-parallel-size-local` under hybrid or external balancing. An
    engine core drives all its TP and PP workers, so its DP rank is the series' rank. V0: no `engine`, rank 0.
    `vllm:cache_config_info` names no model (its labels are CacheConfig's and `engine`: the NIM page in
    tests/data/samples/vllm_metrics): its model is left "" for the join to take from the instance's series
    of that rank."""
    model = labels.get("model_name") or ""
    dp = label_count(labels, "engine")
    if dp is None or (not model and labels.get("__name__") != "vllm:cache_config_info"):
        return None
    return MetricsRank(kind="vllm", served_model=model, dp_rank=dp, deployment=labels.get(DEPLOYMENT_LABEL) or None,
                       named_axes=("DP",))


def check_nodes(layout: ParallelLayout, nodes: int) -> None:
    """Every node holds the same number of consecutive ranks (`local_world_size`)."""
    ranks_per_node(layout, nodes)
