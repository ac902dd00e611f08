"""A secret cut short by a quote's length limit shows none of its characters; a status word or an error's
sentence is no secret's value.

kvtop quotes an engine's refusal up to 400 characters and ends it with `…` (sources/engine_logs.py). Cut
first and redacted after, a bearer token or a URL's password cut before its end lost what marked it (the 8
characters a bare `Bearer` token needs, the `@` after a user-info), so its first characters were shown:
`auth Bearer Xy8Zw…`, `https://bob:Pw9Xq2…`; the quote is now redacted before it is cut (`redact.shown_cut`),
and the redactor still masks a cut secret's head for any text cut elsewhere. The refusal is vLLM's own (tests/data/cases/vllm/
vllm-8933-tp4-v062-worker-refusal, issue 8933), with the secret planted in its sentence.

Prometheus's `401` answer was shown as `prometheus unauthorized: *** refused the request`: the word
`unauthorized:` was read as a secret's name and the server's URL masked as its value.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from kvtop.cli import main
from tests.data_paths import CASES, CONFIGS

REFUSAL_LOG = CASES / "vllm" / "vllm-8933-tp4-v062-worker-refusal" / "engine.log"
END_OF_SENTENCE = "when initializing the engine."  # the refusal's quoted text starts at "The model's max seq len"
QUOTE_CHARS = 399  # what a quote keeps before its `…` (engine_logs._MAX_QUOTE − 1)
SECRET = "Q7vXk2pLm9ZrT4wB"


def planted_log(tmp_path: Path, before_secret: str, shown: int) -> Path:
    """The refusal with `before_secret` + SECRET appended, placed so that `shown` characters of
    the secret fall before the cut."""
    log = REFUSAL_LOG.read_text()
    line = next(line for line in log.splitlines() if END_OF_SENTENCE in line)
    start = line.index("The model's max seq len")
    at = line.index(END_OF_SENTENCE) + len(END_OF_SENTENCE) - start  # where the planted text begins
    filler = "y" * (QUOTE_CHARS - shown - at - 1 - len(before_secret))
    planted = f"{END_OF_SENTENCE} {filler}{before_secret}{SECRET} and more."
    path = tmp_path / "engine.log"
    path.write_text(log.replace(END_OF_SENTENCE, planted, 1))
    return path


@pytest.mark.parametrize("before_secret", ["proxy said Bearer ", "via https://bob:", "via redis://:"])
@pytest.mark.parametrize("shown", [3, 7])
def test_a_secret_cut_short_in_a_quoted_refusal_shows_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], before_secret: str, shown: int
) -> None:
    path = planted_log(tmp_path, before_secret, shown)
    model = str(CONFIGS / "meta-llama--Llama-3.1-70B.json")
    assert main(["explain", str(path), "--model", model, "--engine", "vllm", "--json"]) == 0
    refusal = json.loads(capsys.readouterr().out)["startup_error"]
    assert "***" in refusal and refusal.endswith("…")  # masked whole before the cut, which falls after it
    assert main(["explain", str(path), "--model", model, "--engine", "vllm"]) == 0
    out, err = capsys.readouterr()
    assert "the engine refused to start" in out
    assert [surface for surface, text in (("json", refusal), ("stdout", out), ("stderr", err))
            if SECRET[:3] in text] == []  # fmt: skip


def unauthorized(handler: BaseHTTPRequestHandler) -> None:
    body = b"unauthorized"
    handler.send_response(401)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def test_prometheus_refusing_the_request_names_the_server(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.local_http import serving

    with serving(unauthorized) as url:
        assert main(["cluster", "--prometheus", url, "--timeout", "5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kvtop: error: prometheus unauthorized: {url} refused the request (HTTP 401)")


@pytest.mark.parametrize("flag", ["--openai-api-key", "--hf-token", "--hub-password"])
def test_an_error_about_a_secret_flag_keeps_its_sentence(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    """`kvtop plan --api-key X` once read `--api-key: *** a flag of SGLang that kvtop knows`: the field and the
    sentence were one text, and the sentence's first word was masked as the flag's value. SGLang's `--api-key` and
    `--admin-api-key` are accepted now (no effect on memory, engines/sglang/flags_neutral.py); a secret flag SGLang
    does not have is refused with its sentence whole. The value itself is never quoted."""
    assert main(["plan", "--model", "llama-3-70b", "--tp", "8", flag, SECRET]) == 2
    err = capsys.readouterr().err
    assert err == (f"kvtop: error: {flag}: not a kvtop flag (kvtop plan --help lists them), nor one of SGLang's that "
                   "kvtop knows\n")


@pytest.mark.parametrize("flag", ["--api-key", "--admin-api-key"])
def test_sglangs_own_key_flags_are_accepted_named_and_never_shown(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    assert main(["plan", "--model", "llama-3-70b", "--tp", "8", flag, SECRET]) == 0
    out, err = capsys.readouterr()
    assert f"no effect on memory (accepted, not modelled): {flag}" in out
    assert SECRET not in out + err


def test_a_config_value_cut_to_a_quote_shows_no_password(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A config.json string over 256 characters is refused, quoting its first 37 characters and `…`
    (domain/config_schema.py): a URL's password there was cut before its '@', and 24 of its characters
    were shown (`got 'https://bob:Q7vXk2pLm9ZrT4wBQ7vXk2pL…)`). The config is Meta-Llama-3-70B's."""
    config = json.loads((CONFIGS / "meta-llama--Meta-Llama-3-70B.json").read_text())
    config["architectures"] = [f"https://bob:{SECRET}{SECRET}@hub.internal/{'x' * 300}"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert main(["plan", "--model", str(path)]) == 2
    err = capsys.readouterr().err
    # masked before the cut (redact.quoted, session 71): the host after the mask shows, none of the password
    assert err.startswith("kvtop: error: architectures[0]: must be at most 256 characters (got 'https://***@hub.internal/")
    assert SECRET[:3] not in err


@pytest.mark.parametrize(
    "text",
    [
        "NSATokenToKVPool: FP8 rows are 656 B on every GPU (v0.5.6 … v0.5.9)",  # kvtop's SGLang era (eras.py)
        "ReqToTokenPool: 4,096 requests",  # SGLang's request-to-token pool (python/sglang/srt/mem_cache)
    ],
)
def test_sglang_s_pool_classes_are_no_secret_names(text: str) -> None:
    """SGLang's KV pool classes hold the word 'token': the pool's first word was masked as a token's value."""
    from kvtop.domain.redact import redact_shown

    assert redact_shown(text) == text


@pytest.mark.parametrize("shown", [3, 7])
def test_a_prometheus_error_cut_inside_a_password_shows_none_of_it(
    capsys: pytest.CaptureFixture[str], shown: int
) -> None:
    """Prometheus's own error text is quoted up to 200 characters; a URL's password cut there was shown
    (`https://bob:Q7vXk (query 'up')`): the slice left no `…` to mark the cut."""
    from tests.local_http import serving

    before = " via https://bob:"
    message = "y" * (199 - len(before) - shown) + before + SECRET + "@proxy:9090 refused"

    def query_error(handler: BaseHTTPRequestHandler) -> None:
        body = json.dumps({"status": "error", "errorType": "bad_data", "error": message}).encode()
        handler.send_response(400)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    with serving(query_error) as url:
        assert main(["cluster", "--prometheus", url, "--timeout", "5"]) == 2
    out, err = capsys.readouterr()
    assert "bad_data" in err and "via https://***@pro" in err and "… (query" in err  # masked, then cut (marked)
    assert SECRET[:3] not in out + err


@pytest.mark.parametrize("cut_text", [
    "0.5.9 " + "x" * 22 + " AKIAIOSFOD…",  # an AWS key id cut to a 40-character quote
    "AKIAIOSFODNN7EX",  # ... and to a process name's 15 characters (the kernel's)
])  # fmt: skip
def test_an_aws_key_id_s_head_left_by_a_cut_elsewhere_is_masked(cut_text: str) -> None:
    """AWS's documented example id AKIAIOSFODNN7EXAMPLE: 'AKIA' + 16 of [A-Z2-7]. Its head is upper case with one
    digit, so the cut-token rule's 'random-looking' test passed it; its alphabet marks it now. A word stays."""
    from kvtop.domain.secret_text import redact_text

    shown = redact_text(cut_text)
    assert "IOSFOD" not in shown and "AKIA***" in shown
    assert redact_text("ASIAN food…") == "ASIAN food…"
