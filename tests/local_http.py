"""A real HTTP server on a loopback port for tests that need real sockets (deadlines, hostile peers).

`serving(answer)` runs a threading `http.server` whose every GET is `answer(handler)` and yields its
base URL; a client that gives up (as a deadline makes it) is no error of the server's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
