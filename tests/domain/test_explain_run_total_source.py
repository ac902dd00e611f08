"""The total an `EstimateRun` solves with is labelled by one rule (`ExplainRequest.solved_total`, else the run's
origin through `gpu_total_origin.total_origin`): vLLM's runs were built with an origin but no source, so a table total was
'measured' by default and a log's own total under --gpu was read as the table's."""

from __future__ import annotations

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.explain import explain
from kvtop.domain.explain_estimate import EstimateRun
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CASES, CONFIGS

RAY_CASE = CASES / "vllm/lws-v083-deepseek-v25-pp2-tp8-a100-40g/engine.log"
DEEPSEEK = CONFIGS / "cases/deepseek-ai--DeepSeek-V2.json"


def test_a_run_that_says_no_source_takes_its_origins() -> None:
    """The A100-40GB's table figure (40,960 MiB, nvidia-smi's) is assumed; the operator's --gpu-memory measured."""
    # a v0.8.3 log: pinned to 0.33.0's rules (0.34.0's extensible KV cache is sized from other figures)
    model, settings = load_model(str(DEEPSEEK)), parse_flags("vllm", ["--engine-version", "0.33.0"])
    table = gpu_total_bytes("A100-40GB")
    assert table == 40_960 << 20
    run = EstimateRun(model, settings, table, "A100-40GB", False, gpu_total_origin=GpuTotalOrigin.TABLE)
    assert run.total_source == "assumed"
    given = EstimateRun(model, settings, table, "A100-40GB", False, gpu_total_origin=GpuTotalOrigin.GIVEN)
    assert given.total_source == "measured"


def test_a_logs_total_is_measured_and_a_stand_in_assumed() -> None:
    request = ExplainRequest(log=read_engine_log(RAY_CASE), model=load_model(str(DEEPSEEK)),
                             settings=parse_flags("vllm", []), gpu_total_bytes=gpu_total_bytes("A100-40GB"),
                             gpu_name="A100-40GB", gpu_total_origin=GpuTotalOrigin.TABLE)  # fmt: skip
    assert request.solved_total(39 * GIB) == ("measured", None)
    assert request.solved_total(None) == ("assumed", GpuTotalOrigin.TABLE)
    assert request.model_copy(update={"gpu_total_bytes": None}).solved_total(None) == ("assumed", None)


def test_the_ray_folded_estimate_solves_with_the_logs_total_whether_or_not_gpu_names_the_card() -> None:
    """lws (vLLM v0.8.3, PP 2 × TP 8, A100-SXM4-40GB) prints `total_gpu_memory (39.49GiB)`: CUDA's total, which
    the hidden worker's estimate (`ray_logs.hidden_tighter_worker`) solves with, measured, also under
    --gpu A100-40GB (before: the calibrated CUDA total of the table's card, as if the log printed none)."""
    assert "total_gpu_memory (39.49GiB)" in RAY_CASE.read_text()
    # a v0.8.3 log: pinned to 0.33.0's rules (0.34.0's extensible KV cache is sized from other figures)
    model, settings = load_model(str(DEEPSEEK)), parse_flags("vllm", ["--engine-version", "0.33.0"])
    log = read_engine_log(RAY_CASE)
    bare = explain(ExplainRequest(log=log, model=model, settings=settings))
    named = explain(ExplainRequest(log=log, model=model, settings=settings, gpu_total_bytes=gpu_total_bytes(
        "A100-40GB"), gpu_name="A100-40GB", gpu_total_origin=GpuTotalOrigin.TABLE))  # fmt: skip
    for result in (bare, named):
        assert result.estimated is not None and result.estimated.field == "available_kv_bytes"
        assert result.ledger is not None and result.ledger.engine is not None
        total = result.ledger.engine.steps[0]
        assert 39.485 * GIB <= total.bytes < 39.495 * GIB  # the log's 39.49 GiB, to its rounding
        assert total.source == "measured"
    assert MeasuredInputs().total_origin("A100-40GB", 40_960 << 20) is GpuTotalOrigin.TABLE
