"""An engine's live state from its own HTTP endpoints (httpx owns this module).

Which endpoints and metrics an engine has is its package's (`kvtop/sources/engines/<id>/endpoint.py`);
this module fetches, names failures and sums per-rank facts for every engine alike. Fetching is synchronous with an explicit timeout, meant for a worker thread; an endpoint that
is down, slow or answers garbage becomes a named `EndpointState` with a one-line message.

Typed at the door: a page is read up to `MAX_PAGE_BYTES` and within `ANSWER_DEADLINES` × the timeout
(a server that drips bytes is as late as one that is silent); a figure the engine reports must be a
finite, non-negative number below 2^53 (`figure`: NaN is an absent sample, anything else is a
bad payload naming the metric), and a label or JSON value that is not one is unknown (`int_label`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from kvtop.domain.engines.registry import EngineId
from kvtop.domain.observe import EndpointState, EngineLive, EngineLiveRank, NodeObservation, ReportedVersion
from kvtop.domain.placement import span_of
from kvtop.domain.redact import shown_cut
from kvtop.domain.wording import mib
from kvtop.sources.bounded_http import (
    AnswerTooLarge,
    Deadline,
    DeadlineExpired,
    UnreadableEncoding,
    read_bounded,
)
from kvtop.sources.engines.registry import endpoint_reader

DEFAULT_TIMEOUT_S = 1.0
MAX_PAGE_BYTES = 32 << 20  # a /metrics page of many DP ranks is a few MB; past this it is not one
ANSWER_DEADLINES = 3  # a whole answer (headers and body) must arrive within this many timeouts
MAX_FIGURE = 1 << 53  # counts and bytes beyond float's exact integers are no engine's figures
_MESSAGE_CHARS = 300
# The deadline of the command reading the node (`with_live_state`), seen by every request it makes:
# the engines' readers keep their plain (http, base_url, timeout_s) signature.
_DEADLINE: ContextVar[Deadline | None] = ContextVar("kvtop_engine_http_deadline", default=None)

_FRACTIONS = {"kv_usage_fraction", "spec_acceptance"}


def own_sample(family: Any, sample: Any) -> bool:
    """Whether `sample` is its family's own figure: a counter's `_total`, not the `_created` timestamp
    prometheus_client adds beside it."""
    return bool(sample.name == family.name or sample.name == family.name + "_total")
FAILURE_PRECEDENCE = (
    EndpointState.BAD_PAYLOAD,
    EndpointState.HTTP_ERROR,
    EndpointState.TIMEOUT,
    EndpointState.UNREACHABLE,
)


class EndpointFailure(Exception):
    """One endpoint's named failure."""

    def __init__(self, state: EndpointState, message: str) -> None:
        message = one_line(message)
        super().__init__(message)
        self.state = state
        self.message = message


def one_line(text: str, limit: int = _MESSAGE_CHARS) -> str:
    """`text` as one short line: what a page quotes (its lines, binary bytes) never spans lines or runs on; redacted
    before it is cut (`shown_cut`: a cut first could leave a secret's head no shape matches)."""
    return shown_cut(" ".join(text.split()), limit)


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
    except EndpointFailure as failure:  # a figure no engine reports (`figure`), wherever it was read
        live = EngineLive(state=failure.state, message=one_line(f"{base_url}: {failure.message}"))
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
            no_api = span_of(engine.kind, engine.settings).no_api_reason
            if no_api is not None:  # a worker node of a multi-node engine, or a headless one
                live = EngineLive(state=EndpointState.NOT_QUERIED, message=no_api)
            elif deadline is not None and deadline.expired:
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


@dataclass(frozen=True)
class Page:
    """An endpoint's whole answer, read within the size and time bounds."""

    url: str
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON; anything else (not UTF-8, malformed, nested too deeply) is a bad payload."""
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise EndpointFailure(EndpointState.BAD_PAYLOAD, f"{self.url} is not JSON") from None


def get(http: httpx.Client, url: str, timeout_s: float) -> Page:
    """The answer at `url`: at most MAX_PAGE_BYTES inflated, whole within ANSWER_DEADLINES × `timeout_s`
    and the command's deadline (`with_live_state`); every failure is an `EndpointFailure` naming it."""
    command = _DEADLINE.get()
    answer = Deadline(ANSWER_DEADLINES * timeout_s)
    deadline = command if command is not None and command.remaining() < answer.remaining() else answer
    try:
        read = read_bounded(http, url, timeout_s=timeout_s, deadline=deadline, max_bytes=MAX_PAGE_BYTES)
    except DeadlineExpired:
        if deadline is command:
            why = f"the command's --timeout of {deadline.seconds:g} s ran out while reading it"
        else:  # a byte now and then never trips httpx's per-read timeout
            why = f"did not finish its answer within {answer.seconds:g} s: the server is busy or hung"
        raise EndpointFailure(EndpointState.TIMEOUT, f"{url}: {why}") from None
    except AnswerTooLarge:
        raise EndpointFailure(
            EndpointState.BAD_PAYLOAD, f"{url} answered more than {mib(MAX_PAGE_BYTES)}: not a page kvtop reads"
        ) from None
    except UnreadableEncoding as error:
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
    if read.status_code >= 400:
        raise EndpointFailure(EndpointState.HTTP_ERROR, f"{url} answered HTTP {read.status_code}")
    return Page(url=url, body=read.content)


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


def figure(value: float, metric: str) -> float | None:
    """A reported figure: None for NaN (Prometheus's absent sample); an infinity, a negative figure or one
    beyond MAX_FIGURE is a bad payload naming `metric`."""
    if math.isnan(value):
        return None
    if not 0 <= value <= MAX_FIGURE:
        raise EndpointFailure(
            EndpointState.BAD_PAYLOAD, f"{metric} = {value:g}: not a count, size or share an engine reports"
        )
    return value


def set_fact(facts: dict[str, Any], field: str, value: float, metric: str) -> None:
    """`facts[field]` from the sample `metric` reported (checked by `figure`; NaN leaves it unset)."""
    number = figure(value, metric)
    if number is not None:
        facts[field] = float(number) if field in _FRACTIONS else int(number)


def summarise(rank_facts: Iterable[dict[str, Any]]) -> EngineLive:
    """Engine-wide figures from per-rank ones (`EngineLive.of_ranks`), the ranks in a stable order."""
    ranks = sorted(
        (EngineLiveRank(**facts) for facts in rank_facts),
        key=lambda rank: (rank.engine_index or "", rank.dp_rank or 0, rank.pp_rank or 0, rank.tp_rank or 0),
    )
    return EngineLive.of_ranks(ranks)


def int_label(value: Any) -> int | None:
    """A whole number from a label or JSON value; None where `float_label` gives none ('None', absent)."""
    number = float_label(value)
    return None if number is None else int(number)


def float_label(value: Any) -> float | None:
    """A number from a label or JSON value: finite, at least 0 and at most MAX_FIGURE, else None (unknown)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value[:40] if isinstance(value, str) else value)
    except (ValueError, OverflowError):
        return None  # vLLM writes unset settings as the string "None"
    return number if 0 <= number <= MAX_FIGURE else None


def reported_version(value: Any) -> ReportedVersion | None:
    """An endpoint's `version` as the typed value the rest reads (`ReportedVersion`: its words as one redacted line,
    cut after redaction, and the release read in them: '0.5.9 api_key=…' → 0.5.9; 'dev' or '' → none, a named
    state). None where the answer holds no text there (absent, an object)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return ReportedVersion(words=str(value))
