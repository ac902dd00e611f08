"""The bearer token kvtop sends Prometheus is never printed, even when the server (or a proxy in front of
it) repeats it bare in its answer.

The redactor masks a secret by the name that gives it (`token=`, `Bearer …`) or by an issuer's shape; a
token repeated after a plain word (`bad token Q7vX…`) has neither, so before this test `kvtop cluster`
printed `prometheus query_error: bad_data: bad token Q7vXk2pLm9ZrT4wB (query 'up')`. Only the client knows
the token's value: it masks it in every answer before any part is quoted, cut or typed
(`prometheus_access.without_token`). The answers are Prometheus's own error shape (`{"status": "error",
"errorType": …, "error": …}`, HTTP 400, as its API documents) and its success shape.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import pytest

from kvtop.cli import main
from tests.local_http import serving

TOKEN = "Q7vXk2pLm9ZrT4wB"  # no issuer's shape, so only its value can find it
SLASHED = "Zr4wB/Q7vXk2pLm9+Tq8/Xx="  # a base64 token: JSON may write each '/' as '\/'


def fragments(token: str, text: str) -> int:
    """How many runs of 5 characters of `token` are in `text` (a cut may keep its start only); a count, so a
    failure prints none of them."""
    return sum(token[i : i + 5] in text for i in range(len(token) - 4))


def answering(status: int, payload: str):
    def answer(handler: BaseHTTPRequestHandler) -> None:
        body = payload.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer


def echoing_error(prefix: str, token: str, *, escape_slashes: bool = False) -> str:
    """Prometheus's error shape, its message repeating the token after `prefix`."""
    text = json.dumps({"status": "error", "errorType": "bad_data", "error": f"{prefix}{token}"})
    return text.replace("/", "\\/") if escape_slashes else text


@pytest.mark.parametrize(
    ("token", "payload", "shown"),
    [
        (TOKEN, echoing_error("bad token ", TOKEN), "bad_data: bad token *** (query 'up')"),
        # the message is quoted to 200 characters (prometheus_parse._vector): the cut falls inside the token
        (TOKEN, echoing_error("x" * 190 + " ", TOKEN), "bad_data: " + "x" * 190 + " ***"),
        (SLASHED, echoing_error("invalid credential for user ada: ", SLASHED, escape_slashes=True), "ada: ***"),
    ],
    ids=["bare", "cut by the quote", "json-escaped slashes"],
)
def test_a_token_the_server_repeats_in_its_error_is_never_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], token: str, payload: str, shown: str
) -> None:
    monkeypatch.setenv("KVTOP_PROMETHEUS_TOKEN", token)
    with serving(answering(400, payload)) as url:
        for argv in (["cluster", "--prometheus", url], ["cluster", "--prometheus", url, "--json"]):
            assert main(argv) == 2
            out, err = capsys.readouterr()
            leaked = fragments(token, out + err)
            assert leaked == 0  # first: the line below would print the text
            assert shown in err and err.startswith("kvtop: error: prometheus query_error: ")
