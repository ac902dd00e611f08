"""The first vLLM release whose wheel registers each class kvtop's vLLM rules name (tests/data/architectures/
vllm_first_releases.json, read by kvtop/domain/engines/vllm/class_releases.py's test).

Usage: python -m benchmarks.engine_registries.vllm_first_releases WORKDIR OUT.json
For each release 0.6.0 … 0.34.0 of kvtop's vLLM calendar (release_calendar.py) it takes the x86_64 wheel named by
PyPI's simple index (https://pypi.org/simple/vllm/, JSON) and reads from it, by HTTP range requests (a wheel is a
zip of 150-700 MB: only its directory and two members are fetched), vllm/model_executor/models/registry.py
(models/__init__.py before 0.6.2) into WORKDIR/<release>.py. Registered: the keys of every dict that `_VLLM_MODELS`
(`_MODELS` before 0.6.2) spreads, parsed with `ast` (no import). The Transformers backend fallback: the first
release whose registry names `TransformersModel` or `TransformersForCausalLM`. It writes, per class any of these
releases registers, the first release that has it, the release before it, the module (the registry value's first
item), the spans of consecutive releases that have it, and every release after the first that lacks it.
"""

from __future__ import annotations

import ast
import io
import json
import sys
import urllib.request
import zipfile
from pathlib import Path

from kvtop.domain.engines.versions import FIRST_RELEASE, parse_release
from kvtop.domain.engines.vllm.release_calendar import CALENDAR

INDEX = "https://pypi.org/simple/vllm/"
FIRST, LAST = "0.6.0", "0.34.0"
_MEMBERS = ("vllm/model_executor/models/registry.py", "vllm/model_executor/models/__init__.py")
_FALLBACK = ("TransformersModel", "TransformersForCausalLM")


class _RangeFile(io.RawIOBase):
    """A remote file read by HTTP range requests (zipfile reads the directory at its end, then one member)."""

    def __init__(self, url: str) -> None:
        self.url, self.pos = url, 0
        head = urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60)
        self.size = int(head.headers["Content-Length"])

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.size + offset
        return self.pos

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        count = min(len(buffer), self.size - self.pos)
        if count <= 0:
            return 0
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{self.pos + count - 1}"})
        data = urllib.request.urlopen(request, timeout=120).read()
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)


def fetch_registry(release: str, files: list[dict[str, str]], workdir: Path) -> Path:
    """WORKDIR/<release>.py: the registry module of that release's x86_64 wheel."""
    out = workdir / f"{release}.py"
    if not out.exists():
        wheel = next(f for f in files if f["filename"].startswith(f"vllm-{release}-")
                     and f["filename"].endswith("x86_64.whl"))  # fmt: skip
        archive = zipfile.ZipFile(_RangeFile(wheel["url"]))
        member = next(name for name in _MEMBERS if name in archive.namelist())
        out.write_bytes(archive.read(member))
    return out


def registered(path: Path) -> dict[str, str]:
    """Class → module of every dict `_VLLM_MODELS` (or `_MODELS`) spreads."""
    dicts: dict[str, ast.Dict] = {}
    for node in ast.parse(path.read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Dict):
            dicts[target.id] = value
    top = dicts.get("_VLLM_MODELS") or dicts["_MODELS"]
    found: dict[str, str] = {}
    for key, value in zip(top.keys, top.values, strict=True):
        if key is None and isinstance(value, ast.Name):
            for k, v in zip(dicts[value.id].keys, dicts[value.id].values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Tuple) and isinstance(v.elts[0], ast.Constant):
                    found[str(k.value)] = str(v.elts[0].value)
    return found


def main(workdir: Path, out: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    request = urllib.request.Request(INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    files = json.load(urllib.request.urlopen(request, timeout=60))["files"]
    first, last = parse_release(FIRST), parse_release(LAST)
    assert first is not None and last is not None
    releases = sorted(
        (row.release for row in CALENDAR if first <= (parse_release(row.release) or FIRST_RELEASE) <= last),
        key=lambda text: parse_release(text) or FIRST_RELEASE,
    )
    tables = {release: registered(fetch_registry(release, files, workdir)) for release in releases}
    fallback = next(r for r in releases if any(name in tables[r] for name in _FALLBACK))
    rows = {}
    for name in sorted(set().union(*tables.values())):
        present = [r for r in releases if name in tables[r]]
        index = releases.index(present[0])
        spans: list[list[str]] = []
        for release in present:
            if spans and releases.index(spans[-1][1]) == releases.index(release) - 1:
                spans[-1][1] = release
            else:
                spans.append([release, release])
        rows[name] = {
            "spans": spans,
            "first": present[0],
            "before": releases[index - 1] if index else None,
            "module": tables[present[0]][name],
            "absent_after_first": [r for r in releases[index:] if r not in present],
        }
    out.write_text(json.dumps({"read": f"{releases[0]} … {releases[-1]}", "releases": releases,
                               "transformers_fallback_first": fallback, "classes": rows}, indent=1) + "\n")  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
