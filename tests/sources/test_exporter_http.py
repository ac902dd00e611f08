"""The exporter's HTTP side: a crowd of connections holds no threads, slow requests time out, only
/metrics and /healthz answer, and /healthz fails once the served snapshot is stale.

Requests are written on raw sockets (an HTTP client would normalise `/../` or refuse odd methods).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kvtop.domain.errors import InputError
from kvtop.sources.exporter import Exporter, SnapshotCollector, parse_listen
from kvtop.sources.exporter_http import ServerLimits
from tests.ui.fakes import CO_TENANT_BYTES, ENGINE_ID, FakeSource, FixedClock, llama_snapshot

PARTIAL_HEAD = b"GET /metrics HTTP/1.1\r\nHost: kvtop\r\n"  # the blank line that ends a head never comes


def start(collector: SnapshotCollector, **options: object) -> Exporter:
    return Exporter(collector, parse_listen("127.0.0.1:0"), interval_s=3600, **options)  # type: ignore[arg-type]


def request(port: int, data: bytes, timeout_s: float = 5.0) -> bytes:
    """Send `data`, read to EOF; the whole response."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def head_and_body(response: bytes) -> tuple[dict[str, str], bytes]:
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")[1:]
    return {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}, body


def wait_until(condition: object, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def exporter() -> Iterator[Exporter]:
    served = start(SnapshotCollector(FakeSource(llama_snapshot()), node="node-a"))
    yield served
    served.close()


def test_idle_connections_hold_no_threads_and_a_scrape_still_answers() -> None:
    served = start(SnapshotCollector(FakeSource(llama_snapshot()), node="node-a"))
    threads_before = threading.active_count()
    idle = []
    try:
        for _ in range(300):
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
            sock.sendall(PARTIAL_HEAD)
            idle.append(sock)
        wait_until(lambda: served.open_connections == 300)
        assert threading.active_count() == threads_before  # a thread per connection would add 300
        page = httpx.get(f"http://127.0.0.1:{served.port}/metrics", timeout=5)
        assert page.status_code == 200
        assert "kvtop_rank_token_capacity" in page.text
        wait_until(lambda: served.open_connections == 300)  # the scrape was answered beside them, not instead
    finally:
        for sock in idle:
            sock.close()
        served.close()


def test_at_the_connection_limit_the_oldest_idle_connection_makes_room() -> None:
    served = start(
        SnapshotCollector(FakeSource(llama_snapshot()), node="node-a"),
        limits=ServerLimits(max_connections=20),
    )
    idle = []
    try:
        for _ in range(20):
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
            sock.sendall(PARTIAL_HEAD)
            idle.append(sock)
        wait_until(lambda: served.open_connections == 20)
        assert httpx.get(f"http://127.0.0.1:{served.port}/metrics", timeout=5).status_code == 200
        assert idle[0].recv(1) == b""  # the oldest was closed for the scrape
        wait_until(lambda: served.open_connections == 19)
    finally:
        for sock in idle:
            sock.close()
        served.close()


def test_a_request_head_that_never_ends_is_answered_408_at_the_header_timeout() -> None:
    served = start(
        SnapshotCollector(FakeSource(llama_snapshot()), node="node-a"),
        limits=ServerLimits(header_timeout_s=0.2),
    )
    try:
        with socket.create_connection(("127.0.0.1", served.port), timeout=60) as sock:
            started = time.monotonic()
            sock.sendall(PARTIAL_HEAD)
            response = sock.recv(65536)
            waited = time.monotonic() - started
            assert sock.recv(1) == b""  # and closed
        assert status_of(response) == 408
        assert 0.15 < waited < 30  # never before the timeout; the upper bound is only a hang guard
    finally:
        served.close()


def test_a_head_sent_a_byte_at_a_time_is_cut_off_at_the_header_timeout_not_per_byte() -> None:
    served = start(
        SnapshotCollector(FakeSource(llama_snapshot()), node="node-a"),
        limits=ServerLimits(header_timeout_s=0.3),
    )
    try:
        with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
            started = time.monotonic()
            answered = b""
            for byte in PARTIAL_HEAD * 10:  # 0.05 s a byte: about 19 s if every byte reset the clock
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    break
                time.sleep(0.05)
                sock.setblocking(False)
                try:
                    answered = sock.recv(65536)
                except BlockingIOError:
                    continue
                finally:
                    sock.setblocking(True)
                break
            waited = time.monotonic() - started
        assert status_of(answered) == 408
        assert waited < 12  # per byte, the clock would have run for about 19 s
    finally:
        served.close()


def test_a_request_head_over_the_size_limit_is_refused_431(exporter: Exporter) -> None:
    huge_header = b"X-Padding: " + b"a" * 9000 + b"\r\n"
    response = request(exporter.port, b"GET /metrics HTTP/1.1\r\n" + huge_header + b"\r\n")
    assert status_of(response) == 431
    many_headers = b"".join(b"X-%d: %s\r\n" % (i, b"b" * 90) for i in range(100))  # 10 KB of short lines
    assert status_of(request(exporter.port, b"GET /metrics HTTP/1.1\r\n" + many_headers + b"\r\n")) == 431
    assert exporter.limits.max_request_bytes == 8192


@pytest.mark.parametrize(
    "target",
    [
        "/",
        "/../../etc/passwd",
        "/metrics/",
        "/metricsx",
        "/Metrics",
        "/favicon.ico",
        "/healthz/../metrics",
        "/%6detrics",
        "//metrics",
    ],
)
def test_every_path_but_metrics_and_healthz_is_404(exporter: Exporter, target: str) -> None:
    response = request(exporter.port, f"GET {target} HTTP/1.1\r\nHost: kvtop\r\n\r\n".encode())
    assert status_of(response) == 404
    assert b"kvtop_" not in response


@pytest.mark.parametrize(
    "target", ["/metrics", "/metrics?name[]=kvtop_gpu_info", "http://node-a:9401/metrics"]
)
def test_metrics_is_served_with_or_without_a_query_and_in_absolute_form(
    exporter: Exporter, target: str
) -> None:
    response = request(exporter.port, f"GET {target} HTTP/1.1\r\nHost: kvtop\r\n\r\n".encode())
    assert status_of(response) == 200
    _, body = head_and_body(response)
    names = {family.name for family in text_string_to_metric_families(body.decode())}
    assert {"kvtop_node_info", "kvtop_rank_token_capacity"} <= names


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "BREW"])
@pytest.mark.parametrize("target", ["/metrics", "/healthz"])
def test_methods_other_than_get_and_head_are_refused_405(
    exporter: Exporter, method: str, target: str
) -> None:
    response = request(exporter.port, f"{method} {target} HTTP/1.1\r\nHost: kvtop\r\n\r\n".encode())
    headers, _ = head_and_body(response)
    assert status_of(response) == 405
    assert headers["allow"] == "GET, HEAD"


