"""Flags typed at the door (argparse `type=`s): a positive, finite number of seconds (every timeout and
interval), a GPU's index and a count of tokens (the probe's), a count of nodes or GPUs (the plan's), a name that
is not blank (a label value), and for Prometheus a URL httpx can send to, a CA bundle that loads, a token file
that is one word of printable ASCII.

Each refusal is argparse's one line naming the flag (`kvtop: error: --ca-file: …`, as every error begins),
never a traceback from the TLS or HTTP layer later (`ssl.SSLError`, `Invalid IPv6 URL`, a non-ASCII
token in a header). Nothing here prints a URL's password or the token (and the CLI's redaction masks
the word after `--token-file:`, so those messages open with the file's name).
"""

from __future__ import annotations

import argparse
import math
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from kvtop.domain.errors import InputError
from kvtop.domain.refresh import REFRESH_FLOOR, below_refresh_floor

MAX_URL_CHARS = 2048
MAX_TOKEN_BYTES = 64 << 10  # a bearer token (a JWT included) is a few KB
MAX_CA_BYTES = 16 << 20  # a CA bundle (every public root) is ~200 KB


MAX_SECONDS = 86_400.0  # a deadline longer than a day is a typo (and beyond what a timer thread can wait)



def _quoted(value: object) -> str:
    """`redact.quoted` (masked, then cut), imported when a message needs it: `kvtop --help` loads no pydantic
    (tests/test_cli_startup.py), and the redactor is pydantic's."""
    from kvtop.domain.redact import quoted

    return quoted(value)


def _shown_cut(text: str, limit: int) -> str:
    """`redact.shown_cut`, imported when a message needs it (as `_quoted`)."""
    from kvtop.domain.redact import shown_cut

    return shown_cut(text, limit)

def refresh_seconds(text: str) -> float:
    """A refresh interval: `positive_seconds`, and not `below_refresh_floor`."""
    value = positive_seconds(text)
    if below_refresh_floor(value):
        raise argparse.ArgumentTypeError(
            f"{REFRESH_FLOOR} (got {_quoted(text)})"
        )
    return value


def positive_seconds(text: str) -> float:
    """A duration: a finite number above 0 and at most a day (`nan`, `inf`, 0, negatives and
    longer are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, e.g. 5 (got {_quoted(text)})") from None
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        raise argparse.ArgumentTypeError(
            f"must be a positive number of seconds, at most {MAX_SECONDS:g} (got {_quoted(text)})")
    return value


def gpu_index(text: str) -> int:
    """`probe --gpu`: a GPU's index in NVML order (0, 1, …), not a GPU model's name as `plan --gpu H100` takes."""
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit()):
        raise argparse.ArgumentTypeError(
            f"expected the index of the GPU to probe (NVML order, as nvidia-smi lists them), e.g. 0 (got {_quoted(text)})"
        )
    return int(stripped)


def _whole(text: str, example: int) -> int:
    """`text` as a whole number, else argparse's one line with an `example` of the flag's own."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, e.g. {example} (got {_quoted(text)})") from None


def whole_number(text: str) -> int:
    """A count (`probe --tokens`, `--chunk-tokens`): a whole number; its range is the request's to check, which
    names the flag (`must be a positive number of tokens`)."""
    return _whole(text, 4096)


def node_count(text: str) -> int:
    """A count of nodes or GPUs (`plan --nodes`, `--gpus-per-node`): a whole number; its range is the layout's to
    check, which names the flag (`must be at least 1`)."""
    return _whole(text, 2)


