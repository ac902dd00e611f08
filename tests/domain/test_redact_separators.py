"""A masked value keeps the text around it (session 61's operator pass).

Python's repr of argparse's `Namespace` (what an engine prints at start: vLLM's `non-default args`, SGLang's
`server_args=ServerArgs(...)`) separates its fields with `, `: the mask replaced the comma with the value, so
`api_key=None, hf_token=…` read `api_key=*** hf_token=…`. The expected texts are written by hand.
"""

from __future__ import annotations

import pytest

from kvtop.domain.secret_text import redact_text

KEY = "Q7vXk2pLm9key"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Namespace(api_key=None, port=8000)", "Namespace(api_key=***, port=8000)"),
        (f"Namespace(port=8000, api_key={KEY})", "Namespace(port=8000, api_key=***)"),
        (f"args: api_key={KEY}, hf_token=None, model='m'", "args: api_key=***, hf_token=***, model='m'"),
        (f"--api-key={KEY}", "--api-key=***"),  # a bare key to its end
        (f"--api-key={KEY},x2 --port 1", "--api-key=*** --port 1"),  # a comma inside a word is the key's
    ],
)
def test_the_separator_after_a_masked_value_stays(text: str, expected: str) -> None:
    assert redact_text(text) == expected


CREDENTIAL = "dXNlcjpRN3ZYazJwTG05"  # base64 of a user:password pair


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Authorization=Basic {CREDENTIAL}", "Authorization=Basic ***"),
        (f"headers: Authorization=Bearer {KEY}, x", "headers: Authorization=Bearer ***, x"),
        (f"Authorization: Basic {CREDENTIAL}", "Authorization: Basic ***"),  # as `:` gave it already
        ("--api-key=Basic", "--api-key=***"),  # a scheme word alone is the value
    ],
)
def test_a_scheme_given_by_equals_masks_the_credential_after_it(text: str, expected: str) -> None:
    """`Authorization=Basic <b64>` masked only "Basic" and showed the credential: `=` now reads a scheme as `:` did."""
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("--hf-token=token --port 8000", "--hf-token=*** --port 8000"),
        ("API_KEY=basic vllm serve m", "API_KEY=*** vllm serve m"),
    ],
)
def test_a_scheme_word_that_is_the_value_itself_is_masked_and_the_next_flag_stays(text: str, expected: str) -> None:
    """In a shell line `NAME=Basic` is the whole value and the next word a command or flag: only a token's shape
    (8 or more token characters, not a flag) after the scheme is read as its credential."""
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("auth: token --port 1", "auth: *** --port 1"),
        ("Authorization: Bearer --port 8000", "Authorization: *** --port 8000"),
        ("auth: token -p 1", "auth: *** -p 1"),
        ("Bearer --max-model-len 4096", "Bearer --max-model-len 4096"),
        ("Authorization=Bearer --max-model-len 4096", "Authorization=*** --max-model-len 4096"),
        (f"auth: token {KEY} --port 1", "auth: token *** --port 1"),  # a token after the scheme: still masked
        (f"Authorization: Bearer -{KEY}", "Authorization: Bearer ***"),  # base64url may open with '-'
        (f"Authorization=Bearer -{KEY}", "Authorization=Bearer ***"),  # was `=***` and showed the token
    ],
)
def test_a_flag_after_a_scheme_word_is_no_credential(text: str, expected: str) -> None:
    """Session 61's regression pass: `auth: token --port 1` read `--port` as the token after the scheme and
    printed `auth: token *** 1`. A flag (`--name`, `-x`) is never the credential: the scheme word is the value."""
    assert redact_text(text) == expected