def test_head_gives_the_length_of_the_page_without_the_page(exporter: Exporter) -> None:
    full = request(exporter.port, b"GET /metrics HTTP/1.1\r\n\r\n")
    head_only = request(exporter.port, b"HEAD /metrics HTTP/1.1\r\n\r\n")
    headers, body = head_and_body(head_only)
    assert status_of(head_only) == 200 and body == b""
    assert int(headers["content-length"]) == len(head_and_body(full)[1]) > 10_000


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"GET /metrics\r\n\r\n", 400),
        (b"GET  /metrics HTTP/1.1\r\n\r\n", 400),
        (b"GET /metrics HTTP/2.0\r\n\r\n", 505),
        (b"GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", 400),
        (b"\xff\xfe /metrics HTTP/1.1\r\n\r\n", 400),
    ],
)
def test_malformed_requests_are_refused_with_a_status(exporter: Exporter, data: bytes, status: int) -> None:
    assert status_of(request(exporter.port, data)) == status


def test_openmetrics_and_gzip_are_served_when_asked_for(exporter: Exporter) -> None:
    page = httpx.get(
        f"http://127.0.0.1:{exporter.port}/metrics",
        timeout=5,
        headers={"Accept": "application/openmetrics-text; version=1.0.0", "Accept-Encoding": "gzip"},
    )
    assert page.status_code == 200
    assert page.headers["content-encoding"] == "gzip"
    assert page.headers["content-type"].startswith("application/openmetrics-text")
    assert page.text.endswith("# EOF\n")  # httpx took the gzip off


