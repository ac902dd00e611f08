"""An engine's live state from its own HTTP endpoints (httpx owns this module).

vLLM: `/metrics` (`vllm:cache_config_info` labels, `vllm:kv_cache_usage_perc` or the older
`vllm:gpu_cache_usage_perc`, request gauges). SGLang: `/get_server_info` (or `/server_info`) and
`/metrics` (`sglang:max_total_num_tokens`, `sglang:token_usage`, … per dp/tp/pp rank labels).
Fetching is synchronous with an explicit timeout, meant for a worker thread; an endpoint that
is down, slow or answers garbage becomes a named `EndpointState` with a message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from kvtop.domain.launch import EngineName
from kvtop.domain.observe import EndpointState, EngineLive, EngineLiveRank, NodeObservation

DEFAULT_TIMEOUT_S = 1.0
_GIB = 1 << 30

# Rank facts by metric family (vLLM keys ranks by its `engine` label, SGLang by dp/tp/pp rank).
_VLLM_GAUGES = {
    "vllm:kv_cache_usage_perc": "kv_usage_fraction",
    "vllm:gpu_cache_usage_perc": "kv_usage_fraction",  # the name before vLLM PR #29330 (2025-11)
    "vllm:num_requests_running": "running_requests",
    "vllm:num_requests_waiting": "waiting_requests",
}
_VLLM_CACHE_LABELS = {"num_gpu_blocks": "num_gpu_blocks", "block_size": "block_size",
                      "kv_cache_size_tokens": "token_capacity"}  # fmt: skip
_SGLANG_GAUGES = {
    "sglang:max_total_num_tokens": "token_capacity",
    "sglang:token_usage": "kv_usage_fraction",
    "sglang:num_used_tokens": "used_tokens",
    "sglang:num_running_reqs": "running_requests",
    "sglang:num_queue_reqs": "waiting_requests",
    "sglang:page_size": "block_size",
}
_SGLANG_MEMORY_GIB = {
    "sglang:weight_memory_usage_gb": "weight_bytes",
    "sglang:kv_cache_memory_usage_gb": "kv_cache_bytes",
}
_FRACTIONS = {"kv_usage_fraction"}
_FAILURE_PRECEDENCE = (
    EndpointState.BAD_PAYLOAD,
    EndpointState.HTTP_ERROR,
    EndpointState.TIMEOUT,
    EndpointState.UNREACHABLE,
)


class _Failure(Exception):
    """One endpoint's named failure."""

    def __init__(self, state: EndpointState, message: str) -> None:
        super().__init__(message)
        self.state = state
        self.message = message


