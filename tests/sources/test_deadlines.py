"""One deadline per command, one cap per answer: against real sockets, slow, dripping and bombing.

A local HTTP server (a thread) answers as Prometheus or as an engine would, but late, a byte at a
time — in its TLS handshake, its headers or its body — or as a gzip bomb; the commands must give up
at their deadline with a named state, and read no more than the cap. Each dripping server would go
on for minutes; the bound a test checks (`HANG_GUARD_S`) is far above any loaded machine's figure
for a deadline of a second or two, so it tells a deadline that holds from one that does not, and
is no speed target.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from kvtop.cli import main
from kvtop.domain.cluster import PrometheusState
from kvtop.domain.observe import EndpointState, EngineInstance, NodeObservation, NvmlState
from kvtop.sources.bounded_http import AnswerTooLarge, Deadline, DeadlineExpired, read_bounded
from kvtop.sources.engine_http import with_live_state
from kvtop.sources.prometheus import QUERIES, ClusterReader, PrometheusClient, PrometheusError
from tests.local_http import Answer, serving
from tests.sources.fake_prometheus import NOW, FakePrometheus, Target
from tests.ui.fakes import FakeSource, llama_snapshot

HANG_GUARD_S = 60.0  # every dripping server below would go on for minutes; the deadlines are 1-2 s


def _kvtop_page() -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    from kvtop.sources.exporter import SnapshotCollector

    registry = CollectorRegistry()
    registry.register(SnapshotCollector(FakeSource(llama_snapshot()), node="gpu-node-1", clock=lambda: NOW))
    return generate_latest(registry).decode()


def prometheus_answers(delay_s: float) -> Answer:
    """The fake Prometheus' answer to each query, each `delay_s` late."""
    fake = FakePrometheus([Target("kvtop", "gpu-node-1:9401", _kvtop_page())])

    def answer(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(delay_s)
        response = fake.handler(httpx.Request("GET", f"http://prometheus{handler.path}"))
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(response.content)))
        handler.end_headers()
        handler.wfile.write(response.content)

    return answer


def dripping(handler: BaseHTTPRequestHandler) -> None:
    """Headers at once, then one byte every 0.2 s for ever: no single read ever times out."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    for _ in range(10_000):
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.2)


def dripping_headers(handler: BaseHTTPRequestHandler) -> None:
    """The status line, then one header line every 0.3 s for ever (before: the deadline was checked
    between body chunks only, so `cluster --timeout 5` ran 131 s and `snapshot` up to 220 s)."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    handler.wfile.flush()
    for number in range(10_000):
        handler.wfile.write(f"X-Drip-{number}: a\r\n".encode())
        handler.wfile.flush()
        time.sleep(0.3)


def gzip_bomb(inflated_mib: int) -> Answer:
    """`inflated_mib` MiB of spaces, gzip-compressed (≈ 1,000:1)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * (1 << 20)
    body = b"".join(packer.compress(block) for _ in range(inflated_mib)) + packer.flush()

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer


def test_the_cluster_command_keeps_one_deadline_and_says_what_is_missing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each query answers 0.8 s late: 11 queries would take 8.8 s; the deadline of 2 s holds, and
    the answer names every query that did not come back."""
    with serving(prometheus_answers(0.8)) as url:
        started = time.monotonic()
        code = main(["cluster", "--prometheus", url, "--timeout", "2", "--json"])
        took = time.monotonic() - started
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and took < HANG_GUARD_S
    assert out["deadline_s"] == 2 and out["missing"]
    assert set(out["missing"]) < set(QUERIES) and out["missing"] == list(QUERIES)[-len(out["missing"]) :]


