"""One deadline per command, one cap per answer: against real sockets, slow, dripping and bombing.

A local HTTP server (a thread) answers as Prometheus or as an engine would, but late, a byte at a
time, or as a gzip bomb; the commands must give up on time with a named state, and read no more
than the cap. Times are contract bounds (the deadline plus generous slack for a loaded machine),
not speed targets.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from kvtop.cli import main
from kvtop.domain.cluster import PrometheusState
from kvtop.domain.observe import EndpointState, EngineInstance, NodeObservation, NvmlState
from kvtop.sources.bounded_http import AnswerTooLarge, Deadline, read_bounded
from kvtop.sources.engine_http import with_live_state
from kvtop.sources.prometheus import QUERIES, ClusterReader, PrometheusClient, PrometheusError
from tests.sources.fake_prometheus import NOW, FakePrometheus, Target
from tests.ui.fakes import FakeSource, llama_snapshot

SLACK_S = 3.0  # a loaded 2-core machine: the bound is the deadline plus this


def _kvtop_page() -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    from kvtop.sources.exporter import SnapshotCollector

    registry = CollectorRegistry()
    registry.register(SnapshotCollector(FakeSource(llama_snapshot()), node="gpu-node-1", clock=lambda: NOW))
    return generate_latest(registry).decode()


Answer = Callable[[BaseHTTPRequestHandler], None]


@contextmanager
def serving(answer: Answer) -> Iterator[str]:
    """A real HTTP server on a free loopback port whose every GET is `answer(handler)`."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            with suppress(BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                answer(self)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


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
    assert code == 0 and took < 2 + SLACK_S
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
    assert code == 2 and took < 1 + SLACK_S
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
    assert raised.value.state is PrometheusState.TIMEOUT and took < 1.5 + SLACK_S


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
    assert took < 1.5 + SLACK_S
    assert first.state is EndpointState.TIMEOUT and "--timeout of 1.5 s ran out" in (first.message or "")
    assert second.state is EndpointState.TIMEOUT and (second.message or "").startswith("not read: ")
