"""Run as a script by tests/engines/test_engine_removal.py, with a source tree first on sys.path: what that
tree's kvtop does, as JSON on stdout. It needs no pytest and imports nothing of the tests.

Arguments: the tree's root (kvtop must be imported from there), a model's config.json, the engine that was
removed, the demo scenario of that engine, then the engines to plan. It imports every module of kvtop, asks
the registry for each engine's rules, runs `kvtop plan --engine <e> --json` and `kvtop --demo snapshot
--json` through the CLI's entry point, and the removed engine's plan and demo, recording each exit status,
output and error; a traceback anywhere is recorded as one.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import pkgutil
import sys
import traceback
from pathlib import Path
from typing import Any


def _run(main: Any, argv: list[str]) -> dict[str, Any]:
    """The CLI's exit status, stdout and stderr for `argv`; an exception that escapes it, as its traceback."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exit_:  # argparse's error
            rc = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:  # noqa: BLE001 — the point is to record it
            return {
                "rc": None,
                "out": out.getvalue(),
                "err": err.getvalue(),
                "traceback": traceback.format_exc(),
            }
    return {"rc": rc, "out": out.getvalue(), "err": err.getvalue(), "traceback": None}


def probe(root: Path, config: str, removed: str, removed_scenario: str, engines: list[str]) -> dict[str, Any]:
    import kvtop

    found: dict[str, Any] = {"kvtop": str(Path(kvtop.__file__).resolve().parent.parent)}
    if Path(found["kvtop"]) != root.resolve():
        return found  # another kvtop came first on sys.path: the caller fails on this
    failed, imported = [], 0
    for module in pkgutil.walk_packages(kvtop.__path__, "kvtop."):
        if module.name.endswith(".__main__"):  # it runs the CLI
            continue
        try:
            importlib.import_module(module.name)
            imported += 1
        except Exception:  # noqa: BLE001
            failed.append(f"{module.name}: {traceback.format_exc(limit=2)}")
    found |= {"imported": imported, "import_failures": failed}

    from kvtop.cli import main
    from kvtop.domain.engines.registry import ENGINE_IDS, UnknownEngineError, engine_rules

    found["engine_ids"] = list(ENGINE_IDS)
    found["rules"] = {engine: engine_rules(engine).id for engine in engines}
    try:
        engine_rules(removed)
        found["removed_rules"] = "resolved"
    except UnknownEngineError as error:
        found["removed_rules"] = str(error)
    found["plans"] = {
        engine: _run(main, ["plan", "--model", config, "--engine", engine, "--json"]) for engine in engines
    }
    found["demo"] = _run(main, ["--demo", "snapshot", "--json"])
    found["removed_plan"] = _run(main, ["plan", "--model", config, "--engine", removed])
    found["removed_demo"] = _run(main, ["--demo", removed_scenario, "snapshot", "--json"])
    return found


if __name__ == "__main__":
    root, config, removed, scenario, *names = sys.argv[1:]
    print(json.dumps(probe(Path(root), config, removed, scenario, names)))
