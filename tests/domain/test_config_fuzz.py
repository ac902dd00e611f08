"""Mutated real configs through `kvtop plan --model FILE --json`: a plan or one line, never a traceback.

The in-process runs call the CLI's `main` (the same code path as the command, without the
interpreter start); a handful more run the real command in a subprocess. The example budget
keeps this under a minute; `benchmarks/fuzz_configs.py` runs the same strategies at length.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from tests.domain.config_mutations import Outcome, Planted, classify, plan_in_process, planted_configs

FOLDER = Path(tempfile.mkdtemp(prefix="kvtop-config-fuzz-"))
ROOT = Path(__file__).resolve().parents[2]


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(planted_configs())
def test_a_mutated_config_plans_or_fails_in_one_line(planted: Planted) -> None:
    outcome, detail = plan_in_process(planted.write(FOLDER))
    assert outcome in (Outcome.OK, Outcome.CLEAN_ERROR), f"{planted.name} {planted.mutations}: {detail}"


@settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(planted_configs(max_mutations=2))
def test_the_real_command_on_a_mutated_config(planted: Planted) -> None:
    path = planted.write(FOLDER)
    result = subprocess.run(
        [sys.executable, "-m", "kvtop", "plan", "--model", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    outcome, detail = classify(result.returncode, result.stdout, result.stderr)
    assert outcome in (Outcome.OK, Outcome.CLEAN_ERROR), f"{planted.name} {planted.mutations}: {detail}"
