"""SGLang's live state: `/get_server_info` (or `/server_info`) and `/metrics` (`sglang:max_total_num_tokens`,
`sglang:token_usage`, … per dp/tp/pp rank labels) (docs/engines/sglang.md §12)."""

from __future__ import annotations

from typing import Any

import httpx

from kvtop.domain.observe import EndpointState, EngineLive
from kvtop.domain.wording import GIB as _GIB
from kvtop.sources.engine_http import (
    FAILURE_PRECEDENCE,
    EndpointFailure,
    figure,
    float_label,
    get,
    int_label,
    metric_families,
    own_sample,
    rank_labels,
    reported_version,
    set_fact,
    summarise,
)

_SGLANG_GAUGES = {
    "sglang:max_total_num_tokens": "token_capacity",
    "sglang:token_usage": "kv_usage_fraction",
    "sglang:num_used_tokens": "used_tokens",
    "sglang:num_running_reqs": "running_requests",
    "sglang:num_queue_reqs": "waiting_requests",
    "sglang:page_size": "block_size",
    # pressure (kvtop.domain.pressure): counters by family name (prometheus_client drops `_total`)
    "sglang:num_retracted_requests": "retractions_total",
    "sglang:num_retracted_requests_total": "retractions_total",
    "sglang:evicted_tokens": "evicted_tokens_total",
    "sglang:evicted_tokens_total": "evicted_tokens_total",
    "sglang:spec_accept_rate": "spec_acceptance",
}
_SGLANG_MEMORY_GIB = {
    "sglang:weight_memory_usage_gb": "weight_bytes",
    "sglang:kv_cache_memory_usage_gb": "kv_cache_bytes",
}


def read_live(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    try:
        info = _sglang_server_info(http, base_url, timeout_s)
        info_failure = None
    except EndpointFailure as failure:
        info, info_failure = {}, failure
    try:
        families = metric_families(http, f"{base_url}/metrics", timeout_s, "sglang:")
        metrics_failure = None
    except EndpointFailure as failure:
        families, metrics_failure = [], failure
    if info_failure and metrics_failure:
        # the more specific failure names the state: a wrong answer says more than a missing route
        state = min(info_failure.state, metrics_failure.state, key=FAILURE_PRECEDENCE.index)
        return EngineLive(state=state, message=f"{info_failure.message}; {metrics_failure.message}")
    ranks: dict[tuple[str | None, ...], dict[str, Any]] = {}
    memory: dict[str, int] = {}
    for family in families:
        for sample in family.samples:
            key = tuple(sample.labels.get(label) for label in ("dp_rank", "tp_rank", "pp_rank"))
            if family.name in _SGLANG_GAUGES or any(key):  # every rank that reports is listed
                facts = ranks.setdefault(key, rank_labels(key))
                facts.setdefault("pid", int_label(sample.labels.get("pid")))
            if family.name == "sglang:spec_accept_rate" and not sample.value:
                continue  # reported as 0 by a server that drafts nothing
            if family.name in _SGLANG_GAUGES and own_sample(family, sample):
                set_fact(facts, _SGLANG_GAUGES[family.name], sample.value, sample.name)
            elif family.name in _SGLANG_MEMORY_GIB:
                field, gib = _SGLANG_MEMORY_GIB[family.name], figure(sample.value, sample.name)
                if gib is not None:
                    memory[field] = max(memory.get(field, 0), round(gib * _GIB))
    if not ranks:
        for dp_rank, internal in enumerate(_states(info)):
            usage = _mapping(internal.get("memory_usage"))
            ranks[(str(dp_rank),)] = {
                "dp_rank": dp_rank,
                "token_capacity": int_label(usage.get("token_capacity")),
            }
    live = summarise(ranks.values())
    notes = []
    if metrics_failure:
        notes.append(f"{metrics_failure.message} (start SGLang with --enable-metrics for live token usage)")
    if info_failure:
        notes.append(info_failure.message)
    return live.model_copy(update={**_server_info_facts(info, live), **memory, "notes": tuple(notes)})


def _sglang_server_info(http: httpx.Client, base_url: str, timeout_s: float) -> dict[str, Any]:
    """`/get_server_info`, or `/server_info` on servers that only have the older route."""
    try:
        response = get(http, f"{base_url}/get_server_info", timeout_s)
    except EndpointFailure as failure:
        if failure.state is not EndpointState.HTTP_ERROR:
            raise
        response = get(http, f"{base_url}/server_info", timeout_s)
    payload = response.json()
    if not isinstance(payload, dict) or not {"max_total_num_tokens", "internal_states", "version"} & set(
        payload
    ):
        raise EndpointFailure(
            EndpointState.BAD_PAYLOAD, f"{response.url} is not an SGLang server-info answer"
        )
    return payload


def _server_info_facts(info: dict[str, Any], live: EngineLive) -> dict[str, Any]:
    """Facts `/get_server_info` adds where `/metrics` was silent."""
    if not info:
        return {}
    states = _states(info)
    usage = _mapping(states[0].get("memory_usage")) if states else {}
    facts: dict[str, Any] = {
        "version": reported_version(info.get("version")),
        "memory_fraction": float_label(info.get("mem_fraction_static")),
        "token_capacity": live.token_capacity or int_label(info.get("max_total_num_tokens")),
        "block_size": live.block_size or int_label(info.get("page_size")),
    }
    for key, field in (("weight", "weight_bytes"), ("kvcache", "kv_cache_bytes")):
        gib = float_label(usage.get(key))
        if gib is not None:
            facts[field] = round(gib * _GIB)
    return facts


def _states(info: dict[str, Any]) -> list[dict[str, Any]]:
    """`internal_states`, one object per DP rank (anything else in the answer is no rank's state)."""
    states = info.get("internal_states")
    return [state for state in states if isinstance(state, dict)] if isinstance(states, list) else []


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
