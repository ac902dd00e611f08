"""What a GPU total is (the engine's own, CUDA's; or nvidia-smi's) is decided by `gpu_total_origin.total_origin` alone: the
budget's label (`MeasuredInputs.total_origin`) and explain's measured-or-assumed (`ExplainRequest.gpu_total_source`)
took different defaults for a total handed in without its origin; the A10's table figure, 23,028 MiB, is
nvidia-smi's (NVIDIA's A10 datasheet: 24 GB GDDR6; `GPU_TOTAL_MIB`), so it is assumed by both."""

from __future__ import annotations

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, total_origin
from kvtop.domain.launch import parse_flags
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CASES, CONFIGS

MIB = 1 << 20


def _request(total: int, origin: GpuTotalOrigin | None) -> ExplainRequest:
    log = read_engine_log(CASES / "trtllm/trtllm-224-llama2-7b-a10-fraction/engine.log")
    model = load_model(str(CONFIGS / "meta-llama--Llama-2-7b-hf.json"))
    return ExplainRequest(log=log, model=model, settings=parse_flags("trtllm", []), gpu_total_bytes=total,
                          gpu_name="A10", gpu_total_origin=origin)  # fmt: skip


def test_a_total_without_its_origin_is_read_alike_by_every_reader() -> None:
    table = 23_028 * MIB
    assert total_origin("A10", table, None) is GpuTotalOrigin.TABLE
    assert MeasuredInputs().total_origin("A10", table) is GpuTotalOrigin.TABLE
    assert _request(table, None).gpu_total_source == "assumed"  # nvidia-smi's, as the label says
    other = 22 * 1024 * MIB  # not the table's: a total given for the card, the engine's own
    assert total_origin("A10", other, None) is GpuTotalOrigin.GIVEN
    assert _request(other, None).gpu_total_source == "measured"


def test_a_said_origin_wins_over_the_bytes() -> None:
    # an operator's --gpu-memory of exactly the table's figure is still the operator's (GIVEN): measured
    assert _request(23_028 * MIB, GpuTotalOrigin.GIVEN).gpu_total_source == "measured"
    assert total_origin("A10", 22 * 1024 * MIB, GpuTotalOrigin.TABLE) is GpuTotalOrigin.TABLE
    assert _request(22 * 1024 * MIB, GpuTotalOrigin.TABLE).gpu_total_source == "assumed"
