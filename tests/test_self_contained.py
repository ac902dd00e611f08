"""The repository stands alone: the tests and the commands read nothing outside it.

Children run with an audit hook (a `sitecustomize` put first on PYTHONPATH) that logs every path
they open or list, their own children included. Allowed outside the repository: the interpreter
and its installed packages (prefixes, site-packages, sys.path), the temporary directory, /dev,
/proc and /sys. A folder beside the repository (a sibling such as the team's data folder) is never
allowed, even where it lies in the temporary directory.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

HOOK = '''
import os
import sys

_LOG = os.environ.get("KVTOP_OPEN_LOG")
if _LOG:
    _fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def _record(event, args):
        if event in ("open", "os.listdir", "os.scandir") and args:
            target = args[0]
            if isinstance(target, (str, bytes, os.PathLike)):
                os.write(_fd, os.fsencode(os.path.abspath(os.fsdecode(target))) + b"\\n")

    sys.addaudithook(_record)
'''

#: A plugin (`-p`) that runs only the READERS' tests of a whole-suite collection: one child both collects every test
#: module (their imports and module-level reads audited) and runs the readers, instead of two children collecting.
SELECT = '''
import os


def pytest_collection_modifyitems(config, items):
    keep = tuple(os.environ["KVTOP_AUDIT_READERS"].split(os.pathsep))
    chosen = [item for item in items if item.nodeid.split("::", 1)[0] in keep]
    config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
    items[:] = chosen
'''

#: Test modules that, between them, read every kind of data: all case logs, all configs, the
#: samples behind the fakes, the metrics pages, the shipped scenarios, presets and palettes.
READERS = (
    "tests/sources/test_engine_logs.py",
    "tests/domain/test_every_config.py",
    "tests/sources/test_nvml.py",
    "tests/sources/test_engine_http.py",
    "tests/sources/test_prometheus.py",
    "tests/sources/test_demo.py",
    "tests/ui/test_themes.py",
)
COMMANDS = (
    ("plan", "--model", "llama-3-70b", "--json"),
    ("explain", "tests/data/cases/sglang/C13/engine.log", "--model",
     "tests/data/configs/meta-llama--Llama-3.1-8B-Instruct.json", "--mem-fraction-static", "0.88", "--json"),
    ("snapshot", "--demo", "--json"),
)  # fmt: skip


def _within(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _roots(paths: list[str]) -> tuple[str, ...]:
    found = {os.path.abspath(p) for p in paths if p} | {os.path.realpath(p) for p in paths if p}
    return tuple(sorted(found))


def outside_reads(logged: list[str]) -> list[str]:
    """The logged paths neither in the repository nor in the interpreter's, system's or temp's places."""
    repo = _roots([str(ROOT)])
    ancestors = {str(parent) for parent in ROOT.parents}
    code = _roots(
        [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages(),
         site.getusersitepackages()]
        + [entry for entry in sys.path if entry and os.path.abspath(entry) not in ancestors]
    )  # fmt: skip
    sibling = _roots([str(ROOT.parent)])
    system = _roots([tempfile.gettempdir(), "/dev", "/proc", "/sys"])
    temp_is_parent = os.path.realpath(tempfile.gettempdir()) == os.path.realpath(ROOT.parent)
    shared = _roots([str(ROOT.parent / "shared")])
    outside = set()
    for path in logged:
        forms = (path, os.path.realpath(path))
        if any(_within(form, repo) or _within(form, code) for form in forms):
            continue
        in_temp = any(_within(form, system) for form in forms)
        beside = any(_within(form, sibling) for form in forms)
        if temp_is_parent and in_temp:  # a checkout in the temp dir: its siblings are other tests' temp files
            beside = any(form == str(ROOT.parent) or _within(form, shared) for form in forms)
        if beside or not in_temp:
            outside.add(path)
    return sorted(outside)


@pytest.fixture(scope="module")
def audited_reads(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    work = tmp_path_factory.mktemp("audit")
    (work / "hook").mkdir()
    (work / "hook" / "sitecustomize.py").write_text(HOOK)
    (work / "hook" / "kvtop_audit_readers.py").write_text(SELECT)
    log = work / "opened.log"
    # the calibration store of whoever runs the tests stays out of it: a private state directory; bytecode (and
    # pytest's rewritten test modules) cached in a private temp folder, so that the children after the first reuse
    # what it compiled, even where the caller's environment says PYTHONDONTWRITEBYTECODE
    env = dict(os.environ, KVTOP_OPEN_LOG=str(log), HF_HUB_OFFLINE="1", XDG_STATE_HOME=str(work / "state"),
               PYTHONPYCACHEPREFIX=str(work / "pycache"), KVTOP_AUDIT_READERS=os.pathsep.join(READERS))  # fmt: skip
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(work / "hook"), str(ROOT)])
    runs = [  # every test module collected, the readers' tests run
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "kvtop_audit_readers", "-q", "tests"],
        *([sys.executable, "-m", "kvtop", *command] for command in COMMANDS),
        [sys.executable, "-c", f"import os; os.listdir({str(ROOT.parent)!r})"],  # the canary: a sibling listing
    ]
    for argv in runs:
        result = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{argv[2:6]}: {result.stdout[-1500:]}{result.stderr[-1500:]}"
    return log.read_text().splitlines()


def test_the_hook_sees_the_tests_read_their_data(audited_reads: list[str]) -> None:
    data = str(ROOT / "tests" / "data") + os.sep
    read = {path for path in audited_reads if path.startswith(data)}
    assert {str(ROOT / "tests/data/cases/sglang/C13/engine.log"), str(ROOT / "tests/data/configs")} <= read
    assert str(ROOT / "examples" / "scenarios") in {os.path.realpath(path) for path in audited_reads}


def test_nothing_outside_the_repository_is_read(audited_reads: list[str]) -> None:
    assert outside_reads(audited_reads) == [str(ROOT.parent)]  # the canary alone


# --- no path to the team's data folder is written down -----------------------------------------

NEEDLES = ("../" + "shared", "/work/" + "shared")  # spelled apart so that this file does not match
SCANNED = ("kvtop", "tests", "docs", "benchmarks", ".ci", "README.md", "pyproject.toml")


def _mentions() -> dict[str, int]:
    found: dict[str, int] = {}
    for name in SCANNED:
        top = ROOT / name
        for path in [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file()):
            if "__pycache__" in path.parts:
                continue
            text = path.read_bytes().decode("utf-8", errors="replace")
            count = sum(text.count(needle) for needle in NEEDLES)
            if count:
                found[str(path.relative_to(ROOT))] = count
    return found


def test_no_file_names_a_folder_beside_the_repository() -> None:
    assert _mentions() == {}
