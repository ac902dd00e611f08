"""llama.cpp is only its packages and one catalogue line (issue 29), proved by taking them out.

The source tree (`kvtop/`, `pyproject.toml`, the bundled `examples/` and `themes/`) is copied to a temporary
folder; llama.cpp's two packages (`kvtop/domain/engines/llamacpp/`, `kvtop/sources/engines/llamacpp/`) and its
line in `kvtop/domain/engines/catalogue.py` are deleted, nothing else. With that copy first on `sys.path`:
every module of kvtop still imports, the registry resolves the four other engines and calls llama.cpp unknown,
`kvtop plan --engine <e> --json` of a real config answers exactly what the whole tree answers for each of the
four (the whole tree, run the same way, is the expected value), so does the demo node's prediction, and asking
for llama.cpp (`plan --engine llamacpp`, its demo scenario) is a clear error with a non-zero exit and no
traceback. The conformance suite and the shared-code guard then pass on the copy as they stand. Adding
llama.cpp back is the reverse of this diff: its packages and one line (its tests, docs and demo scenario are
data beside them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CONFIGS

ROOT = Path(__file__).resolve().parents[2]
REMOVED = "llamacpp"
REMOVED_SCENARIO = "llamacpp-llama31-8b"  # examples/scenarios: llama.cpp's demo node, kept as data
OTHERS = ("sglang", "vllm", "lmdeploy", "trtllm")
CONFIG = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"
PACKAGES = (f"kvtop/domain/engines/{REMOVED}", f"kvtop/sources/engines/{REMOVED}")
CATALOGUE = "kvtop/domain/engines/catalogue.py"
# the tests that run on the copy as they stand: every registered engine through every seam, and the guard
ON_THE_COPY = (
    "tests/engines/test_conformance.py",
    "tests/engines/test_engine_isolation.py::test_no_module_outside_an_engines_packages_names_it",
)


def _source_files(root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in (root / "kvtop").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _copy_without_the_engine(dest: Path) -> None:
    """The tree less llama.cpp's packages and its catalogue line; the tests that run on it beside it."""
    shutil.copytree(
        ROOT / "kvtop", dest / "kvtop", symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    for folder in ("examples", "themes"):  # kvtop/_bundled links to them
        shutil.copytree(ROOT / folder, dest / folder, symlinks=True)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")
    for package in PACKAGES:
        shutil.rmtree(dest / package)
    catalogue = dest / CATALOGUE
    lines = catalogue.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not line.lstrip().startswith(f'"{REMOVED}": (')]
    assert len(kept) == len(lines) - 1, "the catalogue has one line per engine"
    catalogue.write_text("".join(kept))
    (dest / "tests/engines").mkdir(parents=True)
    tests = ("__init__.py", "conftest.py", "data_paths.py", "engines/__init__.py")
    for name in (*(f"tests/{t}" for t in tests), *(t.split("::")[0] for t in ON_THE_COPY)):
        shutil.copy2(ROOT / name, dest / name)
    (dest / "tests/data").symlink_to(ROOT / "tests/data", target_is_directory=True)


def _environment(tree: Path, xdg: Path) -> dict[str, str]:
    """`tree` first on sys.path; no calibration store, and state and config folders of the test's own (a
    module's fixture runs before the per-test XDG folders of tests/conftest.py are set)."""
    env = dict(os.environ, PYTHONPATH=str(tree), KVTOP_NO_CALIBRATION_STORE="1")
    env |= {"XDG_STATE_HOME": str(xdg / "state"), "XDG_CONFIG_HOME": str(xdg / "config")}
    env.pop("PYTEST_ADDOPTS", None)
    return env


def _probe(tree: Path, xdg: Path) -> dict[str, Any]:
    """tests/engines/removal_probe.py run with `tree` first on sys.path."""
    args = [str(tree), str(CONFIG), REMOVED, REMOVED_SCENARIO, *OTHERS]
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests/engines/removal_probe.py"), *args],
        capture_output=True, text=True, env=_environment(tree, xdg), cwd=tree, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout)
    assert found["kvtop"] == str(tree.resolve()), "kvtop was imported from another tree"
    return found


@pytest.fixture(scope="module")
def removed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    tree = tmp_path_factory.mktemp("without-llamacpp")
    _copy_without_the_engine(tree)
    return tree, _probe(tree, tmp_path_factory.mktemp("xdg"))


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _probe(ROOT, tmp_path_factory.mktemp("xdg"))


