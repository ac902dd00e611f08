"""vLLM V1's non-torch growth at TP > 1: the part no source of an era measured is taken from the era holding the same
growth (calibration_eras.TP_PART_STAND_IN).

From v0.11.0 (vllm#25359) `Worker.init_device` takes its snapshot after `init_worker_distributed_environment`
(v1/worker/gpu_worker.py:217-233 at v0.14.0, :263-282 at v0.19.0): pynccl's communicator with its warm-up all-reduce
(pynccl.py:139-146), the custom all-reduce's 8 MiB buffers (custom_all_reduce.py:59, 177-181) and the 64 MiB
symmetric-memory buffer at TP 2 on compute capability 9.0 (all_reduce_utils.py:48-53) are made before it. What grows
inside the profile at TP > 1 is the TP device group's torch NCCL communicator, which torch makes at that group's first
collective, the logits' all-gather (base_device_communicator.py:153 at v0.14.0, :196 at v0.19.0): the same at v0.14 and
at v0.19, where FlashInfer's all-reduce fusion workspace (1.5 GiB on H100, `fusion_workspace.py`) joins it.

llm-d-planner's H100 starts (tests/data/calibration/vllm.jsonl) print non-torch memory of 0.13-0.14 GiB at TP 1 and
0.54 (Qwen3-32B) / 0.55 (Llama-3.3-70B-FP8) at TP 2 under the release out on 2026-01-23 (v0.14.0 by date); at
v0.19.0 0.24-0.27 at TP 1 and 2.06-2.11 at TP 2 (0.56-0.61 beside the workspace).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.plan_fits import committed_fits
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import from_flag
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.engines.vllm.calibration_non_torch import non_torch_estimate
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits
from tests.data_paths import CONFIGS

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

QWEN3_32B = load_config_file(Path(CONFIGS) / "Qwen--Qwen3-32B.json")
FEATURES = FITS["vllm.non_torch.v1"].features
# V1's growth fitted without any TP > 1 log (as leaving llm-d's January notes out leaves it): 0.08 GiB at TP 1
V1_TP1_ONLY = LinearTerm(key="vllm.non_torch.v1", features=FEATURES, coefficients=(0.08, 0.0),
                         error_bytes=round(0.08 * GIB), records=10, sources=8, feature_sources=(8, 0))  # fmt: skip
# v0.18+'s growth beside the workspace, with its TP > 1 part measured by two sources
V18 = LinearTerm(key="vllm.non_torch.v18", features=FEATURES, coefficients=(0.25, 0.38),
                 error_bytes=round(0.36 * GIB), records=49, sources=4, feature_sources=(4, 2))  # fmt: skip
LAUNCH = ["--gpu-memory-utilization", "0.9", "--max-model-len", "16000", "--block-size", "128",
          "--enable-prefix-caching"]  # fmt: skip


def _inputs(version: str, tp: int, flags: tuple[str, ...] = ()) -> CalibrationInputs:
    settings = parse_flags("vllm", ["--engine-version", version, *LAUNCH, *flags])
    return CalibrationInputs(
        model=QWEN3_32B, settings=settings, layout=ParallelLayout(tp=tp), gpu_name="H100",
        gpu_total_bytes=gpu_total_bytes("H100"), version=from_flag(version, engine_rules("vllm").calendar),
        weights_bytes=0, context_length=16000,
    )  # fmt: skip


def test_an_unmeasured_tp_part_takes_the_same_growth_of_the_next_era() -> None:
    """llm-d's Qwen3-32B at TP 2 (v0.14.0 by date) printed 0.54 GiB. With V1's fit holding no TP > 1 row, the plan
    charges its TP 1 constant plus v0.18's TP > 1 part: 0.08 + 0.38 = 0.46 GiB; without the stand-in it charged
    0.08 GiB, 0.46 short of the log."""
    term = non_torch_estimate(_inputs("0.14.0", 2), {V1_TP1_ONLY.key: V1_TP1_ONLY, V18.key: V18}, 8192)
    assert term.bytes / GIB == pytest.approx(0.08 + 0.38, abs=0.001)
    assert term.fit_key == "vllm.non_torch.v1"
    assert "vllm.non_torch.v18's TP > 1 part" in term.basis


def test_the_stood_in_part_is_widened_once() -> None:
    """The plan widens the term where its fit carried no TP > 1 row (`support.widened`): to the largest TP > 1 part
    another era's fit measured, once (the fit's own 0.08 + (part − 0.08)). Until session 51 that was v0.18's 0.38 GiB;
    since session 52 V0's all-reduce part rests on two sources (Dynamo's vLLM 0.7.2 at TP 8 on A100 joined issue
    10702's H200), so it is V0's, the larger; the log's 0.54 lies inside 0.46 ± that."""
    settings = parse_flags("vllm", ["--engine-version", "0.14.0", "--tensor-parallel-size", "2", *LAUNCH])
    plan = planned_capacity(QWEN3_32B, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100",
                            fits={**committed_fits(FITS), V1_TP1_ONLY.key: V1_TP1_ONLY, V18.key: V18})  # fmt: skip
    term = next(estimate for estimate in plan.estimate.terms if estimate.fit_key == "vllm.non_torch.v1")
    v0_part = FITS["vllm.non_torch.v0"].coefficients[1]
    assert FITS["vllm.non_torch.v0"].feature_sources[1] == 2 and v0_part > 0.38
    assert term.error_bytes / GIB == pytest.approx(v0_part, abs=0.001)
    assert term.beyond is not None and term.beyond.startswith("no record of vLLM's non-torch memory at 0.14.0")
    assert abs(term.bytes / GIB - 0.54) <= term.error_bytes / GIB


