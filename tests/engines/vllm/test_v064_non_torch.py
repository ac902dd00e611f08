"""vLLM v0.6.4's non-torch memory holds the worker's CUDA context: planned as the growth plus one process's context.

The forms, read in the wheels: v0.6.3.post1 vllm/worker/worker.py:219-231 charges `init_gpu_memory − free` after the
profile (init_gpu_memory read at the worker's start, the context outside); v0.6.4 and v0.6.4.post1 :206-213 charge
`total − free − torch.cuda.memory_stats()["allocated_bytes.all.current"]` after the profile and `empty_cache` (the
device's used memory, context inside); v0.6.5 :198 wraps the profile in `memory_profiling(baseline_memory_in_bytes=
total − self.init_gpu_memory)` (utils.py: used − baseline − weights − torch's growth: the growth from the worker's
init), which v0.7.1's MemorySnapshot keeps (utils.py:1952-2056: the growth of used − torch-reserved from the init).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_FITS, CUDA_CONTEXT_KEY, one_process_context
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import from_flag
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.engines.vllm.calibration_eras import non_torch_key
from kvtop.domain.engines.vllm.calibration_non_torch import non_torch_estimate
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

LLAMA31_8B = load_config_file(Path(CONFIGS) / "meta-llama--Llama-3.1-8B-Instruct.json")


def _inputs(version: str, gpu: str = "RTX3090", tp: int = 1) -> CalibrationInputs:
    settings = parse_flags("vllm", ["--engine-version", version, "--max-model-len", "20000"])
    return CalibrationInputs(
        model=LLAMA31_8B, settings=settings, layout=ParallelLayout(tp=tp), gpu_name=gpu,
        gpu_total_bytes=gpu_total_bytes(gpu), version=from_flag(version, engine_rules("vllm").calendar),
        weights_bytes=0, context_length=20000,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("version", "era"),
    [("0.6.3.post1", "v06"), ("0.6.4", "v064"), ("0.6.4.post1", "v064"), ("0.6.5", "v0"), ("0.6.6.post1", "v0"),
     ("0.7.3", "v0")],
)  # fmt: skip
def test_each_release_is_fitted_with_the_form_its_code_charges(version: str, era: str) -> None:
    assert non_torch_key(_inputs(version)) == f"vllm.non_torch.{era}"


def test_v064_charges_the_growth_and_one_process_context() -> None:
    """vllm#10517 (Llama-3.1-8B-Instruct on one RTX 3090 at v0.6.4, --max-model-len 20000) printed non_torch_memory
    0.35 GiB, of which `initial_memory_usage` 15.34 less the weights 14.99 was in use before the profile. The plan's
    figure is the committed `v0` growth's constant (no custom all-reduce at TP 1) plus the committed one-process
    context per 100 SMs of 2,048 threads × 0.615 (the 3090's 82 SMs of 1,536 threads at compute capability 8.6,
    82 × 1536 ÷ 204,800), summed here by hand; the log's 0.35 lies within its interval."""
    inputs = _inputs("0.6.4")
    term = non_torch_estimate(inputs, {**CUDA_CONTEXT_FITS, **FITS}, 20000)
    growth = FITS["vllm.non_torch.v0"].coefficients[0]
    context = CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY].coefficients[0] * 82 * 1536 / 204_800
    assert term.bytes / GIB == pytest.approx(growth + context, abs=0.001)
    assert abs(term.bytes / GIB - 0.35) <= term.error_bytes / GIB
    assert "one process's CUDA context" in term.basis and "worker.py:206-213" in term.basis


def test_the_10517_start_planned_blind_within_five_percent() -> None:
    """The same start's log: `# GPU blocks: …` gave kv_cache_size 3.81 GiB (23.58 × 0.9 − 14.99 − 2.07 − 0.35 =
    3.812 GiB). Before the era split kvtop charged 0.10 GiB of non-torch memory there (+6.6 % blind)."""
    settings = parse_flags("vllm", ["--engine-version", "0.6.4", "--max-model-len", "20000"])
    plan = planned_capacity(LLAMA31_8B, settings, gpu_total_bytes=gpu_total_bytes("RTX3090"), gpu_name="RTX3090")
    kv = plan.ledger.engine.kv_budget_bytes / GIB
    assert abs(kv - (23.58 * 0.9 - 14.99 - 2.07 - 0.35)) / 3.812 < 0.05


def test_an_era_fit_of_its_own_is_the_whole_figure() -> None:
    """Where the corpus holds enough v0.6.4 logs to fit `v064`, its rows are the whole figure, context inside: the plan
    takes the fit alone (1.0 GiB here), adding no context beside it."""
    own = LinearTerm(key="vllm.non_torch.v064", features=FITS["vllm.non_torch.v0"].features, coefficients=(1.0, 0.0),
                     error_bytes=GIB // 10, records=4, sources=2)  # fmt: skip
    term = non_torch_estimate(_inputs("0.6.4"), {**CUDA_CONTEXT_FITS, **FITS, own.key: own}, 20000)
    assert term.bytes == GIB


def test_a_plan_by_memory_alone_assumes_the_context_and_says_why() -> None:
    """No GPU named (`plan --gpu-memory`): its SM count is unknown, so the context is the assumed 0.75 GiB."""
    inputs = _inputs("0.6.4").model_copy(update={"gpu_name": None})
    term = one_process_context(inputs, dict(CUDA_CONTEXT_FITS), "TP 1")
    assert term.source == "assumed" and term.bytes == round(0.75 * GIB)
    assert term.assumed_because is not None and "--gpu" in term.assumed_because


def test_one_process_context_is_the_same_at_any_tp() -> None:
    """The context is one process's on one GPU: an H200 (132 SMs) at TP 8 holds the same as at TP 1 (the TP group's
    NCCL and custom all-reduce are in the growth, which v0.6.5's baseline, taken before them, measures)."""
    one = one_process_context(_inputs("0.6.4", gpu="H200"), dict(CUDA_CONTEXT_FITS), "TP 1")
    eight = one_process_context(_inputs("0.6.4", gpu="H200", tp=8), dict(CUDA_CONTEXT_FITS), "TP 8")
    assert one.bytes == eight.bytes
    assert one.bytes / GIB == pytest.approx(CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY].coefficients[0] * 1.32, abs=0.001)
