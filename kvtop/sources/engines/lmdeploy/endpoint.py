"""LMDeploy's live state: its `/metrics` page (docs/engines/lmdeploy.md; `lmdeploy/metrics/loggers.py`).

`lmdeploy:gpu_cache_usage_perc` (the share of KV blocks in use, 0–1), `lmdeploy:num_requests_running`
and `lmdeploy:num_requests_waiting`, labelled `model_name` and `engine` (the DP rank). The page exists
from v0.9.2 (PR #3534) when the server runs with `--enable-metrics`, and by default from v0.11.0
(PR #4108, `--disable-metrics` turns it off); it states no capacity, which comes from the plan or a log.
"""

from __future__ import annotations

from typing import Any

import httpx

from kvtop.domain.observe import EndpointState, EngineLive
from kvtop.sources.engine_http import EndpointFailure, metric_families, set_fact, summarise

_GAUGES = {
    "lmdeploy:gpu_cache_usage_perc": "kv_usage_fraction",
    "lmdeploy:num_requests_running": "running_requests",
    "lmdeploy:num_requests_waiting": "waiting_requests",
}
_NO_METRICS = (
    "LMDeploy serves /metrics from v0.9.2 with --enable-metrics (on by default from v0.11.0, "
    "unless --disable-metrics)"
)


def read_live(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    try:
        families = metric_families(http, f"{base_url}/metrics", timeout_s, "lmdeploy:")
    except EndpointFailure as failure:
        message = failure.message
        if failure.state is EndpointState.HTTP_ERROR and "404" in message:
            message = f"{message}: {_NO_METRICS}"
        return EngineLive(state=failure.state, message=message)
    ranks: dict[str | None, dict[str, Any]] = {}
    for family in families:
        field = _GAUGES.get(family.name)
        if field is None:
            continue
        for sample in family.samples:
            engine = sample.labels.get("engine")
            set_fact(ranks.setdefault(engine, {"engine_index": engine}), field, sample.value, sample.name)
    if not ranks:
        return EngineLive(
            state=EndpointState.BAD_PAYLOAD,
            message=f"{base_url}/metrics has lmdeploy: metrics but no KV-cache usage or request gauges",
        )
    return summarise(ranks.values())
