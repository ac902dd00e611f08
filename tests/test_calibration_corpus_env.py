"""A corpus record carries the environment its launch set (`env`), read as `kvtop plan --cmd` reads a leading
NAME=VALUE (launch_line.with_environment), so the record plans as the CLI plans the same launch.

Independent source: the start's own log. InferenceX's gpt-oss-120b H200 start (GloriaXimingLu/inferencex-profiling at
237385bf, nebius/results/gptoss_tp1_c64_1k1k.log, vLLM 0.22.0) ran its script's `export VLLM_MXFP4_USE_MARLIN=1`
and printed "Using 'MARLIN' Mxfp4 MoE backend." and 'Model loading took 66.14 GiB memory'."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from benchmarks.calibration.corpus import resolve
from kvtop.cli import main
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.vllm.mxfp4_backend import MARLIN_ENV, mxfp4_backend
from kvtop.domain.gpus import gpu_key
from tests.corpus_records import RECORDS, logged_bytes
from tests.data_paths import CONFIGS

RECORD = "gloriaximinglu-inferencex-gpt-oss-120b-h200-v0220-mml2068"


def _cli_plan(capsys: pytest.CaptureFixture[str], env: str) -> dict:
    raw = RECORDS[RECORD]
    command = f"{env}vllm serve openai/gpt-oss-120b {' '.join(raw['flags'])}"
    assert main(["plan", "--model", str(CONFIGS / raw["config"]), "--json", "--engine-version", raw["version"],
                 "--gpu", raw["gpu"], "--cmd", command]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)


def _weights(plan: dict) -> int:
    return next(term["bytes"] for term in plan["terms"] if term["term"] == "weights")


def test_a_records_environment_plans_as_the_cli_reads_it(capsys: pytest.CaptureFixture[str]) -> None:
    raw = RECORDS[RECORD]
    assert raw["env"] == {MARLIN_ENV: "1"}
    record = resolve(raw)
    assert record.settings.flags[MARLIN_ENV] == "1"
    # the backend the log printed ('MARLIN'), chosen by the variable (not by the release: the same launch without it
    # runs the wheel's Triton kernels)
    backend = mxfp4_backend(record.settings, gpu_key(record.gpu), record.version)
    assert backend is not None and (backend.name, backend.source) == ("marlin", "stated")
    unset = resolve({**raw, "env": {}})
    assert mxfp4_backend(unset.settings, gpu_key(unset.gpu), unset.version).name == "triton"  # type: ignore[union-attr]
    assert record.model is not None and record.gpu_total_bytes is not None
    plan = planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu))  # fmt: skip
    cli = _cli_plan(capsys, f"{MARLIN_ENV}=1 ")
    assert plan.ledger.token_capacity == cli["token_capacity"]
    assert (plan.token_capacity_min, plan.token_capacity_max) == (cli["token_capacity_min"], cli["token_capacity_max"])
    # Marlin's weights stand nearer the log's 66.14 GiB than the Triton plan the launch without the variable gets
    logged = logged_bytes(f"{RECORD}:weights")
    without = _cli_plan(capsys, "")
    assert abs(_weights(cli) - logged) < abs(_weights(without) - logged)
    assert abs(Decimal(_weights(cli) - logged) / logged) < Decimal("0.01")


def test_a_record_naming_a_variable_no_rule_reads_is_refused() -> None:
    """A typo'd or unread name would be dropped as `--cmd` drops it (it may be a secret): the corpus refuses it."""
    with pytest.raises(ValueError, match="VLLM_MXFP4_USE_MARLINN"):
        resolve({**RECORDS[RECORD], "env": {"VLLM_MXFP4_USE_MARLINN": "1"}})