def label_name(text: str) -> str:
    """A name kvtop writes as a label value (`export --node-name`): blank is refused, since an empty label
    reads as no label at all in Prometheus and the exporter would fall back to the host's name unasked."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must not be blank (got {_quoted(text)}); leave the option out for the default")
    return text


def prometheus_url(text: str) -> str:
    """An http(s) URL with a host and a valid port, one httpx can send to (the URL is not echoed: it may
    hold a password)."""
    from urllib.parse import urlsplit

    import httpx

    if len(text) > MAX_URL_CHARS:
        raise argparse.ArgumentTypeError(f"a URL of {len(text):,} characters (at most {MAX_URL_CHARS:,})")
    if not text.isprintable() or any(char.isspace() for char in text):
        raise argparse.ArgumentTypeError("the URL holds spaces or control characters")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - reading it checks it: a port that is not a number in 0-65535 raises
        httpx.URL(text)
    except (ValueError, httpx.InvalidURL) as error:  # 'Invalid IPv6 URL', a bad port, a host IDNA refuses
        raise argparse.ArgumentTypeError(f"not a URL kvtop can send to ({_shown_cut(str(error), 80)})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise argparse.ArgumentTypeError(
            "expected an http:// or https:// URL, e.g. https://prometheus.example:9090"
        )
    if not parts.hostname:
        raise argparse.ArgumentTypeError("the URL names no host, e.g. https://prometheus.example:9090")
    return text


def _regular_file(text: str, what: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes` (a FIFO or /dev/zero would block or never end)."""
    path = Path(text)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise argparse.ArgumentTypeError(f"{text!r} is not a regular file: a {what} is read from a file")
        if info.st_size > max_bytes:
            raise argparse.ArgumentTypeError(f"{text!r} is larger than {max_bytes:,} bytes: not a {what}")
        with path.open("rb") as handle:
            return handle.read(max_bytes + 1)[:max_bytes]
    except OSError as error:
        raise argparse.ArgumentTypeError(
            f"{text!r}: cannot read it ({error.strerror or type(error).__name__})"
        ) from None


def token_file(text: str) -> str:
    """A file holding one bearer token: UTF-8, printable ASCII once stripped (an HTTP header carries it)."""
    raw = _regular_file(text, "token file", MAX_TOKEN_BYTES)
    try:
        token = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not UTF-8 text: not a token file") from None
    if not token:
        raise argparse.ArgumentTypeError(f"{text!r} is empty")
    if not _one_word(token):
        raise argparse.ArgumentTypeError(f"{text!r} {_NOT_ONE_WORD}")
    return text


_NOT_ONE_WORD = (
    "holds a token with spaces, line breaks or non-ASCII characters: a bearer token is one word of ASCII"
)


def _one_word(token: str) -> bool:
    """Whether an HTTP header can carry the token as it is (it is never shown, only what is wrong)."""
    return token.isascii() and token.isprintable() and not any(char.isspace() for char in token)


def check_env_token(name: str, env: Mapping[str, str] = os.environ) -> None:
    """The token in the environment variable `name`, checked like a token file (its value is never shown)."""
    token = env.get(name, "").strip()
    if token and not _one_word(token):
        raise InputError(f"the variable {name} {_NOT_ONE_WORD}")


def ca_file(text: str) -> str:
    """A PEM CA bundle (or a folder of hashed certificates, as OpenSSL's capath) that TLS can load."""
    import ssl

    try:
        is_dir = Path(text).is_dir()
    except OSError:
        is_dir = False
    if not is_dir:
        _regular_file(text, "CA bundle", MAX_CA_BYTES)
    try:
        ssl.create_default_context(capath=text) if is_dir else ssl.create_default_context(cafile=text)
    except (ssl.SSLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error.__class__.__name__
        raise argparse.ArgumentTypeError(
            f"{text!r} holds no CA certificate TLS can load ({reason})"
        ) from None
    return text


def add_calibration_store(parser: argparse.ArgumentParser) -> None:
    """`--no-calibration-store`: neither read nor write this node's measured starts (docs/calibration.md);
    the TUI's parser and every headless command that plans or reads a start share it."""
    parser.add_argument("--no-calibration-store", action="store_true",
                        help="do not use or add to this node's calibration store (also KVTOP_NO_CALIBRATION_STORE=1)")  # fmt: skip