def test_the_cluster_text_says_the_answer_is_partial(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(prometheus_answers(0.8)) as url:
        assert main(["cluster", "--prometheus", url, "--timeout", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("partial: no answer within --timeout 2 s for: ")


def test_no_answer_at_all_within_the_deadline_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serving(prometheus_answers(5.0)) as url:
        started = time.monotonic()
        code = main(["cluster", "--prometheus", url, "--timeout", "1", "--json"])
        took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 2 and took < HANG_GUARD_S
    assert err.startswith("kvtop: error: prometheus timeout: ") and err.count("\n") == 1


def test_a_dripping_server_cannot_outlast_the_deadline() -> None:
    """Every read gets a byte within its 1 s timeout; only the deadline ends it."""
    with serving(dripping) as url:
        client = PrometheusClient(url, timeout_s=1.0)
        started = time.monotonic()
        with pytest.raises(PrometheusError) as raised:
            ClusterReader(client, deadline_s=1.5).read()
        took = time.monotonic() - started
        client.close()
    assert raised.value.state is PrometheusState.TIMEOUT and took < HANG_GUARD_S


def test_a_gzip_bomb_from_prometheus_is_refused_at_the_cap() -> None:
    """256 MiB inflated from ≈ 256 KiB on the wire: refused at 64 MiB, a named bad payload."""
    with serving(gzip_bomb(256)) as url:
        client = PrometheusClient(url, timeout_s=10.0)
        with pytest.raises(PrometheusError) as raised:
            client.query("up")
        client.close()
    assert raised.value.state is PrometheusState.BAD_PAYLOAD
    assert "larger than 64 MiB (inflated)" in str(raised.value)


def test_the_cap_holds_whatever_the_compression_ratio() -> None:
    """read_bounded never keeps more than the cap + 1 byte, even from one chunk that inflates 1,000×."""
    with serving(gzip_bomb(8)) as url, httpx.Client() as http:
        with pytest.raises(AnswerTooLarge):
            read_bounded(http, url, timeout_s=5.0, max_bytes=1 << 20)
        whole = read_bounded(http, url, timeout_s=5.0, max_bytes=8 << 20)
    assert whole.content == b" " * (8 << 20)  # inflated exactly, at the cap


def test_a_plain_gzip_answer_reads_as_its_text() -> None:
    body = gzip.compress(b'{"status": "success", "data": {"resultType": "vector", "result": []}}')

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    with serving(answer) as url:
        client = PrometheusClient(url)
        assert client.query("up") == []
        client.close()


def _engine(kind: str, port: int, pid: int) -> EngineInstance:
    return EngineInstance(engine_id=f"{kind}:{pid}", kind=kind, server_pid=pid, host="127.0.0.1", port=port)


def test_engines_not_read_before_the_nodes_deadline_are_named_timeout() -> None:
    """Two engines behind a server that drips: the first uses up the 1.5 s deadline, the second is
    never asked, and both say why."""
    with serving(dripping) as url:
        port = int(url.rsplit(":", 1)[1])
        node = NodeObservation(
            taken_at=0.0, nvml_state=NvmlState.OK,
            engines=(_engine("sglang", port, 100), _engine("vllm", port, 200)),
        )  # fmt: skip
        started = time.monotonic()
        read = with_live_state(node, timeout_s=1.0, deadline=Deadline(1.5))
        took = time.monotonic() - started
    first, second = (engine.live for engine in read.engines)
    assert took < HANG_GUARD_S
    assert first.state is EndpointState.TIMEOUT and "--timeout of 1.5 s ran out" in (first.message or "")
    assert second.state is EndpointState.TIMEOUT and (second.message or "").startswith("not read: ")


# --- the whole exchange: TLS handshake, headers (issue 25, item 2) ---------------------------------


@contextmanager
def raw_server(handle: Callable[[socket.socket], None]) -> Iterator[int]:
    """A TCP server on a free loopback port whose every connection is `handle(connection)`."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_quietly, args=(handle, connection), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


def _quietly(handle: Callable[[socket.socket], None], connection: socket.socket) -> None:
    with suppress(OSError), connection:
        handle(connection)


def dripping_tls_handshake(connection: socket.socket) -> None:
    """Reads the ClientHello, then answers a TLS record header announcing 16 KiB and one byte of it
    every 0.3 s: the handshake never times out a read, and never ends."""
    connection.recv(4096)
    connection.sendall(b"\x16\x03\x03\x40\x00")
    for _ in range(10_000):
        connection.sendall(b"\x00")
        time.sleep(0.3)


def test_a_server_dripping_its_headers_cannot_outlast_the_deadline() -> None:
    with serving(dripping_headers) as url, httpx.Client() as http:
        started = time.monotonic()
        with pytest.raises(DeadlineExpired):
            read_bounded(http, url, timeout_s=1.0, deadline=Deadline(1.5))
        took = time.monotonic() - started
    assert took < HANG_GUARD_S


def test_a_server_dripping_its_tls_handshake_cannot_outlast_the_deadline() -> None:
    with raw_server(dripping_tls_handshake) as port, httpx.Client() as http:
        started = time.monotonic()
        with pytest.raises(DeadlineExpired):
            read_bounded(http, f"https://127.0.0.1:{port}/api/v1/query", timeout_s=30.0, deadline=Deadline(1.5))
        took = time.monotonic() - started
    assert took < HANG_GUARD_S


def test_cluster_keeps_its_timeout_against_dripping_headers(capsys: pytest.CaptureFixture[str]) -> None:
    """`cluster --timeout 2` against a Prometheus that drips header lines: one line, exit 2, named timeout."""
    with serving(dripping_headers) as url:
        started = time.monotonic()
        code = main(["cluster", "--prometheus", url, "--timeout", "2"])
        took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 2 and took < HANG_GUARD_S
    assert err.startswith("kvtop: error: prometheus timeout: ") and err.count("\n") == 1


def test_an_engine_dripping_its_headers_is_named_timeout_within_the_nodes_deadline() -> None:
    with serving(dripping_headers) as url:
        port = int(url.rsplit(":", 1)[1])
        node = NodeObservation(taken_at=0.0, nvml_state=NvmlState.OK, engines=(_engine("sglang", port, 100),))
        started = time.monotonic()
        read = with_live_state(node, timeout_s=1.0, deadline=Deadline(1.5))
        took = time.monotonic() - started
    (engine,) = read.engines
    assert took < HANG_GUARD_S
    assert engine.live.state is EndpointState.TIMEOUT and "--timeout of 1.5 s ran out" in (engine.live.message or "")


def test_a_prompt_answer_is_read_whole_with_the_watchdog_armed() -> None:
    with serving(prometheus_answers(0.0)) as url:
        client = PrometheusClient(url, timeout_s=5.0)
        assert client.query("up", Deadline(30.0)) == [({"__name__": "up", "job": "kvtop", "instance": "gpu-node-1:9401"}, 1.0)]
        client.close()