def test_the_copy_differs_only_by_the_engines_packages_and_one_line(
    removed: tuple[Path, dict[str, Any]],
) -> None:
    tree, _ = removed
    gone = _source_files(ROOT) - _source_files(tree)
    assert (
        gone
        and all(path.startswith(PACKAGES) for path in gone)
        and not _source_files(tree) - _source_files(ROOT)
    )
    changed = [p for p in _source_files(tree) if (tree / p).read_bytes() != (ROOT / p).read_bytes()]
    assert changed == [CATALOGUE]


def test_every_module_still_imports(removed: tuple[Path, dict[str, Any]], whole: dict[str, Any]) -> None:
    _, found = removed
    assert found["import_failures"] == []
    gone = len({p for p in _source_files(ROOT) if p.startswith(PACKAGES) and p.endswith(".py")})
    assert found["imported"] == whole["imported"] - gone > 250


def test_the_registry_holds_the_four_others_and_calls_it_unknown(
    removed: tuple[Path, dict[str, Any]],
) -> None:
    _, found = removed
    assert found["engine_ids"] == list(OTHERS)
    assert found["rules"] == {engine: engine for engine in OTHERS}
    assert (
        found["removed_rules"]
        == "--engine: unknown engine 'llamacpp' (one of sglang, vllm, lmdeploy, trtllm)"
    )


@pytest.mark.parametrize("engine", OTHERS)
def test_each_other_engine_plans_as_the_whole_tree_does(
    engine: str, removed: tuple[Path, dict[str, Any]], whole: dict[str, Any]
) -> None:
    copy, original = removed[1]["plans"][engine], whole["plans"][engine]
    assert (copy["rc"], copy["traceback"], copy["err"]) == (0, None, "")
    assert json.loads(copy["out"])["engine"] == engine
    assert copy["out"] == original["out"]


def _prediction(snapshot_json: str) -> list[dict[str, Any]]:
    """What a demo snapshot predicts per engine and rank (its observations move with the clock)."""
    engines = json.loads(snapshot_json)["engines"]
    return [
        {
            "kind": e["kind"],
            "layout": e["layout"],
            "predicted": {
                k: v for k, v in e["predicted"].items() if k != "model_source"
            },  # a path in the tree
            "ranks": [
                {k: r[k] for k in ("rank", "predicted", "predicted_resident_bytes")} for r in e["ranks"]
            ],
        }
        for e in engines
    ]


def test_the_demo_node_predicts_as_the_whole_tree_does(
    removed: tuple[Path, dict[str, Any]], whole: dict[str, Any]
) -> None:
    copy = removed[1]["demo"]
    assert (copy["rc"], copy["traceback"], copy["err"]) == (0, None, "")
    prediction = _prediction(copy["out"])
    assert [e["kind"] for e in prediction] == ["sglang"] and len(prediction[0]["ranks"]) == 8
    assert prediction == _prediction(whole["demo"]["out"])


def test_asking_for_the_removed_engine_is_a_clear_error(
    removed: tuple[Path, dict[str, Any]], whole: dict[str, Any]
) -> None:
    plan, demo = removed[1]["removed_plan"], removed[1]["removed_demo"]
    assert (plan["rc"], plan["traceback"], plan["out"]) == (2, None, "")
    assert (
        "--engine: unknown engine 'llamacpp' (one of sglang, vllm, lmdeploy, trtllm)" in plan["err"]
    )
    assert (demo["rc"], demo["traceback"], demo["out"]) == (2, None, "")
    assert "engines[0].command: not a launch command of an engine kvtop models" in demo["err"]
    assert "Traceback" not in plan["err"] + demo["err"]
    # the control: with its packages, the same two commands answer
    assert (whole["removed_plan"]["rc"], whole["removed_demo"]["rc"]) == (0, 0)
    assert json.loads(whole["removed_demo"]["out"])["engines"][0]["kind"] == REMOVED


def test_conformance_and_the_guard_pass_on_the_copy(
    removed: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    tree, _ = removed
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-v", "-x", *ON_THE_COPY],
        capture_output=True, text=True, env=_environment(tree, tmp_path), cwd=tree, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    ran = [line for line in done.stdout.splitlines() if line.startswith("tests/")]
    assert ran and all(" PASSED " in line for line in ran), "\n".join(ran)
    for engine in OTHERS:  # every per-engine seam ran for each of the four, and none for the removed one
        assert sum(f"[{engine}]" in line for line in ran) >= 10
    assert not any(f"[{REMOVED}]" in line for line in ran)
