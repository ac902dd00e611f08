"""TensorRT-LLM's live state from trtllm-serve's endpoints (tensorrt_llm/serve/openai_server.py).

- `/prometheus/metrics` (servers started with `return_perf_metrics: true`): `trtllm_kv_cache_max_blocks`,
  `…_used_blocks`, `…_tokens_per_block`, `trtllm_kv_cache_utilization`, `trtllm_num_requests_running`
  / `…_waiting` where the release has them (1.1.0rc5 exposed only request histograms).
- `/metrics`: a JSON list of iteration stats (`enable_iter_perf_stats: true`), each with
  `kvCacheStats {maxNumBlocks, usedNumBlocks, freeNumBlocks, tokensPerBlock}`, `numActiveRequests`,
  `numQueuedRequests` and, under attention DP, `attentionDpRank`. The server hands each stat out once:
  reading it takes it from anyone else polling it, so it is read only when Prometheus says nothing of
  the KV cache.
- `/version`: `{"version": "1.1.0rc3"}`.

Capacity in tokens is `maxNumBlocks × tokensPerBlock` of the tightest rank.
"""

from __future__ import annotations

from typing import Any

import httpx

from kvtop.domain.observe import EndpointState, EngineLive, ReportedVersion
from kvtop.sources.engine_http import (
    EndpointFailure,
    figure,
    get,
    int_label,
    metric_families,
    reported_version,
    set_fact,
    summarise,
)

_GAUGES = {
    "trtllm_kv_cache_utilization": "kv_usage_fraction",
    "trtllm_num_requests_running": "running_requests",
    "trtllm_num_requests_waiting": "waiting_requests",
    "trtllm_kv_cache_max_blocks": "num_gpu_blocks",
    "trtllm_kv_cache_tokens_per_block": "block_size",
}
_USED_BLOCKS = "trtllm_kv_cache_used_blocks"
_DRAINS = "/metrics hands out each iteration stat once: kvtop's read takes it from other pollers"


def read_live(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    version, notes = _version(http, base_url, timeout_s)
    prometheus: EngineLive | None = None
    try:
        prometheus = _prometheus(http, base_url, timeout_s)
    except EndpointFailure as failure:
        notes.append(
            f"{failure.message} (start trtllm-serve with return_perf_metrics: true for Prometheus metrics)"
        )
    live = prometheus
    if live is None or live.num_gpu_blocks is None:
        try:
            live = _iteration_stats(http, base_url, timeout_s)
            notes.append(_DRAINS)
        except EndpointFailure as failure:
            if prometheus is None:
                return EngineLive(
                    state=failure.state, message="; ".join([*notes, failure.message]), version=version
                )
            notes.append(failure.message)
            live = prometheus
    return live.model_copy(update={"version": version, "notes": tuple(notes)})


def _version(http: httpx.Client, base_url: str, timeout_s: float) -> tuple[ReportedVersion | None, list[str]]:
    try:
        payload = get(http, f"{base_url}/version", timeout_s).json()
    except EndpointFailure as failure:
        return None, [failure.message]
    return reported_version(payload.get("version") if isinstance(payload, dict) else None), []


def _prometheus(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    families = metric_families(http, f"{base_url}/prometheus/metrics", timeout_s, "trtllm_")
    facts: dict[str, Any] = {}
    used = None
    for family in families:
        for sample in family.samples:
            if sample.name in _GAUGES:
                set_fact(facts, _GAUGES[sample.name], sample.value, sample.name)
            elif sample.name == _USED_BLOCKS:
                count = figure(sample.value, sample.name)
                used = int(count) if count is not None else used
    live = summarise([facts])
    blocks, size = live.num_gpu_blocks, live.block_size
    update: dict[str, Any] = {}
    if blocks is not None and size:
        update["token_capacity"] = blocks * size
        if used is not None:
            update["used_tokens"] = used * size
            if live.kv_usage_fraction is None and blocks:
                update["kv_usage_fraction"] = used / blocks
    return live.model_copy(update=update)


def _iteration_stats(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    response = get(http, f"{base_url}/metrics", timeout_s)
    stats = response.json()
    if not isinstance(stats, list):
        raise EndpointFailure(
            EndpointState.BAD_PAYLOAD, f"{response.url} is not TensorRT-LLM's iteration stats"
        )
    latest: dict[int | None, dict[str, Any]] = {}
    for stat in stats:  # oldest first: the last stat of each rank is its current state
        if isinstance(stat, dict) and isinstance(stat.get("kvCacheStats"), dict):
            latest[int_label(stat.get("attentionDpRank"))] = stat
    if not latest:
        raise EndpointFailure(
            EndpointState.BAD_PAYLOAD,
            f"{response.url} holds no KV cache stats yet (enable_iter_perf_stats: true, and at least one request)",
        )
    return summarise(_rank_facts(dp_rank, stat) for dp_rank, stat in latest.items())


def _rank_facts(dp_rank: int | None, stat: dict[str, Any]) -> dict[str, Any]:
    kv = stat["kvCacheStats"]
    blocks, used, size = (
        int_label(kv.get(key)) for key in ("maxNumBlocks", "usedNumBlocks", "tokensPerBlock")
    )
    facts: dict[str, Any] = {
        "dp_rank": dp_rank,
        "num_gpu_blocks": blocks,
        "block_size": size,
        "token_capacity": blocks * size if blocks is not None and size else None,
        "used_tokens": used * size if used is not None and size else None,
        "kv_usage_fraction": used / blocks if used is not None and blocks else None,
        "running_requests": int_label(stat.get("numActiveRequests")),
        "waiting_requests": int_label(stat.get("numQueuedRequests")),
    }
    return facts
