"""vLLM's live state: `/metrics` (`vllm:cache_config_info` labels, `vllm:kv_cache_usage_perc` or the
older `vllm:gpu_cache_usage_perc`, request gauges), ranks keyed by the `engine` label (docs/engines/vllm.md §7)."""

from __future__ import annotations

from typing import Any

import httpx

from kvtop.domain.observe import EngineLive
from kvtop.sources.engine_http import (
    EndpointFailure,
    float_label,
    int_label,
    metric_families,
    own_sample,
    set_fact,
    summarise,
)

_VLLM_GAUGES = {
    "vllm:kv_cache_usage_perc": "kv_usage_fraction",
    "vllm:gpu_cache_usage_perc": "kv_usage_fraction",  # the name before vLLM PR #29330 (2025-11)
    "vllm:num_requests_running": "running_requests",
    "vllm:num_requests_waiting": "waiting_requests",
    # pressure (kvtop.domain.pressure): V0's swapped requests; counters, by family name (`_total` dropped)
    "vllm:num_requests_swapped": "swapped_requests",
    "vllm:num_preemptions": "preemptions_total",
    "vllm:num_preemptions_total": "preemptions_total",  # a page without TYPE lines keeps the suffix
    "vllm:spec_decode_num_accepted_tokens": "spec_accepted_tokens_total",
    "vllm:spec_decode_num_draft_tokens": "spec_draft_tokens_total",
}
_VLLM_CACHE_LABELS = {"num_gpu_blocks": "num_gpu_blocks", "block_size": "block_size",
                      "kv_cache_size_tokens": "token_capacity"}  # fmt: skip


def read_live(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    try:
        families = metric_families(http, f"{base_url}/metrics", timeout_s, "vllm:")
    except EndpointFailure as failure:
        return EngineLive(state=failure.state, message=failure.message)
    ranks: dict[tuple[str | None, ...], dict[str, Any]] = {}
    memory_fraction = None
    for family in families:
        if family.name != "vllm:cache_config_info" and family.name not in _VLLM_GAUGES:
            continue
        for sample in family.samples:
            facts = ranks.setdefault(
                (sample.labels.get("engine"),), {"engine_index": sample.labels.get("engine")}
            )
            if family.name == "vllm:cache_config_info":
                for label, field in _VLLM_CACHE_LABELS.items():
                    facts[field] = int_label(sample.labels.get(label))
                memory_fraction = float_label(sample.labels.get("gpu_memory_utilization"))
            elif family.name in _VLLM_GAUGES and own_sample(family, sample):
                set_fact(facts, _VLLM_GAUGES[family.name], sample.value, sample.name)
    live = summarise(ranks.values())
    return live.model_copy(update={"memory_fraction": memory_fraction})
