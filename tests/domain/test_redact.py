"""Secret redaction: by the name a value is given or the place it sits, never by guessing at values.

Failures name the case, never the text that leaked (a test's output is a surface too).
"""

from __future__ import annotations

import signal
import string
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvtop.domain.redact import redact_argv, redact_mapping
from kvtop.domain.secret_names import is_secret_name
from kvtop.domain.secret_shapes import has_secret_shape, mask_secret_shapes
from kvtop.domain.secret_text import redact_text
from kvtop.domain.secret_userinfo import MASK
from tests.domain.redact_cases import PLAIN_ARGV, PLAIN_TEXT, SECRET_ARGV, SECRET_TEXT, S
from tests.domain.redact_corpus import BENIGN, TOKENS, secret_cases


def leaked(secret: str, shown: str, fixed: str = "", window: int = 6) -> bool:
    """Whether any `window` characters of `secret` appear in `shown` (and not in the fixed text around it)."""
    size = min(window, len(secret))
    return any(
        secret[i : i + size] in shown and secret[i : i + size] not in fixed
        for i in range(len(secret) - size + 1)
    )


@pytest.mark.parametrize(
    ("argv", "expected"), [case[1:] for case in SECRET_ARGV], ids=[c[0] for c in SECRET_ARGV]
)
def test_every_secret_spelling_in_an_argv_is_masked(argv: list[str], expected: list[str]) -> None:
    shown = redact_argv(argv)
    survived = leaked(S, "\x00".join(shown))
    assert not survived, "the secret survived"
    assert list(shown) == expected


@pytest.mark.parametrize(
    ("text", "expected"), [case[1:] for case in SECRET_TEXT], ids=[c[0] for c in SECRET_TEXT]
)
def test_every_secret_spelling_in_a_text_is_masked(text: str, expected: str) -> None:
    shown = redact_text(text)
    survived = leaked(S, shown)
    assert not survived, "the secret survived"
    assert shown == expected


@pytest.mark.parametrize("argv", [case[1] for case in PLAIN_ARGV], ids=[c[0] for c in PLAIN_ARGV])
def test_values_that_are_not_secrets_survive_unchanged(argv: list[str]) -> None:
    assert redact_argv(argv) == tuple(argv)
    assert redact_text(" ".join(argv)) == " ".join(argv)


@pytest.mark.parametrize("text", [case[1] for case in PLAIN_TEXT], ids=[c[0] for c in PLAIN_TEXT])
def test_messages_without_secrets_survive_unchanged(text: str) -> None:
    assert redact_text(text) == text


def test_secret_names() -> None:
    secret = ["--api-key", "HF_TOKEN", "HFTOKEN", "HUGGING_FACE_HUB_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY",
              "MY_PASSWORD", "PGPASSWORD", "DB_PASS", "GITHUB_PAT", "Authorization", "X-Amz-Signature", "sig",
              "apiKey", "--openai-key", "--api-keys", "-k", "client_secret", "Cookie", "oauth_token", "Authorization", "authorise",
              # a key's value and a per-user token are secrets, not KV heads or token counts (a review found both shown)
              "API_KEY_VALUE", "ENCRYPTION_KEY_VALUE", "--access-token-per-user", "TOKEN_USAGE_KEY"]  # fmt: skip
    plain = ["--max-total-tokens", "--tokenizer", "--max-num-batched-tokens", "--served-model-name", "--port",
             "CUDA_VISIBLE_DEVICES", "--kv-cache-dtype", "--return-tokens-as-token-ids", "--skip-tokenizer-init",
             "--allow-credentials", "--ssl-keyfile", "--max-token-len", "max_total_num_tokens", "--bypass-cache",
             "path", "pattern", "signal", "--num-passes", "Author", "authority", "token_capacity", "token_usage",
             "num_key_value_heads", "--num-key-value-heads", "key_value_cache", "tokens_per_user"]  # fmt: skip
    assert [name for name in secret if not is_secret_name(name)] == []
    assert [name for name in plain if is_secret_name(name)] == []


def test_mapping_values_of_secret_keys_and_secrets_inside_values_are_masked() -> None:
    flags = {"api-key": "sk-1", "trust-remote-code": True, "port": "1", "db": "redis://:pw1@cache:6379"}
    assert redact_mapping(flags) == {
        "api-key": MASK, "trust-remote-code": True, "port": "1", "db": "redis://***@cache:6379",
    }  # fmt: skip