def foreign_bytes_on_gpu3(page: str) -> float:
    return next(
        sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
        if sample.name == "kvtop_rank_observed_bytes"
        and sample.labels == {"engine": ENGINE_ID, "rank": "dp0-tp3-pp0", "gpu": "3", "kind": "foreign"}
    )


def test_a_new_collection_is_served_by_the_next_scrape() -> None:
    source = FakeSource(llama_snapshot())
    collector = SnapshotCollector(source, node="node-a")
    served = start(collector)
    try:
        before = httpx.get(f"http://127.0.0.1:{served.port}/metrics", timeout=5).text
        source.push(llama_snapshot(co_tenant_gpu=3))
        assert collector.refresh()
        after = httpx.get(f"http://127.0.0.1:{served.port}/metrics", timeout=5).text
    finally:
        served.close()
    assert foreign_bytes_on_gpu3(before) == 0
    assert foreign_bytes_on_gpu3(after) == CO_TENANT_BYTES == 6 << 30


def health(port: int) -> tuple[int, dict]:
    answer = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
    return answer.status_code, answer.json()


def test_healthz_reports_the_snapshot_age_and_fails_once_it_is_stale() -> None:
    clock = FixedClock()
    source = FakeSource(llama_snapshot())
    collector = SnapshotCollector(source, node="node-a", monotonic=clock)
    served = start(collector, stale_after_s=7200)  # interval 3600 s
    try:
        clock.advance(5.5)
        assert health(served.port) == (
            200,
            {
                "status": "ok",
                "snapshot_age_seconds": 5.5,
                "stale_after_seconds": 7200,
                "last_collection": "ok",
                "source": "fake:llama-3-70b-tp8",
                "demo": False,
            },
        )
        clock.advance(7200)
        status, body = health(served.port)
        assert (status, body["status"], body["snapshot_age_seconds"]) == (503, "stale", 7205.5)
        source.push(RuntimeError("NVML: GPU is lost"))
        assert not collector.refresh()  # a failed collection does not make the old numbers fresh
        assert health(served.port)[0] == 503
        source.push(llama_snapshot())
        assert collector.refresh()
        assert health(served.port)[1]["snapshot_age_seconds"] == 0
        assert health(served.port)[0] == 200
    finally:
        served.close()


def test_healthz_fails_before_any_collection_succeeded_while_metrics_says_why() -> None:
    collector = SnapshotCollector(FakeSource(RuntimeError("NVML: driver not loaded")), node="node-a")
    served = start(collector)
    try:
        assert health(served.port) == (
            503,
            {
                "status": "no_snapshot",
                "snapshot_age_seconds": None,
                "stale_after_seconds": 10800,
                "last_collection": "failed",
                "source": "fake:llama-3-70b-tp8",
                "demo": False,
            },
        )
        page = httpx.get(f"http://127.0.0.1:{served.port}/metrics", timeout=5).text
        assert "kvtop_exporter_collect_success 0.0" in page
        assert "driver not loaded" not in page  # an error's text stays in the exporter's log
    finally:
        served.close()


@pytest.mark.parametrize(
    ("interval_s", "stale_after_s"), [(5, 5), (5, 2), (5, float("inf")), (5, float("nan"))]
)
def test_stale_after_must_be_longer_than_the_interval(interval_s: float, stale_after_s: float) -> None:
    collector = SnapshotCollector(FakeSource(llama_snapshot()), node="node-a")
    with pytest.raises(InputError, match="^--stale-after: must be longer than --interval"):
        Exporter(collector, parse_listen("127.0.0.1:0"), interval_s, stale_after_s=stale_after_s)
