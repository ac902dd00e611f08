"""HTTP answers read within a deadline and a size cap (httpx owns this module).

httpx's timeout bounds each network operation, not the answer: a server that drips a byte every
0.9 s keeps a 1 s read timeout happy for ever, and a gzip answer is inflated without bound. Here
the body is streamed and inflated chunk by chunk, and reading stops the moment the command's
`Deadline` passes or the inflated body passes `max_bytes` — so a slow peer or a decompression
bomb costs at most the deadline and `max_bytes` of memory. kvtop asks for gzip or nothing, and
inflates itself with a bound on every step (zlib's `max_length`).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx

#: No answer kvtop reads (a /metrics page, a server-info JSON, a Prometheus vector) comes near this.
DEFAULT_MAX_BYTES = 64 << 20


@dataclass
class Deadline:
    """One deadline for a whole command: every request it makes gets only the time left."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def remaining(self) -> float:
        return self.seconds - (self.clock() - self.started)

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def bound(self, timeout_s: float) -> float:
        """`timeout_s`, or less when the deadline is nearer (never below a millisecond)."""
        return max(0.001, min(timeout_s, self.remaining()))


class DeadlineExpired(Exception):
    """The command's deadline passed before (or while) the answer was read."""


class AnswerTooLarge(Exception):
    """The answer, inflated, is larger than the cap."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"the answer is larger than {max_bytes >> 20} MiB (inflated)")
        self.max_bytes = max_bytes


@dataclass(frozen=True)
class BoundedAnswer:
    """A whole answer: its status, headers and inflated body."""

    status_code: int
    headers: httpx.Headers
    content: bytes

    def as_response(self, url: str) -> httpx.Response:
        """The answer as an `httpx.Response` (body already inflated: no content-encoding left)."""
        headers = [
            (k, v) for k, v in self.headers.items() if k.lower() not in ("content-encoding", "content-length")
        ]
        return httpx.Response(
            self.status_code, headers=headers, content=self.content, request=httpx.Request("GET", url)
        )


class UnreadableEncoding(Exception):
    """The answer is compressed in a way kvtop did not ask for, or its compression is corrupt."""


def _inflater(encoding: str) -> zlib._Decompress | None:
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return None
    if name in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if name == "deflate":
        return zlib.decompressobj()
    raise UnreadableEncoding(f"the answer is {name}-encoded (kvtop asks for gzip or none)")


def read_bounded(
    http: httpx.Client,
    url: str,
    *,
    timeout_s: float,
    deadline: Deadline | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    params: Mapping[str, str] | None = None,
) -> BoundedAnswer:
    """GET `url` and read the whole answer, or raise: `DeadlineExpired`, `AnswerTooLarge`,
    `UnreadableEncoding`, or httpx's own errors (timeouts per operation, transport and protocol
    errors) for the caller to name."""
    if deadline is not None and deadline.expired:
        raise DeadlineExpired
    timeout = deadline.bound(timeout_s) if deadline is not None else timeout_s
    headers = {"Accept-Encoding": "gzip, identity"}
    with http.stream("GET", url, params=params, timeout=timeout, headers=headers) as response:
        if response.is_stream_consumed:  # read already (an in-memory transport, as tests use)
            if len(response.content) > max_bytes:
                raise AnswerTooLarge(max_bytes)
            return BoundedAnswer(response.status_code, response.headers, response.content)
        inflater = _inflater(response.headers.get("content-encoding", ""))
        body = bytearray()
        try:
            for chunk in response.iter_raw():
                pending = chunk
                while pending:
                    if inflater is None:
                        body += pending
                        pending = b""
                    else:  # never more than one byte past the cap, whatever the ratio
                        body += inflater.decompress(pending, max_bytes - len(body) + 1)
                        pending = inflater.unconsumed_tail
                    if len(body) > max_bytes:
                        raise AnswerTooLarge(max_bytes)
                if deadline is not None and deadline.expired:
                    raise DeadlineExpired
            if inflater is not None:
                body += inflater.flush(max_bytes - len(body) + 1)
        except zlib.error as error:
            raise UnreadableEncoding(f"the answer's compression is corrupt ({error})") from None
        if len(body) > max_bytes:
            raise AnswerTooLarge(max_bytes)
        return BoundedAnswer(response.status_code, response.headers, bytes(body))
