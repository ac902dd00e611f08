"""One venv per (engine, version) under the ignored cache folder, made the way differential.md showed.

1. `python -m venv`; 2. torch==2.13.0 (the CPU wheel this machine's pip finds locally);
3. the engine `--no-deps`; 4. the pure-Python packages its imports need, each pinned as the
engine's own metadata pins it (read from the installed engine). Every pip call carries
`-c constraints.txt` (torch==2.13.0), so pip can never resolve a newer or a CUDA torch.
A venv that finished installing has a `.ready` marker; a half-made one is made again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.engine_diff.engines import NEVER_INSTALL, TORCH, EngineSpec

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "engine_diff"

_ENGINE_REQUIRES = """
import importlib.metadata as md, json, sys
from pip._vendor.packaging.requirements import Requirement
reqs = {}
for text in md.requires(sys.argv[1]) or []:
    r = Requirement(text)
    if r.marker is not None and not r.marker.evaluate({"extra": ""}):
        continue
    reqs[r.name.lower().replace("_", "-")] = str(r.specifier)
print(json.dumps(reqs))
"""


def venv_dir(spec: EngineSpec, version: str) -> Path:
    return CACHE / f"{spec.name}-{version}"


def _pip(python: Path, *args: str, log: Path) -> None:
    constraints = CACHE / "constraints.txt"
    cmd = ["nice", "-n", "10", str(python), "-m", "pip", "install", "-q", "-c", str(constraints), *args]
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        done = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"pip failed ({' '.join(args)[:120]}): see {log}")


def ensure_venv(spec: EngineSpec, version: str) -> Path:
    """The venv's python, installing it first if needed."""
    root = venv_dir(spec, version)
    python = root / "bin" / "python"
    if (root / ".ready").exists():
        _top_up_pinned(spec, python, CACHE / f"{spec.name}-{version}.install.log")
        return python
    if root.exists():
        shutil.rmtree(root)
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "constraints.txt").write_text(TORCH + "\n")
    log = CACHE / f"{spec.name}-{version}.install.log"
    log.write_text("")
    print(f"installing {spec.name} {version} into {root} (log: {log})", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    _pip(python, TORCH, log=log)
    _pip(python, "--no-deps", f"{spec.package}=={version}", log=log)
    requires = json.loads(
        subprocess.run(
            [str(python), "-c", _ENGINE_REQUIRES, spec.package], check=True, capture_output=True, text=True
        ).stdout
    )
    wanted = []
    for name in spec.imports_need:
        key = name.lower().replace("_", "-")
        if key in NEVER_INSTALL:
            continue
        wanted.append(name + requires.get(key, ""))
    _pip(python, *wanted, log=log)
    if spec.no_deps:
        _pip(
            python,
            "--no-deps",
            *[n + requires.get(n.lower().replace("_", "-"), "") for n in spec.no_deps],
            log=log,
        )
    (root / "pins.json").write_text(
        json.dumps(
            {"engine_requires": requires, "installed": wanted, "no_deps": list(spec.no_deps)}, indent=1
        )
    )
    (root / ".ready").write_text("ok\n")
    return python


def _top_up_pinned(spec: EngineSpec, python: Path, log: Path) -> None:
    """A --no-deps package pinned in engines.py after the venv was made (timm, session 47) goes in now."""
    pinned = [n for n in spec.no_deps if "==" in n]
    have = installed_versions(python, tuple(n.split("==")[0] for n in pinned))
    missing = [n for n in pinned if have.get(n.split("==")[0]) != n.split("==")[1]]
    if missing:
        _pip(python, "--no-deps", *missing, log=log)


def installed_versions(python: Path, names: tuple[str, ...]) -> dict[str, str]:
    """Versions of a few packages in the venv (recorded in the fixture)."""
    code = (
        "import importlib.metadata as md, json, sys\n"
        "out = {}\n"
        "for n in sys.argv[1:]:\n"
        "    try: out[n] = md.version(n)\n"
        "    except md.PackageNotFoundError: pass\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([str(python), "-c", code, *names], check=True, capture_output=True, text=True)
    result: dict[str, str] = json.loads(done.stdout)
    return result
