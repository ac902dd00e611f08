"""Engine endpoints: recorded /metrics and server-info pages served by httpx.MockTransport,
plus a real closed port and a real server that answers too late."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from kvtop.domain.engines.stated_release import endpoint_release
from kvtop.domain.observe import EndpointState
from kvtop.domain.wording import GIB
from kvtop.sources.engine_http import fetch_engine_live, with_live_state
from kvtop.sources.processes import attribute_node
from tests.data_paths import SAMPLES
from tests.fakes.fake_process_table import SGLANG_SERVER_PID, VLLM_SERVER_PID, two_engine_node


def sample(relative: str) -> str:
    return (SAMPLES / relative).read_text()


def serving(pages: dict[str, tuple[int, str]]) -> httpx.Client:
    """A client whose transport answers `pages` by path (404 for anything else)."""

    def answer(request: httpx.Request) -> httpx.Response:
        status, body = pages.get(request.url.path, (404, "not found"))
        return httpx.Response(status, text=body)

    return httpx.Client(transport=httpx.MockTransport(answer))


def vllm(relative: str):
    return fetch_engine_live("vllm", "127.0.0.1", 8000, client=serving({"/metrics": (200, sample(relative))}))


def test_vllm_new_era_cache_config_gives_capacity_blocks_and_usage() -> None:
    live = vllm("vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt")
    assert live.state is EndpointState.OK
    assert (live.token_capacity, live.num_gpu_blocks, live.block_size) == (551520, 34470, 16)
    assert live.kv_usage_fraction == 0.0  # `vllm:kv_cache_usage_perc`, read as 0.0, not missing
    assert live.memory_fraction == 0.8
    assert [rank.engine_index for rank in live.ranks] == ["0"]
    assert live.base_url == "http://127.0.0.1:8000"


def test_vllm_v0_page_uses_the_old_usage_name_and_request_gauges() -> None:
    live = vllm("vllm_metrics/v0-aibrix-qwen2.5-coder-1.5b.txt")
    assert (live.num_gpu_blocks, live.block_size, live.memory_fraction) == (81767, 16, 0.9)
    assert live.token_capacity is None  # V0 does not state it; kvtop does not guess blocks × size
    assert live.kv_usage_fraction == 0.0  # from `vllm:gpu_cache_usage_perc`
    assert (live.running_requests, live.waiting_requests) == (0, 0)


def test_vllm_0_11_cache_config_line() -> None:
    live = vllm("vllm_metrics/v0.11.0-cache-config-info-line-issue28924.txt")
    assert (live.num_gpu_blocks, live.memory_fraction) == (9271, 0.65)


def test_sglang_metrics_page_gives_usage_tokens_and_requests() -> None:
    client = serving({"/metrics": (200, sample("sglang_metrics/sglang-docs-llama3.1-8b-2024.txt"))})
    live = fetch_engine_live("sglang", "127.0.0.1", 30000, client=client)
    assert live.state is EndpointState.OK
    assert (live.kv_usage_fraction, live.used_tokens) == (0.28, 123859)
    assert (live.running_requests, live.waiting_requests) == (162, 2826)
    assert any("/get_server_info" in note or "/server_info" in note for note in live.notes)


def test_sglang_first_generation_metrics_give_token_capacity() -> None:
    client = serving(
        {"/metrics": (200, sample("sglang_metrics/sglang-pr1853-2024-11-llama3.2-3b-fragment.txt"))}
    )
    assert fetch_engine_live("sglang", "127.0.0.1", 30000, client=client).token_capacity == 570979


def test_sglang_ranks_are_listed_from_their_labels() -> None:
    client = serving(
        {"/metrics": (200, sample("sglang_metrics/sglang-dp8-deepseek-r1-multirank-labels-fragment.txt"))}
    )
    live = fetch_engine_live("sglang", "127.0.0.1", 30000, client=client)
    assert [(rank.dp_rank, rank.tp_rank, rank.pid) for rank in live.ranks] == [
        (dp, dp, 910 + dp) for dp in range(8)
    ]


def test_sglang_server_info_with_the_old_route_and_metrics_disabled() -> None:
    info = sample("sglang_server_info/sglang-0.5.9-deepseek-r1-tp16-2node-pd-prefill-trimmed.json")
    live = fetch_engine_live("sglang", "10.99.91.39", 30000, client=serving({"/server_info": (200, info)}))
    assert live.state is EndpointState.OK
    assert live.version is not None
    assert (live.token_capacity, live.block_size, live.memory_fraction, endpoint_release("sglang", live.version).text) == (
        326223,
        1,
        0.8,
        "0.5.9",
    )
    assert live.weight_bytes == round(40.62 * GIB) and live.kv_cache_bytes == round(21.35 * GIB)
    assert [rank.token_capacity for rank in live.ranks] == [326223]
    assert any("--enable-metrics" in note for note in live.notes)


def test_garbage_metrics_page_is_a_bad_payload() -> None:
    client = serving({"/metrics": (200, "<html><body>Welcome to nginx!</body></html>")})
    live = fetch_engine_live("vllm", "127.0.0.1", 8000, client=client)
    assert live.state is EndpointState.BAD_PAYLOAD
    assert "/metrics" in (live.message or "")


def test_a_prometheus_page_of_another_program_is_a_bad_payload() -> None:
    client = serving({"/metrics": (200, sample("sglang_metrics/sglang-docs-llama3.1-8b-2024.txt"))})
    live = fetch_engine_live("vllm", "127.0.0.1", 8000, client=client)
    assert live.state is EndpointState.BAD_PAYLOAD
    assert "no vllm: metrics" in (live.message or "")


def test_sglang_server_info_that_is_not_json_is_a_bad_payload() -> None:
    client = serving({"/get_server_info": (200, "{not json"), "/metrics": (404, "")})
    live = fetch_engine_live("sglang", "127.0.0.1", 30000, client=client)
    assert live.state is EndpointState.BAD_PAYLOAD


def test_an_http_error_is_named() -> None:
    live = fetch_engine_live("vllm", "127.0.0.1", 8000, client=serving({"/metrics": (503, "busy")}))
    assert live.state is EndpointState.HTTP_ERROR
    assert "503" in (live.message or "")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_down_endpoint_is_unreachable() -> None:
    live = fetch_engine_live("sglang", "127.0.0.1", _closed_port(), timeout_s=1.0)
    assert live.state is EndpointState.UNREACHABLE
    assert "is the server up" in (live.message or "")


@contextmanager
def slow_server(delay_s: float) -> Iterator[int]:
    """A real HTTP server that answers every request after `delay_s`."""

    class Slow(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(delay_s)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return  # keep test output clean

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_a_slow_endpoint_times_out_within_the_given_timeout() -> None:
    """The server answers after 60 s; the 0.2 s timeout ends the read long before (the bound is a hang
    guard far above a loaded machine's figure, not a speed target)."""
    with slow_server(delay_s=60.0) as port:
        started = time.monotonic()
        live = fetch_engine_live("vllm", "127.0.0.1", port, timeout_s=0.2)
        elapsed = time.monotonic() - started
    assert live.state is EndpointState.TIMEOUT
    assert "0.2 s" in (live.message or "")
    assert elapsed < 30


def test_every_engine_on_the_node_gets_its_live_state() -> None:
    node = attribute_node(*two_engine_node())
    pages = {
        "/metrics": (200, sample("vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt")),
    }
    observed = with_live_state(node, client=serving(pages))
    vllm_engine = observed.engine(f"vllm:{VLLM_SERVER_PID}")
    sglang_engine = observed.engine(f"sglang:{SGLANG_SERVER_PID}")
    assert vllm_engine is not None and vllm_engine.live.token_capacity == 551520
    # the same mock answers SGLang's /metrics with a vLLM page, and it has no server info
    assert sglang_engine is not None and sglang_engine.live.state is EndpointState.BAD_PAYLOAD
