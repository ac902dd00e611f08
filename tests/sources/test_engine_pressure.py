"""Pressure from the engines' own metrics (issue 30): recorded /metrics pages read by the endpoint readers,
then `pressure_of` over two readings; the preemption finding on a node whose engine preempts."""

from __future__ import annotations

import httpx

from kvtop.domain.observe import EngineCounters
from kvtop.domain.pressure import pressure_of, with_counter_history
from kvtop.sources.engine_http import fetch_engine_live
from tests.data_paths import SAMPLES


def _page(relative: str) -> str:
    return (SAMPLES / relative).read_text()


def _serve(pages: dict[str, str]) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        body = pages.get(request.url.path)
        return httpx.Response(200, text=body) if body is not None else httpx.Response(404, text="not found")

    return httpx.Client(transport=httpx.MockTransport(answer))


V0_PAGE = "vllm_metrics/v0-aibrix-qwen2.5-coder-1.5b.txt"
SGLANG_PAGE = "sglang_metrics/sglang-docs-llama3.1-8b-2024.txt"


def test_vllm_v0_page_reports_preemptions_and_swapped_requests() -> None:
    # the recorded page: num_preemptions_total 0.0, num_requests_swapped 0.0 (a counter and a V0 gauge)
    live = fetch_engine_live("vllm", "127.0.0.1", 8000, client=_serve({"/metrics": _page(V0_PAGE)}))
    assert (live.preemptions_total, live.swapped_requests) == (0, 0)
    pressure = pressure_of(live)
    assert pressure is not None
    assert pressure.line() == "running 0 · waiting 0 · KV 0%"
    assert not pressure.preempting and not pressure.notable


def test_sglang_docs_page_gives_a_pressure_line() -> None:
    # sglang's production_metrics.md page: 162 running, 2,826 queued, token_usage 0.28
    live = fetch_engine_live("sglang", "127.0.0.1", 30000, client=_serve({"/metrics": _page(SGLANG_PAGE)}))
    pressure = pressure_of(live)
    assert pressure is not None
    assert pressure.line() == "running 162 · waiting 2,826 · KV 28%"
    assert pressure.notable and not pressure.preempting and not pressure.pool_full


def test_sglang_retraction_gauge_per_rank_is_not_a_counter() -> None:
    # the dp8 fragment has `sglang:num_retracted_reqs` (a gauge of the last batch), not the counter: no rate
    page = _page("sglang_metrics/sglang-dp8-deepseek-r1-multirank-labels-fragment.txt")
    live = fetch_engine_live("sglang", "127.0.0.1", 30000, client=_serve({"/metrics": page}))
    assert live.retractions_total is None


def _v0_with_preemptions(count: int) -> str:
    """The recorded V0 page with its preemption counter moved to `count` and its usage to 0.97: a second
    reading of the same server under load (every other line as recorded)."""
    lines = []
    for line in _page(V0_PAGE).splitlines():
        if line.startswith("vllm:num_preemptions_total{"):
            line = line.rsplit(" ", 1)[0] + f" {count}.0"
        elif line.startswith("vllm:gpu_cache_usage_perc{"):
            line = line.rsplit(" ", 1)[0] + " 0.97"
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_two_readings_give_a_preemption_rate() -> None:
    from kvtop.domain.observe import EngineInstance, NodeObservation

    def node(page: str, at: float) -> NodeObservation:
        live = fetch_engine_live("vllm", "127.0.0.1", 8000, client=_serve({"/metrics": page}))
        engine = EngineInstance(engine_id="vllm:1", kind="vllm", server_pid=1, host="127.0.0.1", port=8000, live=live)
        return NodeObservation(taken_at=at, engines=(engine,))

    first, history = with_counter_history(node(_page(V0_PAGE), 1000.0), {})
    assert pressure_of(first.engines[0].live).preemptions_per_min is None  # one reading: no rate yet
    second, history = with_counter_history(node(_v0_with_preemptions(14), 1060.0), history)
    pressure = pressure_of(second.engines[0].live)
    assert pressure is not None
    assert pressure.preemptions_per_min == 14.0  # 14 in 60 s
    assert pressure.preempting and pressure.pool_full
    assert "preempting 14.0/min" in pressure.line() and "KV 97%" in pressure.line()
    assert [c.preemptions for c in history["vllm:1"]] == [0, 14]


def test_a_counter_that_went_down_gives_no_rate() -> None:
    from kvtop.domain.observe import EndpointState, EngineLive

    live = EngineLive(state=EndpointState.OK, preemptions_total=3, taken_at=100.0, running_requests=5,
                      previous=EngineCounters(taken_at=40.0, preemptions=90))  # fmt: skip
    pressure = pressure_of(live)
    assert pressure is not None and pressure.preemptions_per_min is None


def test_vllm_acceptance_is_over_the_window() -> None:
    from kvtop.domain.observe import EndpointState, EngineLive

    live = EngineLive(state=EndpointState.OK, spec_accepted_tokens_total=2400, spec_draft_tokens_total=3000,
                      taken_at=100.0, previous=EngineCounters(taken_at=40.0, spec_accepted=1600, spec_drafted=2000))  # fmt: skip
    pressure = pressure_of(live)
    assert pressure is not None and pressure.spec_acceptance == 0.8  # (2400 − 1600) ÷ (3000 − 2000)
