"""A fake Hugging Face hub on a local port, for `HF_ENDPOINT`: the file endpoints huggingface_hub uses.

It answers `HEAD`/`GET /{repo}/resolve/{revision}/{file}` as the hub does (X-Repo-Commit, ETag,
X-Linked-Size for LFS files, `X-Error-Code` on 401/404, byte ranges with 206), and records every
request so a test can show that no tensor byte was asked for. A safetensors file is served from
its header alone: the bytes after the header exist only as a declared size.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class HubFile:
    head: bytes  # the bytes that exist (a whole small file, or a safetensors file's 8 + header)
    size: int  # the declared size (a safetensors file's tensors are never materialised)
    lfs: bool = False


@dataclass
class HubRepo:
    files: dict[str, HubFile] = field(default_factory=dict)
    gated: bool = False


@dataclass
class Request:
    method: str
    path: str
    range: str | None


def safetensors_file(tensors: dict[str, tuple[str, tuple[int, ...]]]) -> HubFile:
    """A safetensors file of `name: (dtype, shape)` with contiguous data_offsets (bf16/f32/... sizes)."""
    item = {"BF16": 2, "F16": 2, "F32": 4, "F8_E4M3": 1, "U8": 1, "I32": 4}
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        count = 1
        for dim in shape:
            count *= dim
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + count * item[dtype]],
        }
        offset += count * item[dtype]
    raw = json.dumps(header).encode()
    return HubFile(head=struct.pack("<Q", len(raw)) + raw, size=8 + len(raw) + offset, lfs=True)


class FakeHub:
    """`with FakeHub(repos) as hub:` serves on `hub.endpoint` until the block ends."""

    def __init__(self, repos: dict[str, HubRepo], *, silent: bool = False) -> None:
        self.repos = repos
        self.silent = silent  # accept connections but never answer (a black-holed hub)
        self.requests: list[Request] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def do_GET(self) -> None:
                self._answer(body=True)

            def _answer(self, *, body: bool) -> None:
                hub.requests.append(Request(self.command, self.path, self.headers.get("Range")))
                if hub.silent:
                    threading.Event().wait(30)
                    return
                match = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", self.path.split("?")[0])
                repo = hub.repos.get(match.group(1)) if match else None
                if repo is None:
                    return self._error(401, "RepoNotFound")
                if repo.gated:
                    return self._error(403, "GatedRepo")
                file = repo.files.get(match.group(3)) if match else None
                if file is None:
                    return self._error(404, "EntryNotFound")
                start, end, status = 0, file.size - 1, 200
                wanted = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range") or "")
                if wanted:
                    start, end = (
                        int(wanted.group(1)),
                        min(int(wanted.group(2) or file.size - 1), file.size - 1),
                    )
                    status = 206
                elif body and file.lfs:
                    return self._error(500, "WholeWeightsRefusedByTheFake")
                payload = b""
                if body:  # the header's bytes, then zeros for any tensor bytes asked for (never many)
                    payload = file.head[start : end + 1] + bytes(
                        min(1 << 20, max(0, end + 1 - max(start, len(file.head))))
                    )
                etag = hashlib.sha256(file.head).hexdigest()
                self.send_response(status)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{etag}"')
                if file.lfs:
                    self.send_header("X-Linked-Etag", f'"{etag}"')
                    self.send_header("X-Linked-Size", str(file.size))
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{end}/{file.size}")
                self.send_header("Content-Length", str(len(payload) if body or status == 206 else file.size))
                self.end_headers()
                if body:
                    self.wfile.write(payload)

            def _error(self, status: int, code: str) -> None:
                self.send_response(status)
                self.send_header("X-Error-Code", code)
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Handler
