"""The exporter's HTTP server: one asyncio loop on one thread, whatever the crowd.

prometheus-client's own server (`start_http_server`) is socketserver's thread per connection
with a listen queue of 5 and no timeouts: a burst of scrapes overflows the queue (the kernel
drops the connections) and every idle connection holds a thread forever. A thread pool would
bound the threads but let idle connections occupy every worker, so scrapes would wait behind
them. Here a single stdlib asyncio loop holds each connection as a socket and a coroutine: the
listen queue is deep (`backlog`), a request head must arrive whole within `header_timeout_s`
and within `max_request_bytes`, a response must be taken within `write_timeout_s`, and at
`max_connections` the oldest connection still sending its head is dropped for the newcomer.
One request per connection (`Connection: close`), as prometheus-client's server does.

What to answer is the `Router`'s business (a pure function of the request); this module only
moves bytes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import resource
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus

from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted, redact_shown


@dataclass(frozen=True)
class ServerLimits:
    """How much one connection may ask of the exporter, and how many it holds at once."""

    backlog: int = 1024  # the kernel caps it at net.core.somaxconn (4096 on current kernels)
    max_connections: int = 2048  # lowered to fit the process's open-file limit
    header_timeout_s: float = 5.0  # from accept to the blank line that ends the request head
    write_timeout_s: float = 10.0  # for the client to take the whole response
    max_request_bytes: int = 8192  # request line and headers together

    def fitted_to_open_files(self) -> ServerLimits:
        """`max_connections` no higher than the open-file limit allows (64 kept for everything else)."""
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self
        room = max(16, soft - 64)
        if self.max_connections <= room:
            return self
        return dataclasses.replace(self, max_connections=room)


@dataclass(frozen=True)
class Request:
    """A parsed request head: the method, the path (query removed) and the headers we read."""

    method: str
    path: str
    headers: dict[str, str]  # lower-case names


@dataclass(frozen=True)
class Response:
    status: HTTPStatus
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()

    def encode(self, *, with_body: bool = True) -> bytes:
        """The whole response on the wire; HEAD gets the headers (Content-Length included) alone."""
        lines = [f"HTTP/1.1 {self.status.value} {self.status.phrase}"]
        lines += [f"{name}: {value}" for name, value in self.headers]
        lines += [f"Content-Length: {len(self.body)}", "Connection: close", "", ""]
        head = "\r\n".join(lines).encode("latin-1")
        return head + self.body if with_body else head


Router = Callable[[Request], Response]


def plain(status: HTTPStatus, text: str, *headers: tuple[str, str]) -> Response:
    return Response(status, f"{text}\n".encode(), (("Content-Type", "text/plain; charset=utf-8"), *headers))


class _BadRequest(Exception):
    def __init__(self, status: HTTPStatus, text: str) -> None:
        super().__init__(text)
        self.status = status


def parse_head(lines: list[bytes]) -> Request:
    """The request line and headers (CRLF or LF endings stripped); raises `_BadRequest`."""
    try:
        request_line = lines[0].decode("ascii")
    except (IndexError, UnicodeDecodeError) as err:
        raise _BadRequest(HTTPStatus.BAD_REQUEST, "malformed request line") from err
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise _BadRequest(HTTPStatus.BAD_REQUEST, "malformed request line")
    method, target, version = parts
    if not version.startswith("HTTP/1."):
        raise _BadRequest(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, "HTTP/1.x only")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep or not name or name != name.strip():
            raise _BadRequest(HTTPStatus.BAD_REQUEST, "malformed header line")
        headers[name.lower()] = value.strip()
    if target.lower().startswith(("http://", "https://")):  # absolute form: keep its path
        target = "/" + target.split("/", 3)[3] if target.count("/") >= 3 else "/"
    return Request(method=method, path=target.partition("?")[0], headers=headers)


@dataclass
class _Connection:
    writer: asyncio.StreamWriter
    reading_head: bool = True  # True until the whole head arrived (what eviction may drop)


class HttpServer:
    """Serves `router` on (host, port) from its own thread until `close()`."""

    def __init__(self, router: Router, limits: ServerLimits | None = None) -> None:
        self.router = router
        self.limits = (limits or ServerLimits()).fitted_to_open_files()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kvtop-export-http", daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self._connections: dict[asyncio.StreamWriter, _Connection] = {}  # oldest first

    def start(self, host: str, port: int) -> None:
        """Bind and start serving; an address that cannot be bound raises InputError (--listen)."""
        self._thread.start()
        try:
            family, bound_host = _first_address(host, port)
            started = asyncio.run_coroutine_threadsafe(self._listen(family, bound_host, port), self._loop)
            self._server = started.result(timeout=30)
        except OSError as err:
            self.close()
            raise InputError(
                f"cannot listen on {host}:{port}: {err.strerror or err}", field="--listen"
            ) from err
        self.port = self._server.sockets[0].getsockname()[1]

    async def _listen(self, family: socket.AddressFamily, host: str, port: int) -> asyncio.base_events.Server:
        return await asyncio.start_server(
            self._serve,
            host,
            port,
            family=family,
            backlog=self.limits.backlog,
            limit=self.limits.max_request_bytes,
        )

    def close(self) -> None:
        """Stop listening, drop every connection and end the loop's thread (idempotent)."""
        if not self._thread.is_alive():
            return
        with contextlib.suppress(RuntimeError, concurrent.futures.TimeoutError):  # 3.10: not TimeoutError
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._connections):
            writer.transport.abort()

    @property
    def open_connections(self) -> int:
        return len(self._connections)

    def _make_room(self) -> bool:
        """At the connection limit, drop the oldest connection still sending its head; False if none."""
        if len(self._connections) < self.limits.max_connections:
            return True
        for writer, connection in self._connections.items():  # insertion order: oldest first
            if connection.reading_head:
                writer.transport.abort()
                del self._connections[writer]
                return True
        return False

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self._make_room():
            writer.transport.abort()
            return
        connection = self._connections[writer] = _Connection(writer)
        try:
            try:
                request = await asyncio.wait_for(self._read_head(reader), self.limits.header_timeout_s)
                response = self._answer(request)
                with_body = request.method != "HEAD"
            except asyncio.TimeoutError:
                response, with_body = (
                    plain(HTTPStatus.REQUEST_TIMEOUT, "request head not received in time"),
                    True,
                )
            except _BadRequest as err:
                response, with_body = plain(err.status, str(err)), True
            connection.reading_head = False
            writer.write(response.encode(with_body=with_body))
            await asyncio.wait_for(writer.drain(), self.limits.write_timeout_s)
            writer.close()
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            writer.transport.abort()  # the peer went away or stopped reading
        finally:
            self._connections.pop(writer, None)

    def _answer(self, request: Request) -> Response:
        try:
            return self.router(request)
        except Exception as err:  # a bug in the router answers 500; the server keeps serving
            failure = redact_shown(f"{request.method} {quoted(request.path, 100)} failed: {type(err).__name__}: {err}")
            print(f"kvtop export: {failure}", file=sys.stderr)
            return plain(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error (see the exporter's log)")

    async def _read_head(self, reader: asyncio.StreamReader) -> Request:
        """Lines up to the blank one, `max_request_bytes` in all; a closed peer raises IncompleteReadError."""
        lines: list[bytes] = []
        size = 0
        while True:
            try:
                line = await reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as err:
                raise _BadRequest(
                    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request head too large"
                ) from err
            size += len(line)
            if size > self.limits.max_request_bytes:
                raise _BadRequest(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request head too large")
            line = line.rstrip(b"\r\n")
            if not line:
                if lines:
                    return parse_head(lines)
                continue  # blank lines before the request line are allowed (RFC 9112 §2.2)
            lines.append(line)


def _first_address(host: str, port: int) -> tuple[socket.AddressFamily, str]:
    """The first address `host` resolves to (one socket, so port 0 means one port)."""
    family, _type, _proto, _name, sockaddr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    return family, str(sockaddr[0])
