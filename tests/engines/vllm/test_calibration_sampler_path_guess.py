"""The text model's fitted guess (LoRA's, a multimodal model's, pipeline stages') follows the sampler's profiled path.

vLLM's `profile_run` samples the text model's last hidden states whatever runs beside it: LoRA's dummy adapters join
`_dummy_run`'s forward only (v1/worker/gpu_model_runner.py:2757, lora_model_runner_mixin.py:91-167 at v0.10.2), and
`_dummy_sampler_run` follows it (:2981-3036 at v0.10.2). So where the launch's official image installs FlashInfer
(sampler_path.py, v0.9.0 – v0.11.0), the guess loses the native path's logits copies as a fitted peak does.

The figures are a real start's (tests/data/calibration/vllm.jsonl `nebius-demo-day-qwen2.5-7b-instruct-lora-r64-h100-v0102`,
fabiogomezdiaz/nebius-demo-day task-2/k8s/vllm.yaml and docs/task-2/report.md): Qwen/Qwen2.5-7B-Instruct on one H100
80GB in `vllm/vllm-openai:v0.10.2` with `--enable-lora --max-lora-rank 64 --gpu-memory-utilization 0.85`; it printed
14.55 GiB of weights (the LoRA slots' buffers beside the book's 14.19) and 50.55 GiB of KV, so 0.85 × 79.18 − 14.55 −
50.55 = 2.20 GiB went to the activation peak and non-torch memory, where the native path's copies alone would be
9.5 × 1,024 × 152,064 × 4 B = 5.5 GiB.
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN25_7B = CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"
ARGS = "--model Qwen/Qwen2.5-7B-Instruct --enable-lora --max-lora-rank 64 --gpu-memory-utilization 0.85 --trust-remote-code"
LOGGED_WEIGHTS = round(14.55 * GIB)
LOGGED_KV = 50.55 * GIB
BESIDE_WEIGHTS_AND_KV = (0.85 * 79.18 - 14.55 - 50.55) * GIB
# the forward's MLP transient at vllm serve's 8,192 batched tokens on an H100, with the residual and normed input held
# across it: 8,192 × (3 × 18,944 + 3,584) × 2 B + 2 × 8,192 × 3,584 × 2 B (Qwen2.5-7B's widths)
FORWARD_AT_8192 = 8192 * (3 * 18944 + 3584) * 2 + 2 * 8192 * 3584 * 2
# FlashInfer's path at v0.10.2 (topk_topp_sampler.py:218-254, flashinfer 0.3.0 sampling.py:980-981): 3.5 copies of
# 1,024 seqs × Qwen2.5-7B's 152,064 × 4 B
FLASHINFER_COPIES = round(3.5 * 1024 * 152064 * 4)


def _plan(line: str) -> CapacityPlan:
    settings = parse_launch_command(line)
    assert settings is not None
    return planned_capacity(load_config_file(QWEN25_7B), settings, gpu_total_bytes=gpu_total_bytes("H100"),
                            gpu_name="H100", measured=MeasuredInputs(weights_bytes=LOGGED_WEIGHTS))  # fmt: skip


def test_a_lora_start_in_the_v0_10_2_image_samples_with_flashinfer() -> None:
    plan = _plan(f"docker run --gpus all vllm/vllm-openai:v0.10.2 {ARGS}")
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.source == "assumed"
    assert "FlashInfer's top-k/top-p sampler" in activation.basis and "LoRA buffers are not modelled" in activation.basis
    # the native copies beyond FlashInfer's taken off: the peak keeps FlashInfer's 3.5 copies (the bf16 logits, their
    # float32 cast, top_k_mask_logits' masked copy and its softmax: flashinfer_copies.py), above the forward's MLP
    # transient and under what the start left beside weights and KV (2.20 GiB, non-torch memory included)
    assert activation.bytes >= FLASHINFER_COPIES > FORWARD_AT_8192
    assert activation.bytes < BESIDE_WEIGHTS_AND_KV
    # the guess keeps its error (the native path's figure): a failed FlashInfer build stays in the interval
    assert activation.error_bytes > 5 * GIB
    # the KV lands within 5 % of the 50.55 GiB the start printed (46.8 GiB on the native guess, −7.5 %; −0.5 % here)
    assert abs(plan.ledger.engine.kv_budget_bytes / LOGGED_KV - 1) < 0.05
    assert plan.kv_budget_min_bytes <= LOGGED_KV <= plan.kv_budget_max_bytes


def test_the_same_launch_without_the_image_keeps_the_native_guess() -> None:
    # a pip install of the same release: whether FlashInfer is importable is not known
    plan = _plan(f"vllm serve {ARGS} --engine-version 0.10.2")
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and "FlashInfer" not in activation.basis
    assert activation.bytes > 5 * GIB  # the text model's fit at 1,024 seqs: the native path's copies
    assert plan.ledger.engine.kv_budget_bytes < 0.95 * LOGGED_KV
