"""`kvtop cluster` pointed at the wrong thing says what it found and what to give instead.

Tried as an operator: a Grafana or login page given for the server read `not a Prometheus API answer for
'up'`; a proxy redirecting to its login page the same; `https://` to a plain-http Prometheus and a refused
port both read `cannot reach URL (ConnectError)`, the system's reason dropped. Each is now named (real
sockets: tests/local_http.py; the reasons are the kernel's and OpenSSL's own words).
"""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler

import pytest

from kvtop.cli import main
from tests.local_http import serving


def answering(status: int, body: bytes, **headers: str):
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        for name, value in {"Content-Length": str(len(body)), **headers}.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)

    return answer


def cluster_error(url: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["cluster", "--prometheus", url, "--timeout", "5"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    return err


def test_a_web_page_is_named_as_one(capsys: pytest.CaptureFixture[str]) -> None:
    page = answering(200, b"<!doctype html><html><title>Grafana</title></html>", **{"Content-Type": "text/html"})
    with serving(page) as url:
        err = cluster_error(url, capsys)
    assert err == (f"kvtop: error: prometheus bad_payload: {url} answered a web page (HTML), not the query API at "
                   "/api/v1/query: give the Prometheus server's own URL (e.g. https://prometheus.example:9090), "
                   "not Grafana's or its UI's\n")  # fmt: skip


def test_a_redirect_to_a_login_page_is_named_and_shows_no_password(capsys: pytest.CaptureFixture[str]) -> None:
    login = "https://sso:Q7vXk2pLm9@login.example/oauth2/start?rd=%2Fapi%2Fv1%2Fquery&state=Zr4wBQ7vXk2pLm9x"
    with serving(answering(302, b"", Location=login)) as url:
        err = cluster_error(url, capsys)
    assert "Q7vX" not in err and "Zr4w" not in err
    assert err == (f"kvtop: error: prometheus bad_payload: {url} redirected the query to "
                   "https://login.example/oauth2/start (HTTP 302): a login page or proxy answers there; give the "
                   "Prometheus server's own URL, or a bearer token with --token-file\n")  # fmt: skip


def test_a_refused_port_says_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as free:  # a port nothing listens on: bound, never listening
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
        err = cluster_error(f"http://127.0.0.1:{port}", capsys)
    assert err == (f"kvtop: error: prometheus unreachable: cannot reach http://127.0.0.1:{port} "
                   "(ConnectError: [Errno 111] Connection refused); "
                   "check the --prometheus URL and that Prometheus is running there\n")  # fmt: skip


def test_https_to_a_plain_server_says_it_may_speak_http(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(answering(200, b"{}")) as url:
        tls_url = url.replace("http://", "https://")
        err = cluster_error(tls_url, capsys)
    assert err.startswith(f"kvtop: error: prometheus unreachable: cannot reach {tls_url} (ConnectError: [SSL")
    assert err.endswith("; the server may speak plain http://); check the --prometheus URL and that Prometheus is "
                        "running there\n")


@pytest.mark.parametrize("tail", ["/?token=Q7vXk2pLm9", "#Q7vXk2pLm9", "/api?x=Q7vXk2pLm9#y", "/?"])
def test_a_url_with_a_query_or_fragment_is_refused_unechoed(tail: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--prometheus http://host:9090/?token=…` was joined as `…/?token=…/api/v1/query` (and `#…` dropped the API
    path): the server's UI answered 302, read as "a login page or proxy answers there". Refused before any request,
    the query's text not shown (a token may be in it)."""
    with serving(answering(200, b"{}")) as url:
        err = cluster_error(url + tail, capsys)
    assert "Q7vX" not in err
    assert "has a query (?…) or fragment (#…): give the server's base URL" in err