def fetch_engine_live(
    kind: EngineName,
    host: str,
    port: int,
    *,
    client: httpx.Client | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> EngineLive:
    """Read one engine's endpoints. Never raises for a network or payload problem: the returned
    value's `state` names it. Pass `client` (e.g. with an `httpx.MockTransport`) to reuse one."""
    base_url = f"http://{_host_for_url(host)}:{port}"
    own_client = client is None
    http = httpx.Client(timeout=timeout_s) if client is None else client
    read = _vllm if kind == "vllm" else _sglang
    try:
        live = read(http, base_url, timeout_s)
    finally:
        if own_client:
            http.close()
    return live.model_copy(update={"base_url": base_url})


def with_live_state(
    node: NodeObservation, *, client: httpx.Client | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> NodeObservation:
    """The node with every engine's `live` read from its endpoints (one engine after another)."""
    engines = tuple(
        engine.model_copy(
            update={
                "live": fetch_engine_live(
                    engine.kind, engine.host, engine.port, client=client, timeout_s=timeout_s
                )
            }
        )
        for engine in node.engines
    )
    return node.model_copy(update={"engines": engines})


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _get(http: httpx.Client, url: str, timeout_s: float) -> httpx.Response:
    try:
        response = http.get(url, timeout=timeout_s)
    except httpx.TimeoutException:
        raise _Failure(
            EndpointState.TIMEOUT, f"{url} did not answer within {timeout_s:g} s: the server is busy or hung"
        ) from None
    except (httpx.ProtocolError, httpx.DecodingError) as error:
        raise _Failure(
            EndpointState.BAD_PAYLOAD, f"{url} answered something that is not HTTP: {error}"
        ) from None
    except httpx.TransportError as error:
        raise _Failure(
            EndpointState.UNREACHABLE,
            f"cannot connect to {url} ({type(error).__name__}): is the server up and listening there?",
        ) from None
    if response.status_code >= 400:
        raise _Failure(EndpointState.HTTP_ERROR, f"{url} answered HTTP {response.status_code}")
    return response


def _metric_families(http: httpx.Client, url: str, timeout_s: float, prefix: str) -> list[Any]:
    text = _get(http, url, timeout_s).text
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as error:
        raise _Failure(EndpointState.BAD_PAYLOAD, f"{url} is not a Prometheus page: {error}") from None
    ours = [family for family in families if family.name.startswith(prefix)]
    if not ours:
        raise _Failure(EndpointState.BAD_PAYLOAD, f"{url} has no {prefix} metrics: is this the right server?")
    return ours


def _vllm(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    try:
        families = _metric_families(http, f"{base_url}/metrics", timeout_s, "vllm:")
    except _Failure as failure:
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
                    facts[field] = _int_label(sample.labels.get(label))
                memory_fraction = _float_label(sample.labels.get("gpu_memory_utilization"))
            elif family.name in _VLLM_GAUGES:
                _set_fact(facts, _VLLM_GAUGES[family.name], sample.value)
    live = _summarise(ranks.values())
    return live.model_copy(update={"memory_fraction": memory_fraction})


def _sglang(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    try:
        info = _sglang_server_info(http, base_url, timeout_s)
        info_failure = None
    except _Failure as failure:
        info, info_failure = {}, failure
    try:
        families = _metric_families(http, f"{base_url}/metrics", timeout_s, "sglang:")
        metrics_failure = None
    except _Failure as failure:
        families, metrics_failure = [], failure
    if info_failure and metrics_failure:
        # the more specific failure names the state: a wrong answer says more than a missing route
        state = min(info_failure.state, metrics_failure.state, key=_FAILURE_PRECEDENCE.index)
        return EngineLive(state=state, message=f"{info_failure.message}; {metrics_failure.message}")
    ranks: dict[tuple[str | None, ...], dict[str, Any]] = {}
    memory: dict[str, int] = {}
    for family in families:
        for sample in family.samples:
            key = tuple(sample.labels.get(label) for label in ("dp_rank", "tp_rank", "pp_rank"))
            if family.name in _SGLANG_GAUGES or any(key):  # every rank that reports is listed
                facts = ranks.setdefault(key, _rank_labels(key))
                facts.setdefault("pid", _int_label(sample.labels.get("pid")))
            if family.name in _SGLANG_GAUGES:
                _set_fact(facts, _SGLANG_GAUGES[family.name], sample.value)
            elif family.name in _SGLANG_MEMORY_GIB:
                field = _SGLANG_MEMORY_GIB[family.name]
                memory[field] = max(memory.get(field, 0), round(sample.value * _GIB))
    if not ranks:
        for dp_rank, state in enumerate(info.get("internal_states") or []):
            usage = (state.get("memory_usage") or {}) if isinstance(state, dict) else {}
            ranks[(str(dp_rank),)] = {
                "dp_rank": dp_rank,
                "token_capacity": _int_label(usage.get("token_capacity")),
            }
    live = _summarise(ranks.values())
    notes = []
    if metrics_failure:
        notes.append(f"{metrics_failure.message} (start SGLang with --enable-metrics for live token usage)")
    if info_failure:
        notes.append(info_failure.message)
    return live.model_copy(update={**_server_info_facts(info, live), **memory, "notes": tuple(notes)})


def _sglang_server_info(http: httpx.Client, base_url: str, timeout_s: float) -> dict[str, Any]:
    """`/get_server_info`, or `/server_info` on servers that only have the older route."""
    try:
        response = _get(http, f"{base_url}/get_server_info", timeout_s)
    except _Failure as failure:
        if failure.state is not EndpointState.HTTP_ERROR:
            raise
        response = _get(http, f"{base_url}/server_info", timeout_s)
    try:
        payload = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise _Failure(EndpointState.BAD_PAYLOAD, f"{response.url} is not JSON") from None
    if not isinstance(payload, dict) or not {"max_total_num_tokens", "internal_states", "version"} & set(
        payload
    ):
        raise _Failure(EndpointState.BAD_PAYLOAD, f"{response.url} is not an SGLang server-info answer")
    return payload


def _server_info_facts(info: dict[str, Any], live: EngineLive) -> dict[str, Any]:
    """Facts `/get_server_info` adds where `/metrics` was silent."""
    if not info:
        return {}
    states = [state for state in info.get("internal_states") or [] if isinstance(state, dict)]
    usage = (states[0].get("memory_usage") or {}) if states else {}
    facts: dict[str, Any] = {
        "version": info.get("version"),
        "memory_fraction": _float_label(info.get("mem_fraction_static")),
        "token_capacity": live.token_capacity or _int_label(info.get("max_total_num_tokens")),
        "block_size": live.block_size or _int_label(info.get("page_size")),
    }
    for key, field in (("weight", "weight_bytes"), ("kvcache", "kv_cache_bytes")):
        gib = _float_label(usage.get(key))
        if gib is not None:
            facts[field] = round(gib * _GIB)
    return facts


def _rank_labels(key: tuple[str | None, ...]) -> dict[str, Any]:
    return {
        name: _int_label(value) for name, value in zip(("dp_rank", "tp_rank", "pp_rank"), key, strict=True)
    }


def _set_fact(facts: dict[str, Any], field: str, value: float) -> None:
    facts[field] = float(value) if field in _FRACTIONS else int(value)


def _summarise(rank_facts: Iterable[dict[str, Any]]) -> EngineLive:
    """Engine-wide figures from per-rank ones: capacity and pages of the tightest rank, usage of
    the fullest, tokens and requests summed."""
    ranks = tuple(
        sorted(
            (EngineLiveRank(**facts) for facts in rank_facts),
            key=lambda rank: (
                rank.engine_index or "",
                rank.dp_rank or 0,
                rank.pp_rank or 0,
                rank.tp_rank or 0,
            ),
        )
    )

    def values(field: str) -> list[Any]:
        return [getattr(rank, field) for rank in ranks if getattr(rank, field) is not None]

    def combined(field: str, how: Callable[[list[Any]], Any]) -> Any:
        found = values(field)
        return how(found) if found else None

    return EngineLive(
        state=EndpointState.OK,
        token_capacity=combined("token_capacity", min),
        num_gpu_blocks=combined("num_gpu_blocks", min),
        block_size=combined("block_size", min),
        kv_usage_fraction=combined("kv_usage_fraction", max),
        used_tokens=combined("used_tokens", sum),
        running_requests=combined("running_requests", sum),
        waiting_requests=combined("waiting_requests", sum),
        ranks=ranks,
    )


def _int_label(value: Any) -> int | None:
    """An integer from a label or JSON value; None for absent, 'None' or non-numbers."""
    number = _float_label(value)
    return None if number is None else int(number)


def _float_label(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None  # vLLM writes unset settings as the string "None"
