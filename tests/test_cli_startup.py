"""kvtop starts fast because each command imports only what it needs (timings live in
benchmarks/startup_bench.py; these tests check what is imported, in a fresh interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Module prefixes `kvtop --help` must not load: the model code and the libraries of other commands.
NOT_FOR_HELP = (
    "kvtop.domain.model",
    "kvtop.domain.ledger",
    "pydantic",
    "textual",
    "httpx",
    "huggingface_hub",
    "torch",
    "pynvml",
    "prometheus_client",
)
NOT_FOR_PLAN = ("textual", "torch", "pynvml", "httpx", "psutil", "prometheus_client", "kvtop.ui", "kvtop.sources.live", "kvtop.commands.node_source")


def loaded_after(*argv: str) -> list[str]:
    """The modules loaded once `kvtop ARGV` has run (as the console script runs it), in a fresh process."""
    script = (
        "import json, sys\n"
        "from kvtop.cli import main\n"
        "try:\n    code = main(sys.argv[1:])\nexcept SystemExit as exit_:\n    code = exit_.code\n"
        "sys.stdout.flush()\n"
        "print('\\nMODULES ' + json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-c", script, *argv]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    report = json.loads(result.stdout.rsplit("MODULES ", 1)[1])
    assert report["code"] == 0, result.stderr[-500:]
    return report["modules"]


def offenders(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted({m for m in modules for p in prefixes if m == p or m.startswith(p + ".")})


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_top_level_help_loads_no_model_code_nor_any_commands_libraries(argv: list[str]) -> None:
    modules = loaded_after(*argv)
    assert not offenders(modules, NOT_FOR_HELP)
    assert not [m for m in modules if m.startswith("kvtop.commands.")]  # no command module at all


def test_plan_loads_neither_textual_nor_torch_nor_the_node_readers() -> None:
    modules = loaded_after("plan", "--model", "llama-3-70b", "--json")
    assert "kvtop.domain.ledger" in modules  # it did plan
    assert not offenders(modules, NOT_FOR_PLAN)
