"""HTTP answers read within a deadline and a size cap (httpx owns this module).

httpx's timeout bounds each network operation, not the answer: a server that drips a byte every
0.9 s keeps a 1 s read timeout happy for ever — in its TLS handshake, its status line and headers,
or its body — and a gzip answer is inflated without bound. Here one watchdog holds the whole
exchange to the command's `Deadline`: it learns each connection's socket from httpx's `trace`
extension as the connection is made, and when the deadline passes it shuts that socket down,
so the read blocked in connect, TLS, headers or body returns at once and the answer is
`DeadlineExpired`. The body is streamed and inflated chunk by chunk within `max_bytes` — so a slow
peer or a decompression bomb costs at most the deadline and `max_bytes` of memory. Each request
asks for its own connection (`Connection: close`), so the watchdog always sees the socket it
guards. kvtop asks for gzip or nothing, and inflates itself with a bound on every step (zlib's
`max_length`).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from kvtop.domain.wording import mib

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
        super().__init__(f"the answer is larger than {mib(max_bytes)} (inflated)")
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


class _Watchdog:
    """Shuts down every socket of one exchange when its deadline passes (from a timer thread): a read
    blocked in the TLS handshake, the headers or the body then fails at once."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(min(max(0.0, seconds), threading.TIMEOUT_MAX), self._fire)
        self._timer.daemon = True

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpx's (httpcore's) trace callback: keep the socket of each connection as it is made."""
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            fired = self.fired
        if fired:
            _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    @contextlib.contextmanager
    def running(self) -> Iterator[_Watchdog]:
        self._timer.start()
        try:
            yield self
        finally:
            self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


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
    if deadline is None:
        return _read(http, url, timeout_s, None, max_bytes, params, {})
    if deadline.expired:
        raise DeadlineExpired
    capped = deadline.remaining() < timeout_s  # each operation's timeout is what is left of the deadline
    with _Watchdog(deadline.remaining()).running() as watchdog:
        try:
            answer = _read(http, url, deadline.bound(timeout_s), deadline, max_bytes, params, {"trace": watchdog.trace})
        except httpx.TimeoutException:
            if watchdog.fired or capped:  # the deadline's remainder ran out (a TLS handshake is one operation)
                raise DeadlineExpired from None
            raise
        except (httpx.HTTPError, OSError):
            if watchdog.fired:  # the watchdog cut the exchange short: the deadline, not the peer, ended it
                raise DeadlineExpired from None
            raise
    if watchdog.fired:  # the socket was shut under a body still coming: what arrived is not the answer
        raise DeadlineExpired
    return answer


def _read(
    http: httpx.Client,
    url: str,
    timeout: float,
    deadline: Deadline | None,
    max_bytes: int,
    params: Mapping[str, str] | None,
    extensions: dict[str, Any],
) -> BoundedAnswer:
    """One GET, streamed and inflated within `max_bytes` (the deadline checked between chunks too)."""
    headers = {"Accept-Encoding": "gzip, identity", "Connection": "close"}
    with http.stream("GET", url, params=params, timeout=timeout, headers=headers, extensions=extensions) as response:
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
