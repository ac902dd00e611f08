"""The CUDA context's feature: the GPU's resident threads, not its SMs alone (session 54, #27).

A CUDA context reserves the stack of every thread the GPU holds resident (CUDA driver API, cuCtxSetLimit
CU_LIMIT_STACK_SIZE), and an SM holds 2,048 threads on the data-centre chips but 1,536 on Ada, GA10x and consumer
Blackwell and 1,024 on Turing (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability", row
"Maximum number of resident threads per SM"). Expected values: SM counts from NVIDIA's datasheets (H100 SXM 132,
L40S 142, L4 58, T4 40, RTX 5090 170, B200 148) × that table's row; the L40S start's figures from its log
(udbhav-ag/SGLang_setup `sglang.log` at fdeaea3e, tests/data/calibration/sglang.jsonl).
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load_all
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.features import context_threads
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.gpus import GPU_SMS, gpu_key, resident_threads


@pytest.mark.parametrize(("gpu", "threads"), [
    ("H100", 132 * 2048), ("B200", 148 * 2048), ("L40S", 142 * 1536), ("L4", 58 * 1536), ("T4", 40 * 1024),
    ("RTX5090", 170 * 1536), ("NVIDIA GeForce RTX 4090", 128 * 1536),
])  # fmt: skip
def test_resident_threads_are_the_sms_times_the_threads_an_sm_holds(gpu: str, threads: int) -> None:
    assert resident_threads(gpu) == threads


def test_every_gpu_of_known_sms_has_its_threads_per_sm() -> None:
    """A GPU whose SMs kvtop knows but whose threads per SM it did not would lose its fitted context (assumed)."""
    assert [name for name in GPU_SMS if resident_threads(name) is None] == []


def test_the_feature_is_the_threads_in_units_of_100_sms_of_2048() -> None:
    """An H100's 132 SMs of 2,048 threads are 1.32 (as per 100 SMs before); an L40S's 142 SMs of 1,536 are 1.065,
    below the H100's although it has more SMs; a GPU kvtop does not know has none."""
    assert context_threads("H100") == pytest.approx(1.32)
    assert context_threads("L40S") == pytest.approx(142 * 1536 / 204_800) == pytest.approx(1.065)
    assert context_threads("NVIDIA A16") is None


def test_the_l40s_start_s_logged_capacity_lies_in_its_plan_with_its_logged_weights() -> None:
    """Llama-3.2-3B on one L40S at SGLang 0.5.7, --mem-fraction-static 0.2: the log's `Load weight begin. avail
    mem=44.11 GB`, `mem usage=6.13 GB` and `#tokens: 25169` (25,169 × 114,688 B = 2.688 GiB = 0.2 × 44.11 − 6.13, to the
    page). Its context is CUDA's L40S total less 44.11 GiB, 0.35 GiB; per SM the fit planned 0.75 GiB, and at a
    fraction of 0.2 the 0.39 GiB too much cost 0.08 GiB of KV (−2.9 %, outside the interval); by resident threads the
    plan with its logged weights holds the log's figure."""
    record = {r.id: r for r in load_all()["sglang"]}["udbhav-sglang-setup-llama-3.2-3b-l40s-v057"]
    assert record.model is not None and record.gpu_total_bytes is not None
    measured = MeasuredInputs(weights_bytes=record.figures["weights"],
                              weights_stage=engine_rules("sglang").logged_weights_stage)  # fmt: skip
    plan = planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=measured)  # fmt: skip
    assert plan.token_capacity_min <= 25_169 <= plan.token_capacity_max
