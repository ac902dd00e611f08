"""Where vLLM's worker snapshots the memory its non-torch growth starts from (calibration_snapshot.py).

Expected figures come from the engine's code and the corpus's logs, not from the module: vLLM 0.10.2's
`Worker.init_device` (v1/worker/gpu_worker.py in the v0.10.2 sdist) calls `MemorySnapshot()` before
`init_worker_distributed_environment`, v0.11.0's after it (vllm#25359); the startup lines are the records'
(tests/data/calibration/vllm.jsonl): Qwen3-Next-80B-A3B at TP 2 on H200, v0.10.2, 'Free memory on device
(139.21/139.81 GiB) on startup' and '1.38 GiB for non-torch memory'; llm-d-planner's v0.19.0 H100 starts, 77.66 of
79.19 GiB free at TP 2 and 78.68 at TP 1.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.calibration_non_torch import non_torch_estimate
from kvtop.domain.engines.vllm.calibration_snapshot import nccl_inside_non_torch, startup_free_is_context
from kvtop.units import GIB

RECORDS = {record.id: record for record in load("vllm")}
QWEN3_NEXT = "file7292846353-qwen3-next-80b-a3b-2xh200-tp2-v0102"


def test_the_snapshot_precedes_nccl_before_v0_11_only() -> None:
    assert nccl_inside_non_torch(RECORDS[QWEN3_NEXT].inputs())  # v0.10.2, TP 2
    assert not nccl_inside_non_torch(RECORDS["llmd-v011-qwen3-32b-tp2"].inputs())  # v0.11.0, TP 2
    assert not nccl_inside_non_torch(RECORDS["file34680831065-llava-v1.6-mistral-7b-h100-v0102"].inputs())  # TP 1


def test_a_startup_line_before_nccl_is_not_the_context() -> None:
    # 139.81 − 139.21 = 0.60 GiB used on startup at TP 2 (v0.10.2), against 79.19 − 77.66 = 1.53 at TP 2 and
    # 79.19 − 78.68 = 0.51 at TP 1 (v0.19.0): the v0.10.2 line precedes NCCL's init, so it does not measure the context
    qwen3_next = RECORDS[QWEN3_NEXT].inputs()
    assert not startup_free_is_context(qwen3_next)
    assert vllm.fit_features("vllm.context", qwen3_next) is None
    assert vllm.fit_features("vllm.context", RECORDS["llmd-v019-qwen2.5-72b-tp2"].inputs()) == (1.0, 1.0, 0.0)


def test_the_v1_fit_leaves_the_init_out_and_the_plan_adds_the_context_part() -> None:
    qwen3_next = RECORDS[QWEN3_NEXT].inputs()
    assert vllm.fit_features("vllm.non_torch.v1", qwen3_next) is None  # judged, not fitted
    assert vllm.fit_features("vllm.non_torch.v1", RECORDS["llmd-v011-qwen3-32b-tp2"].inputs()) == (1.0, 1.0)
    fit, context = vllm.FITS["vllm.non_torch.v1"], vllm.FITS["vllm.context"]
    term = non_torch_estimate(qwen3_next, vllm.FITS, 8192)
    # the growth after NCCL's init (the custom all-reduce on: H200s on NVLink) plus the context's part beyond one rank
    # for an MoE model at TP 2 (its TP > 1 and MoE coefficients)
    grown = fit.predict((1.0, 1.0))
    init = round((context.coefficients[1] + context.coefficients[2]) * GIB)
    assert term.bytes == grown + init
    assert "NCCL and custom all-reduce init" in term.basis
    # the log's 1.38 GiB lies inside the term's error
    assert abs(term.bytes - round(1.38 * GIB)) <= term.error_bytes


def test_a_pcie_start_before_v0_11_is_charged_no_init() -> None:
    # 8 x L40S at v0.10.2 (custom all-reduce off on PCIe) printed 0.21 GiB of non-torch memory at TP 8
    l40s = RECORDS["file38962983769-qwen3-235b-fp8-8xl40s-tp8"].inputs()
    term = non_torch_estimate(l40s, vllm.FITS, 8192)
    assert term.bytes == vllm.FITS["vllm.non_torch.v1"].predict((1.0, 0.0))
    assert term.term is Term.NON_TORCH