def test_a_measured_tp_part_and_tp1_are_left_alone() -> None:
    """Where the era's own sources measured the TP > 1 part (the committed V1 fit, llm-d's January notes), or at TP 1
    (no custom all-reduce), or with `--disable-custom-all-reduce`, nothing is taken from another era."""
    own = FITS["vllm.non_torch.v1"]
    fits = {own.key: own, V18.key: V18}
    tp2 = non_torch_estimate(_inputs("0.14.0", 2), fits, 8192)
    assert tp2.bytes == round((own.coefficients[0] + own.coefficients[1]) * GIB)
    lone = {V1_TP1_ONLY.key: V1_TP1_ONLY, V18.key: V18}
    assert non_torch_estimate(_inputs("0.14.0", 1), lone, 8192).bytes == round(0.08 * GIB)
    off = non_torch_estimate(_inputs("0.14.0", 2, ("--disable-custom-all-reduce",)), lone, 8192)
    assert off.bytes == round(0.08 * GIB)


def test_the_v014_tp2_start_planned_with_its_logged_weights() -> None:
    """The same start's log: weights 30.59, activation 5.64, non-torch 0.54 GiB, KV 34.49 GiB of 79.18 × 0.9 (79.18 ×
    0.9 = 71.262; 71.262 − 30.59 − 5.64 − 0.54 = 34.49). Planned with its logged weights and every fit made without
    its source (llm-d's January notes, `fit_all(leave_out=…)` as the calibration's held-out judgement does: V1's
    activation from the other six sources, its non-torch growth from TP 1 rows alone, which V1_TP1_ONLY above
    restates), the KV memory lands within 2 % of the log's."""
    record = next(record for record in CORPUS["vllm"] if record.id == "llmd-v011-qwen3-32b-tp2")
    fits = corpus_fits(record.source)
    left_out = fits["vllm.non_torch.v1"]
    # no TP > 1 row left: the TP part is 0 and only the TP 1 constant is fitted (0.08 GiB on 8 sources in session 51;
    # 13 sources since session 52's held-out starts)
    assert left_out.feature_sources[1] == 0 and left_out.coefficients[1] == 0.0
    assert 0.05 <= left_out.coefficients[0] <= 0.1
    assert fits["vllm.activation.v1"].sources == FITS["vllm.activation.v1"].sources - 1  # this start's source left out
    settings = parse_flags("vllm", ["--engine-version", "0.14.0", "--tensor-parallel-size", "2", *LAUNCH])
    plan = planned_capacity(QWEN3_32B, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100",
                            measured=MeasuredInputs(weights_bytes=round(30.59 * GIB)), fits=fits)  # fmt: skip
    kv = plan.ledger.engine.kv_budget_bytes / GIB
    assert abs(kv / 34.49 - 1) < 0.02
