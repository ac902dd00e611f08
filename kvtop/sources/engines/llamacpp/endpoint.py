"""llama-server's live state: `/slots`, `/props` and `/metrics` (tools/server, docs/engines/llamacpp.md §7).

`/slots` lists each slot (`id`, `n_ctx`, `is_processing`; served unless `--no-slots`); `/props` states
`total_slots` and the per-slot context (`default_generation_settings.n_ctx`); `/metrics` (only with
`--metrics`) has `llamacpp:requests_processing` and `llamacpp:requests_deferred`, and in builds before
2025 also `llamacpp:kv_cache_usage_ratio` and `llamacpp:kv_cache_tokens`. The whole cache's cells are
stated only for one slot (with several, the per-slot context is the whole cache under `--kv-unified`
and a share of it otherwise, which the server does not say): more slots leave the capacity to the plan.
"""

from __future__ import annotations

from typing import Any

import httpx

from kvtop.domain.observe import EndpointState, EngineLive
from kvtop.sources.engine_http import EndpointFailure, get, int_label, metric_families, set_fact, summarise

_GAUGES = {
    "llamacpp:requests_processing": "running_requests",
    "llamacpp:requests_deferred": "waiting_requests",
    "llamacpp:kv_cache_usage_ratio": "kv_usage_fraction",  # builds before 2025 only
    "llamacpp:kv_cache_tokens": "used_tokens",  # builds before 2025 only
    "llamacpp:spec_decode_num_draft_tokens": "spec_draft_tokens_total",  # counters: family names drop `_total`
    "llamacpp:spec_decode_num_accepted_tokens": "spec_accepted_tokens_total",
}
_NO_METRICS = "llama-server serves /metrics only when started with --metrics"


def _props(http: httpx.Client, base_url: str, timeout_s: float, facts: dict[str, Any]) -> None:
    """`/props`: one slot's context is the whole cache (several slots: not stated, see the module)."""
    props = get(http, f"{base_url}/props", timeout_s).json()
    if not isinstance(props, dict):
        raise EndpointFailure(EndpointState.BAD_PAYLOAD, f"{base_url}/props is not a JSON object")
    settings = props.get("default_generation_settings")
    n_ctx = int_label(settings.get("n_ctx")) if isinstance(settings, dict) else None
    slots = int_label(props.get("total_slots"))
    if n_ctx is not None and slots == 1:
        facts["token_capacity"] = n_ctx


def _slots(http: httpx.Client, base_url: str, timeout_s: float, facts: dict[str, Any]) -> None:
    """`/slots`: the slots processing a request."""
    slots = get(http, f"{base_url}/slots", timeout_s).json()
    if not isinstance(slots, list) or not all(isinstance(slot, dict) for slot in slots):
        raise EndpointFailure(EndpointState.BAD_PAYLOAD, f"{base_url}/slots is not a list of slots")
    facts.setdefault("running_requests", sum(1 for slot in slots if slot.get("is_processing") is True))


def read_live(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    facts: dict[str, Any] = {}
    failures: list[EndpointFailure] = []
    try:
        for family in metric_families(http, f"{base_url}/metrics", timeout_s, "llamacpp:"):
            field = _GAUGES.get(family.name)
            if field is None:
                continue
            for sample in family.samples:
                set_fact(facts, field, sample.value, sample.name)
    except EndpointFailure as failure:
        if failure.state is EndpointState.HTTP_ERROR:
            failure = EndpointFailure(failure.state, f"{failure.message}: {_NO_METRICS}")
        failures.append(failure)
    for read in (_props, _slots):
        try:
            read(http, base_url, timeout_s, facts)
        except EndpointFailure as failure:
            failures.append(failure)
    if not facts:
        first = failures[0] if failures else EndpointFailure(EndpointState.BAD_PAYLOAD, f"{base_url}: no slots")
        return EngineLive(state=first.state, message=first.message)
    return summarise([facts])
