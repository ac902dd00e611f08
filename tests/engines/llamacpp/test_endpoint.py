"""llama-server's live state from recorded /props, /slots and a /metrics page (tests/data/llamacpp/SOURCES.md),
served through httpx.MockTransport: every failure a named state, never an exception."""

from __future__ import annotations

import httpx

from kvtop.domain.observe import EndpointState
from kvtop.sources.engine_http import fetch_engine_live
from tests.data_paths import DATA

PAYLOADS = DATA / "llamacpp" / "payloads"


def _client(pages: dict[str, bytes | int]) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        page = pages.get(request.url.path, 404)
        return httpx.Response(page) if isinstance(page, int) else httpx.Response(200, content=page)

    return httpx.Client(transport=httpx.MockTransport(answer))


def test_metrics_props_and_slots() -> None:
    pages = {"/metrics": (PAYLOADS / "metrics.txt").read_bytes(), "/props": (PAYLOADS / "props-one-slot.json").read_bytes(),
             "/slots": (PAYLOADS / "slots-two.json").read_bytes()}  # fmt: skip
    live = fetch_engine_live("llamacpp", "127.0.0.1", 8080, client=_client(pages))
    assert live.state is EndpointState.OK
    assert (live.running_requests, live.waiting_requests) == (2, 3)  # the page's two gauges
    assert live.token_capacity == 1024  # one slot: its n_ctx is the whole cache


def test_without_metrics_the_slots_still_count_and_the_reason_is_kept() -> None:
    pages: dict[str, bytes | int] = {"/metrics": 501, "/slots": (PAYLOADS / "slots-two.json").read_bytes(), "/props": 404}
    live = fetch_engine_live("llamacpp", "127.0.0.1", 8080, client=_client(pages))
    assert live.state is EndpointState.OK and live.running_requests == 2  # both slots is_processing
    assert live.token_capacity is None  # two slots: n_ctx is per slot, the stream layout unstated


def test_nothing_answers_is_a_named_state() -> None:
    live = fetch_engine_live("llamacpp", "127.0.0.1", 8080, client=_client({"/metrics": 501, "/slots": 501, "/props": 404}))
    assert live.state is EndpointState.HTTP_ERROR
    assert "--metrics" in (live.message or "")
    bad = fetch_engine_live("llamacpp", "127.0.0.1", 8080, client=_client({"/props": b"[1]", "/slots": b"{}"}))
    assert bad.state is not EndpointState.OK
