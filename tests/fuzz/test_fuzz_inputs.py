"""Every outside input, mutated, through the entry point a person uses: one line or a result, never a
traceback, never a hang (issue #17).

A fixed, derandomized budget per kind keeps the whole file near a minute on two shared cores;
`benchmarks/fuzz_inputs.py` runs the same strategies at length (tests/fuzz/). The configs have their
own test (tests/domain/test_config_fuzz.py). Each CLI kind also runs twice as the real command.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from tests.fuzz.kinds_cli import CliInput, checkpoints, flag_sets, logs, scenarios
from tests.fuzz.kinds_http import EndpointInput, PrometheusInput, endpoint_answers, prometheus_runs
from tests.fuzz.runner import Outcome, classify

FOLDER = Path(tempfile.mkdtemp(prefix="kvtop-input-fuzz-"))
ROOT = Path(__file__).resolve().parents[2]
CONTRACT = (Outcome.OK, Outcome.CLEAN_ERROR)


def budget(examples: int, *, shrink: bool = True) -> settings:
    phases = (Phase.explicit, Phase.generate, Phase.shrink) if shrink else (Phase.explicit, Phase.generate)
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )


@pytest.fixture(autouse=True, scope="module")
def offline() -> Iterator[None]:
    """A hub id read from a mangled log must never reach the network; no token from the environment."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.delenv("KVTOP_PROMETHEUS_TOKEN", raising=False)
        yield


def holds(item: CliInput | EndpointInput | PrometheusInput) -> None:
    outcome, detail = item.run(FOLDER)
    assert outcome in CONTRACT, f"{item.describe()}\n{detail}"


@budget(400)
@given(logs())
def test_a_mangled_engine_log_explains_or_fails_in_one_line(item: CliInput) -> None:
    holds(item)


@budget(500)
@given(flag_sets())
def test_fuzzed_launch_flags_and_commands_plan_or_fail_in_one_line(item: CliInput) -> None:
    holds(item)


@budget(150)
@given(scenarios())
def test_a_mutated_scenario_shows_a_node_or_fails_in_one_line(item: CliInput) -> None:
    holds(item)


@budget(200)
@given(checkpoints())
def test_a_mutated_safetensors_header_plans_or_fails_in_one_line(item: CliInput) -> None:
    holds(item)


@budget(500)
@given(endpoint_answers())
def test_a_mutated_endpoint_answer_is_a_named_state_never_an_exception(item: EndpointInput) -> None:
    holds(item)


@budget(300)
@given(prometheus_runs(answers=False))
def test_fuzzed_prometheus_flags_read_the_cluster_or_fail_in_one_line(item: PrometheusInput) -> None:
    holds(item)


@budget(150, shrink=False)
@given(prometheus_runs(flags=False))
def test_a_mutated_prometheus_answer_reads_the_cluster_or_fails_in_one_line(item: PrometheusInput) -> None:
    holds(item)


@pytest.mark.parametrize("strategy", [logs, flag_sets, scenarios, checkpoints], ids=lambda s: s.__name__)
def test_the_real_command_keeps_the_contract(strategy) -> None:  # type: ignore[no-untyped-def]
    """Two inputs of each kind as `python -m kvtop …` in a subprocess: what the operator's shell sees."""

    @budget(2, shrink=False)
    @given(strategy())
    def run(item: CliInput) -> None:
        argv = item.write(FOLDER)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "kvtop", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env=env,
        )
        outcome, detail = classify(
            done.returncode,
            done.stdout,
            done.stderr,
            findings_codes=item.findings_codes,
            json_key=item.json_key,
            json_out=item.json_out,
        )
        assert outcome in CONTRACT, f"{item.describe()}\n{detail}"

    run()