# --- property: a random secret planted in any shape never survives ------------------------------


class Planted:
    """A generated secret; its repr hides it, so a failing example does not print it."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Planted({len(self.value)} chars)"


_SAFE = string.ascii_letters + string.digits + "-_.~+=!%^$"  # what a token is made of
_PASSWORD = _SAFE + "/@:"  # a password may also hold these (inside quotes or user-info)

# (shape, the characters its secret may hold): each shape is one spelling of the table
Shape = Callable[[str], list[str]]
SHAPES: list[tuple[str, Shape, str]] = [
    ("--api-key s", lambda s: ["vllm", "serve", "m", "--api-key", s, "--port", "8000"], string.printable),
    ("--api-key=s", lambda s: [f"--api-key={s}", "--port", "8000"], string.printable),
    ("--openai-key s", lambda s: ["--openai-key", s], string.printable),
    ("-k s", lambda s: ["-k", s, "--port", "1"], string.printable),
    ("-ks", lambda s: [f"-k{s}"], string.printable),
    ("HF_TOKEN=s", lambda s: ["env", f"HF_TOKEN={s}", "vllm"], string.printable),
    ("GITHUB_PAT=s", lambda s: [f"GITHUB_PAT={s}"], string.printable),
    ("PGPASSWORD=s", lambda s: [f"PGPASSWORD={s}"], string.printable),
    ("DB_PASS=s", lambda s: [f"DB_PASS={s}"], string.printable),
    ("bash -c --api-key", lambda s: ["bash", "-c", f"vllm serve m --api-key {s} --port 8000"], _PASSWORD),
    ("bash -c quoted", lambda s: ["bash", "-c", f"vllm serve m --api-key '{s} x' --port 8000"], _PASSWORD + " \""),
    ("bash -c HF_TOKEN=", lambda s: ["sh", "-c", f"HF_TOKEN={s} python -m sglang.launch_server"], _PASSWORD),
    ("JSON", lambda s: ["--config", f'{{"api_key": "{s}", "port": 1}}'], _PASSWORD + " ',{}[]"),
    ("Python dict", lambda s: ["--config", f"{{'hf_token': '{s}'}}"], _PASSWORD + ' ",{}[]'),
    ("--headers JSON", lambda s: [f'--headers={{"Authorization": "Bearer {s}"}}'], _PASSWORD + " ',{}"),
    ("YAML", lambda s: ["--config-yaml", f"model: m\napi_key: {s}\nport: 8000"], _PASSWORD),
    ("redis user-info", lambda s: [f"redis://:{s}@cache:6379/0"], _PASSWORD),
    ("URL password", lambda s: [f"HTTPS://user:{s}@hub.example/x"], _PASSWORD),
    ("URL token", lambda s: ["git", "clone", f"https://{s}@github.com/org/repo.git"], _SAFE + "@"),
    ("bare user-info", lambda s: ["--cache", f"user:{s}@cache.internal:6379"], _PASSWORD),
    ("?sig=", lambda s: [f"https://acct.blob.core.windows.net/c?sv=2022&sig={s}&se=2030"], _PASSWORD),
    ("X-Amz-Signature", lambda s: [f"https://b.s3.amazonaws.com/w?X-Amz-Signature={s}"], _PASSWORD),
    ("?key=", lambda s: [f"https://maps.example.com/api?key={s}"], _PASSWORD),
    ("header", lambda s: ["curl", "-H", f"Authorization: Bearer {s}"], _PASSWORD),
    ("X-Api-Key header", lambda s: ["curl", "-H", f"X-Api-Key: {s}"], _PASSWORD),
]  # fmt: skip


@st.composite
def planted_shapes(draw: st.DrawFn) -> tuple[str, Shape, Planted]:
    name, shape, alphabet = draw(st.sampled_from(SHAPES))
    secret = draw(
        st.text(alphabet=alphabet, min_size=6, max_size=40).filter(lambda s: not s.startswith("--"))
    )
    return name, shape, Planted(secret)


@settings(max_examples=600, deadline=None)
@given(planted_shapes())
def test_a_random_secret_in_any_shape_never_survives(case: tuple[str, Shape, Planted]) -> None:
    name, shape, planted = case
    argv = shape(planted.value)
    fixed = "\x00".join(shape("\x01"))
    shown = redact_argv(argv)
    survived = leaked(planted.value, "\x00".join(shown), fixed)
    assert not survived, f"a secret survived in shape {name}"
    if shape not in _ARGV_ONLY:
        survived = leaked(planted.value, redact_text(" ".join(argv)), fixed)
        assert not survived, f"a secret survived in shape {name} written as text"
    unchanged = redact_argv(shown) == shown
    assert unchanged, "redacting twice changed the result"


# values with spaces or quotes are one argv element but not one word of a shell line
_ARGV_ONLY = {shape for name, shape, alphabet in SHAPES if alphabet is string.printable}


# --- bounded work ----------------------------------------------------------------------------


@contextmanager
def finishes_within(seconds: int) -> Iterator[None]:
    """Fail (not hang) when the block runs past a generous limit; the figures are in benchmarks/."""

    def expired(_signum: int, _frame: object) -> None:
        raise AssertionError(f"redaction ran past {seconds} s: not linear in its input")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


MB = 1 << 20
HUGE_ARGUMENTS = {
    "dashes": "-a" * (MB // 2),
    "one long word then @": "a" * MB + " x:y@z",
    "many secret flags without values": "--api-key " * (MB // 10),
    "many flag pairs": "--api-key v " * (MB // 12),
    "escaped quotes": '{"api_key": "' + '\\"' * (MB // 2),
    "many queries": "token=" * (MB // 6),
    "at signs": "@" * MB,
    "user-info pairs": "a:b@" * (MB // 4),
    "open brackets under a secret key": '{"auth": ' + "[" * MB,
    "many words with @": "u:p@h " * (MB // 6),
    "quotes and colons": "'token': '" * (MB // 10),
}


@pytest.mark.parametrize("text", HUGE_ARGUMENTS.values(), ids=HUGE_ARGUMENTS.keys())
def test_a_one_megabyte_argument_is_redacted_in_linear_time(text: str) -> None:
    with finishes_within(30):
        shown = redact_argv(["vllm", "serve", text])
    assert len(shown[2]) <= len(text) + 3  # a mask never grows the text by more than itself
    assert redact_argv(["x", text, "--api-key", S])[2:] == ("--api-key", MASK)


# --- issue 25, item 4: by name and by shape, both directions, one function -------------------------

CORPUS_SECRETS = secret_cases()


def test_the_corpus_is_as_large_as_the_issue_asks() -> None:
    assert len(CORPUS_SECRETS) >= 150 and len(BENIGN) >= 100
    assert len({case[0] for case in CORPUS_SECRETS}) == len(CORPUS_SECRETS)
    assert len({case[0] for case in BENIGN}) == len(BENIGN)


@pytest.mark.parametrize(
    ("argv", "secret"), [case[1:] for case in CORPUS_SECRETS], ids=[case[0] for case in CORPUS_SECRETS]
)
def test_no_secret_of_the_corpus_survives_as_argv_or_as_text(argv: tuple[str, ...], secret: str) -> None:
    """The same function masks it whether kvtop holds an argv (a process) or a line (a log, a label)."""
    fixed = "\x00".join(argv).replace(secret, "")
    shown_argv, shown_text = "\x00".join(redact_argv(argv)), redact_text(" ".join(argv))
    assert not leaked(secret, shown_argv, fixed, window=8), "survived in the argv"
    assert not leaked(secret, shown_text, fixed, window=8), "survived in the text"
    assert MASK in shown_argv and MASK in shown_text


@pytest.mark.parametrize("argv", [case[1] for case in BENIGN], ids=[case[0] for case in BENIGN])
def test_every_benign_value_of_the_corpus_is_shown_as_it_is(argv: tuple[str, ...]) -> None:
    assert redact_argv(argv) == argv
    assert redact_text(" ".join(argv)) == " ".join(argv)


@pytest.mark.parametrize("token", list(TOKENS.values()), ids=list(TOKENS))
def test_each_issuers_shape_is_masked_wherever_it_stands(token: str) -> None:
    assert has_secret_shape(token)
    for text in (f"x {token} y", f"'{token}'", f"key={token}", f"/v1/{token}/x", f'{{"a": "{token}"}}'):
        assert token[:12] not in mask_secret_shapes(text), "the token survived"
