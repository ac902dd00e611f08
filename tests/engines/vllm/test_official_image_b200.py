"""A B200 sweep at vLLM 0.9.1 whose runs came from two containers: the sampler path each record is planned on is the one
its own log prints (sampler_path.py FLASHINFER_TAKEN_ERAS reads the record's `image`).

Independent source: the runs' logs (Chris113113/vllm-sweep-benchmark at fa47a64d; the corpus records
chris113113-sweep-*-b200-v091). Its Dockerfile.vllm is `FROM vllm/vllm-openai:v0.9.1`; its plain Dockerfile is
nvidia/cuda:12.8.1 with `pip install vllm==0.9.1` (no FlashInfer). The full_run_0625_2 and gemini_test runs print
'topk_topp_sampler.py:49] Using FlashInfer for top-p & top-k sampling.' on every rank (the image); the
llama3-3-70b-vllm-2 runs print 'FlashInfer failed to import for V1 engine on Blackwell (SM 10.0) GPUs' and
'topk_topp_sampler.py:59] FlashInfer is not available. Falling back to the PyTorch-native implementation' (the pip
install: v0.9.1 topk_topp_sampler.py:15-19 sets is_flashinfer_available False on the ImportError, :58-62 native).
The Llama-3.1-8B FP8 TP 1 run printed 'Available KV cache memory: 149.78 GiB', 'GPU KV cache size: 1,227,024 tokens';
planned without the image the plan was 1.8 % low (the native path's copies of 1,024 × 128,256 float32 logits).
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.plan_fits import committed_fits, plan_fits
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.calibration import FIT_TERMS, FITS
from kvtop.domain.gpus import gpu_key
from kvtop.units import GIB

RECORDS = {record.id: record for record in load("vllm") if record.id.startswith("chris113113-sweep-")}
IMAGE_RUNS = ("llama-3.1-8b-fp8-tp1", "llama-3.1-8b-fp8-tp2", "llama-3.3-70b-fp8-tp2", "llama-3.3-70b-fp8-tp4",
              "llama-3.3-70b-fp8-tp8", "llama-3.3-70b-bf16-tp8", "gemma-3-27b-fp8-tp1", "gemma-3-27b-fp8-tp2",
              "gemma-3-27b-fp8-tp4")  # fmt: skip
PIP_RUNS = ("llama-3.3-70b-bf16-tp1", "llama-3.3-70b-bf16-tp2", "llama-3.3-70b-bf16-tp4")


def _activation_basis(run: str) -> str:
    record = RECORDS[f"chris113113-sweep-{run}-b200-v091"]
    term = {found.term: found for found in vllm.terms(record.inputs())}[Term.ACTIVATION]
    return term.basis


def test_every_record_of_the_sweep_is_sorted() -> None:
    assert len(RECORDS) == len(IMAGE_RUNS) + len(PIP_RUNS) == 12


@pytest.mark.parametrize("run", IMAGE_RUNS)
def test_runs_printing_flashinfers_sampler_are_planned_on_it(run: str) -> None:
    assert "FlashInfer: the official image installs it" in _activation_basis(run)


@pytest.mark.parametrize("run", PIP_RUNS)
def test_runs_printing_the_native_fallback_stay_unknown_not_flashinfer(run: str) -> None:
    """No image: the install is not known before the start, so the plan keeps both paths, centred on the native one."""
    assert "not known before the start" in _activation_basis(run)


def test_the_llama_8b_fp8_run_lands_on_its_log() -> None:
    record = RECORDS["chris113113-sweep-llama-3.1-8b-fp8-tp1-b200-v091"]
    assert record.model is not None
    plan = planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), fits=plan_fits(committed_fits(FITS), FIT_TERMS))  # fmt: skip
    assert abs(plan.ledger.engine.kv_budget_bytes / GIB / 149.78 - 1) < 0.01  # the log's 149.78 GiB
    assert abs(plan.ledger.token_capacity / 1_227_024 - 1) < 0.01  # the log's 1,227,024 tokens
