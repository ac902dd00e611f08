"""The queries `kvtop cluster` sends to Prometheus: node, GPU, exporter and every engine's own series.

Each engine's metric names come from its package (`engine_metrics()`); the GPU sums from
`prometheus_gpus.py`, each engine's parts from `prometheus_engines.py`. Split out of prometheus.py
(query building here; typing the answers in prometheus_parse.py; joining them in prometheus_join.py).
"""

from __future__ import annotations

from kvtop.domain.capacity import CapacitySource
from kvtop.domain.engines.registry import engine_metrics
from kvtop.sources.prometheus_engines import ENGINE_QUERIES
from kvtop.sources.prometheus_gpus import GPU_LIST_QUERIES, GPU_SUMMARY_QUERIES

#: `kvtop_rank_token_capacity{source}` values that are the engine's own figure (not kvtop's prediction)
ENGINE_REPORTED = (CapacitySource.LIVE.value, CapacitySource.LOGGED.value, CapacitySource.SIMULATED.value)

#: the demo scenario of a node seen only through a demo engine's own page (its series carry demo="1")
DEMO_ENGINE_PAGE = "engine metrics page"
ENGINE_METRICS = engine_metrics()  # name -> (engine, states the token capacity; else the KV usage share)

QUERIES = {
    "up": "up",
    "age": "time() - timestamp(up)",
    "snapshot_age": "time() - max by (instance) (kvtop_snapshot_timestamp_seconds)",
    "node": "kvtop_node_info",
    **GPU_SUMMARY_QUERIES,  # each node's GPUs summed by the server (prometheus_gpus.py)
    "unexplained": "sum by (instance) (kvtop_rank_unexplained_bytes)",
    "findings": "sum by (instance, severity) (kvtop_findings)",
    # the tightest rank of each engine on each node, per source, with its rank and GPU labels
    "capacity": "bottomk by (instance, engine, source) (1, kvtop_rank_token_capacity)",
    "engine": '{__name__=~"' + "|".join(ENGINE_METRICS) + '"}',  # every engine's own KV gauges
}
QUERIES |= ENGINE_QUERIES  # each node's part of every engine (prometheus_engines.py)
#: every query kvtop may send: the refresh's, and every GPU's series for `kvtop cluster --gpus`
ALL_QUERIES = QUERIES | GPU_LIST_QUERIES
#: kvtop's own capacity sources, by the `ClusterEngine` field each fills
CAPACITY_KEYS = {"clean": "clean_token_capacity", "predicted": "predicted_token_capacity"}
