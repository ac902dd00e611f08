"""An engine's live state from its own HTTP endpoints (httpx owns this module).

Which endpoints and metrics an engine has is its package's (`kvtop/sources/engines/<id>/endpoint.py`);
this module fetches, names failures and sums per-rank facts for every engine alike. Fetching is synchronous with an explicit timeout, meant for a worker thread; an endpoint that
is down, slow or answers garbage becomes a named `EndpointState` with a message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from kvtop.domain.engines.registry import EngineId
from kvtop.domain.observe import EndpointState, EngineLive, EngineLiveRank, NodeObservation
from kvtop.sources.bounded_http import (
    AnswerTooLarge,
    Deadline,
    DeadlineExpired,
    UnreadableEncoding,
    read_bounded,
)
from kvtop.sources.engines.registry import endpoint_reader

DEFAULT_TIMEOUT_S = 1.0
MAX_PAGE_BYTES = 16 << 20  # an engine's /metrics or server-info page; a real one is a few hundred KiB
# The deadline of the command reading the node (`with_live_state`), seen by every request it makes:
# the engines' readers keep their plain (http, base_url, timeout_s) signature.
_DEADLINE: ContextVar[Deadline | None] = ContextVar("kvtop_engine_http_deadline", default=None)
_GIB = 1 << 30

_FRACTIONS = {"kv_usage_fraction"}
FAILURE_PRECEDENCE = (
    EndpointState.BAD_PAYLOAD,
    EndpointState.HTTP_ERROR,
    EndpointState.TIMEOUT,
    EndpointState.UNREACHABLE,
)


class EndpointFailure(Exception):
    """One endpoint's named failure."""

    def __init__(self, state: EndpointState, message: str) -> None:
        super().__init__(message)
        self.state = state
        self.message = message


def fetch_engine_live(
    kind: EngineId,
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
    try:
        live = endpoint_reader(kind)(http, base_url, timeout_s)
    finally:
        if own_client:
            http.close()
    return live.model_copy(update={"base_url": base_url})


def with_live_state(
    node: NodeObservation,
    *,
    client: httpx.Client | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    deadline: Deadline | None = None,
) -> NodeObservation:
    """The node with every engine's `live` read from its endpoints (one engine after another).

    With a `deadline`, no request outlives it; an engine not read in time is named TIMEOUT."""
    engines = []
    token = _DEADLINE.set(deadline)
    try:
        for engine in node.engines:
            if deadline is not None and deadline.expired:
                live = EngineLive(
                    state=EndpointState.TIMEOUT,
                    message=f"not read: the command's --timeout of {deadline.seconds:g} s ran out first",
                )
            else:
                live = fetch_engine_live(
                    engine.kind, engine.host, engine.port, client=client, timeout_s=timeout_s
                )
            engines.append(engine.model_copy(update={"live": live}))
    finally:
        _DEADLINE.reset(token)
    return node.model_copy(update={"engines": tuple(engines)})


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def get(http: httpx.Client, url: str, timeout_s: float) -> httpx.Response:
    """The whole answer of `url`, read within `timeout_s` per operation, the command's deadline and
    `MAX_PAGE_BYTES` (inflated); every failure is an `EndpointFailure` naming its state."""
    deadline = _DEADLINE.get()
    try:
        response = read_bounded(
            http, url, timeout_s=timeout_s, deadline=deadline, max_bytes=MAX_PAGE_BYTES
        ).as_response(url)
    except DeadlineExpired:
        seconds = deadline.seconds if deadline is not None else timeout_s
        raise EndpointFailure(
            EndpointState.TIMEOUT, f"{url}: the command's --timeout of {seconds:g} s ran out while reading it"
        ) from None
    except (AnswerTooLarge, UnreadableEncoding) as error:
        raise EndpointFailure(EndpointState.BAD_PAYLOAD, f"{url}: {error}") from None
    except httpx.TimeoutException:
        raise EndpointFailure(
            EndpointState.TIMEOUT, f"{url} did not answer within {timeout_s:g} s: the server is busy or hung"
        ) from None
    except (httpx.ProtocolError, httpx.DecodingError) as error:
        raise EndpointFailure(
            EndpointState.BAD_PAYLOAD, f"{url} answered something that is not HTTP: {error}"
        ) from None
    except httpx.TransportError as error:
        raise EndpointFailure(
            EndpointState.UNREACHABLE,
            f"cannot connect to {url} ({type(error).__name__}): is the server up and listening there?",
        ) from None
    if response.status_code >= 400:
        raise EndpointFailure(EndpointState.HTTP_ERROR, f"{url} answered HTTP {response.status_code}")
    return response


def metric_families(http: httpx.Client, url: str, timeout_s: float, prefix: str) -> list[Any]:
    text = get(http, url, timeout_s).text
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as error:
        raise EndpointFailure(EndpointState.BAD_PAYLOAD, f"{url} is not a Prometheus page: {error}") from None
    ours = [family for family in families if family.name.startswith(prefix)]
    if not ours:
        raise EndpointFailure(
            EndpointState.BAD_PAYLOAD, f"{url} has no {prefix} metrics: is this the right server?"
        )
    return ours


def rank_labels(key: tuple[str | None, ...]) -> dict[str, Any]:
    return {
        name: int_label(value) for name, value in zip(("dp_rank", "tp_rank", "pp_rank"), key, strict=True)
    }


def set_fact(facts: dict[str, Any], field: str, value: float) -> None:
    facts[field] = float(value) if field in _FRACTIONS else int(value)


def summarise(rank_facts: Iterable[dict[str, Any]]) -> EngineLive:
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


def int_label(value: Any) -> int | None:
    """An integer from a label or JSON value; None for absent, 'None' or non-numbers."""
    number = float_label(value)
    return None if number is None else int(number)


def float_label(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None  # vLLM writes unset settings as the string "None"
