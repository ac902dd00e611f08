"""The first SGLang release whose wheel registers each class kvtop's SGLang rules name (tests/data/architectures/
sglang_first_releases.json, read by kvtop/domain/engines/sglang/class_releases.py's test).

Usage: python -m benchmarks.engine_registries.sglang_first_releases WORKDIR OUT.json
Downloads each release of kvtop's SGLang calendar (releases.py) with `pip download sglang==X --no-deps` into
WORKDIR, reads every `EntryClass` of sglang/srt/models/*.py with `ast` (read_registries._entry_names, no import)
and the wheel's `Requires-Dist: transformers==` pin, and writes, per class the rules name (a quoted class name in
kvtop/domain/engines/sglang/*.py other than architectures.py), the first release that has it, the release before
it, the file, and every release after the first that lacks it (none, when read in session 63).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from benchmarks.engine_registries.read_registries import _entry_names
from kvtop.domain.engines.sglang.releases import CALENDAR
from kvtop.domain.engines.versions import FIRST_RELEASE, parse_release

RULES = Path(__file__).resolve().parents[2] / "kvtop/domain/engines/sglang"
_MODEL_FILE = re.compile(r"sglang/srt/models/[^/]+\.py")


def read_wheel(release: str, workdir: Path) -> dict[str, object]:
    """The classes (→ models file) and the transformers pin of one release's wheel."""
    folder = workdir / release
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", f"sglang=={release}", "--no-deps", "-d", str(folder), "-q"]
    subprocess.run(command, check=True, capture_output=True)
    wheel = next(folder.glob("*.whl"))
    classes: dict[str, str] = {}
    pin = ""
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if _MODEL_FILE.fullmatch(name):
                for found in _entry_names(ast.parse(archive.read(name).decode("utf-8-sig"))):
                    classes.setdefault(found, name.removeprefix("sglang/srt/models/"))
            if name.endswith(".dist-info/METADATA"):
                pins = re.findall(r"^Requires-Dist: transformers==([^;\s]+)", archive.read(name).decode(), re.M)
                pin = pins[0] if pins else ""
    wheel.unlink()  # read: ~100 wheels of 2-6 MB
    return {"wheel": wheel.name, "transformers": pin, "classes": classes}


def named_classes() -> set[str]:
    """Quoted class names the SGLang rules name (architectures.py's registry lists left out)."""
    found: set[str] = set()
    for path in RULES.glob("*.py"):
        if path.name != "architectures.py":
            found.update(re.findall(r'"([A-Z][A-Za-z0-9_]*)"', path.read_text()))
    return found


def main(workdir: Path, out: Path) -> None:
    releases = sorted((row.release for row in CALENDAR), key=lambda text: parse_release(text) or FIRST_RELEASE)
    wheels = {release: read_wheel(release, workdir) for release in releases}
    newest = wheels[releases[-1]]["classes"]
    assert isinstance(newest, dict)
    rows = {}
    for name in sorted(named_classes() & set(newest)):
        present = [r for r in releases if name in wheels[r]["classes"]]  # type: ignore[operator]
        index = releases.index(present[0])
        rows[name] = {
            "first": present[0],
            "before": releases[index - 1] if index else None,
            "file": wheels[present[0]]["classes"][name],  # type: ignore[index]
            "absent_after_first": [r for r in releases[index:] if r not in present],
        }
    pins = {release: wheels[release]["transformers"] for release in releases}
    out.write_text(json.dumps({"read": f"{releases[0]} … {releases[-1]}", "classes": rows, "transformers_pins": pins},
                              indent=1) + "\n")  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
