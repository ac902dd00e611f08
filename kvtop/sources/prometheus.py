"""A whole cluster through a Prometheus server's HTTP API (`/api/v1/query`), with httpx.

Reads DCGM-exporter framebuffer series (MiB; host label `Hostname` or `hostname`), each engine's own
KV gauges (the names its package declares: `usage_metrics`, `capacity_metrics`), and kvtop's own exporter series (aggregated server-side per instance), and
joins them into one `ClusterNode` per host. Every failure is a `PrometheusError` with a named
`PrometheusState`; a bearer token is sent but never shown, and TLS is always verified.

By job: the queries are prometheus_queries.py, typing each answer prometheus_parse.py, joining them into
nodes and engines prometheus_join.py; this module is the client and the reader that runs them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx

from kvtop.domain.cluster import ClusterView, PrometheusError, PrometheusState
from kvtop.domain.errors import InputError
from kvtop.gc_pause import collector_paused
from kvtop.sources.bounded_http import (
    AnswerTooLarge,
    Deadline,
    DeadlineExpired,
    UnreadableEncoding,
    read_bounded,
)
from kvtop.sources.prometheus_access import (
    TOKEN_ENV,
    not_the_api,
    redact_url,
    tls_context,
    why_unreachable,
    without_token,
)
from kvtop.sources.prometheus_join import join_answers
from kvtop.sources.prometheus_memory import AnswerMemory
from kvtop.sources.prometheus_parse import (
    Series,
    _decoded,
    _shown_labels,
    _vector,
    typed_answers,
)
from kvtop.sources.prometheus_queries import ALL_QUERIES, ENGINE_REPORTED, QUERIES

# the names this module has always offered (the split kept them here for their readers)
__all__ = [
    "ALL_QUERIES", "DEFAULT_STALE_AFTER_S", "ENGINE_REPORTED", "MAX_ANSWER_BYTES", "QUERIES", "ClusterReader",
    "PrometheusClient", "PrometheusError", "PrometheusState", "Series", "_shown_labels", "_vector", "join_answers",
    "typed_answers",
]  # fmt: skip

DEFAULT_STALE_AFTER_S = 120.0
MAX_ANSWER_BYTES = 64 << 20  # one query's JSON, inflated: a 1,000-node cluster's answer is a few MiB


class PrometheusClient:
    """Instant queries against one Prometheus server (bearer token optional, TLS verified)."""

    def __init__(self, url: str, *, token: str | None = None, timeout_s: float = 5.0,
                 ca_file: str | None = None, transport: httpx.BaseTransport | None = None) -> None:  # fmt: skip
        if urlsplit(url).scheme not in ("http", "https"):
            raise InputError(
                f"expected an http:// or https:// URL, got {redact_url(url)!r}", field="--prometheus"
            )
        parts = urlsplit(url)
        if parts.query or parts.fragment or url.rstrip("/").endswith(("?", "#")):
            # the query API's path is appended to the URL: '?…' or '#…' would swallow it (a 302 to the UI read as
            # a login page); the text after them is not echoed (a token may be in it)
            raise InputError(
                f"{redact_url(url)} has a query (?…) or fragment (#…): give the server's base URL, "
                "e.g. https://prometheus.example:9090 (a bearer token goes in --token-file)", field="--prometheus",
            )  # fmt: skip
        self.url = url.rstrip("/")
        self.shown_url = redact_url(self.url)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._token_sent = bool(token)
        self._token = token
        self._http = httpx.Client(
            headers=headers, timeout=timeout_s, transport=transport,
            verify=tls_context(ca_file) if ca_file else True,
        )
        self.timeout_s = timeout_s
        self._memory = AnswerMemory()

    def close(self) -> None:
        self._http.close()

    def query(self, expr: str, deadline: Deadline | None = None, *, keep_nan: bool = False) -> Series:
        """One instant query, read within the per-request timeout, `deadline` and MAX_ANSWER_BYTES
        (NaN samples dropped, or kept with `keep_nan`)."""
        url = f"{self.url}/api/v1/query"
        try:
            answer = read_bounded(
                self._http, url, timeout_s=self.timeout_s, deadline=deadline,
                max_bytes=MAX_ANSWER_BYTES, params={"query": expr},
            )  # fmt: skip
        except DeadlineExpired as err:
            seconds = deadline.seconds if deadline is not None else self.timeout_s
            raise PrometheusError(
                PrometheusState.TIMEOUT,
                f"{self.shown_url} gave no whole answer within --timeout {seconds:g} s",
            ) from err
        except httpx.TimeoutException as err:
            raise PrometheusError(
                PrometheusState.TIMEOUT, f"{self.shown_url} did not answer within {self.timeout_s:g} s"
            ) from err
        except (AnswerTooLarge, UnreadableEncoding) as err:
            raise PrometheusError(PrometheusState.BAD_PAYLOAD, f"{self.shown_url}: {err}") from err
        except httpx.HTTPError as err:
            raise PrometheusError(
                PrometheusState.UNREACHABLE, f"cannot reach {self.shown_url} ({why_unreachable(err, self.url)})"
            ) from err
        if answer.status_code in (401, 403):
            raise PrometheusError(PrometheusState.UNAUTHORIZED, self._refused(answer.status_code))
        content = without_token(answer.content, self._token)  # before any of it is quoted or cut
        wrong = not_the_api(answer.status_code, content, answer.headers.get("location"))
        if wrong is not None:
            raise PrometheusError(PrometheusState.BAD_PAYLOAD, f"{self.shown_url} {wrong}")
        if answer.status_code < 400:  # the series typed last time when only the evaluation stamp moved
            return self._memory.typed((expr, keep_nan), content,
                                      lambda: _vector(_decoded(content), expr, keep_nan=keep_nan))  # fmt: skip
        payload = _decoded(content)
        if answer.status_code >= 400 and not (isinstance(payload, dict) and payload.get("status") == "error"):
            raise PrometheusError(
                PrometheusState.HTTP_ERROR, f"{self.shown_url} answered HTTP {answer.status_code}"
            )
        return _vector(payload, expr, keep_nan=keep_nan)

    def _refused(self, status: int) -> str:
        """Why a 401/403 came back: with a token sent, that token was refused; with none, ask for one."""
        if self._token_sent:
            return (f"{self.shown_url} refused the bearer token kvtop sent (HTTP {status}; from --token-file, else "
                    f"${TOKEN_ENV}): check it is current and allowed to query this server")  # fmt: skip
        return f"{self.shown_url} refused the request (HTTP {status}); give a token with --token-file or ${TOKEN_ENV}"


class ClusterReader:
    """Reads the cluster: `read()` runs the queries in QUERIES (and GPU_LIST_QUERIES with `gpus`) and joins
    them per node."""

    def __init__(self, client: PrometheusClient, *, stale_after_s: float = DEFAULT_STALE_AFTER_S,
                 clock: Callable[[], float] = time.time, deadline_s: float | None = None, gpus: bool = False) -> None:  # fmt: skip
        self.client = client
        self.deadline_s = deadline_s
        self.stale_after_s = stale_after_s
        self.gpus = gpus  # also read every GPU's series (`ClusterNode.gpus`); the node list needs only the sums
        self._clock = clock

    def read(self) -> ClusterView:
        """Every query's answer within one deadline (`deadline_s`; None: each query its own timeout).

        When the deadline runs out after some answers came, the view is built from those and names
        the missing ones (`missing`); with no answer at all it is a TIMEOUT error."""
        with collector_paused():  # ~100,000 acyclic objects per refresh at 1,000 nodes (kvtop/gc_pause.py)
            return self._read()

    def _read(self) -> ClusterView:
        deadline = Deadline(self.deadline_s) if self.deadline_s is not None else None
        queries = ALL_QUERIES if self.gpus else QUERIES
        answers: dict[str, Series] = {}
        missing: list[str] = []
        for key, expr in queries.items():
            if missing:  # the deadline has passed: the rest cannot be asked
                missing.append(key)
                continue
            try:
                answers[key] = self.client.query(expr, deadline, keep_nan=True)
            except PrometheusError as err:
                if err.state is not PrometheusState.TIMEOUT or deadline is None or not deadline.expired:
                    raise
                if not answers:
                    raise
                missing.append(key)
        view = join_answers(
            {key: answers.get(key, []) for key in queries}, url=self.client.shown_url, taken_at=self._clock(),
            stale_after_s=self.stale_after_s, gpus=self.gpus,
        )  # fmt: skip
        if not missing:
            return view
        return view.model_copy(update={"missing": tuple(missing), "deadline_s": self.deadline_s})
