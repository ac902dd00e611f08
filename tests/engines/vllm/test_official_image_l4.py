"""Two L4 starts of vLLM's official image at v0.10.2 and v0.11.0, planned from their launch lines: the image's
FlashInfer is the sampler's path (sampler_path.py FLASHINFER_TAKEN_ERAS), so the activation peak is FlashInfer's copies
of the logits, not the native path's the plan centres on where the install is not known.

Independent figures, the starts' own logs (tests/data/calibration/vllm.jsonl):
- techbromoho-qwen3-0.6b-l4-v0102-eager-u085-len1024 (search-index id 69675930183; the harness's docker/Dockerfile,
  69624328266: `FROM vllm/vllm-openai:v0.10.2`): 'Using FlashInfer for top-p & top-k sampling.', 'Actual usage is 1.12
  GiB for weight, 0.52 GiB for peak activation, 0.02 GiB for non-torch memory', 'Available KV cache memory: 17.07
  GiB', 'GPU KV cache size: 159,840 tokens'. Planned without the image: 151,488 (−5.2 %, 1.39 GiB of activation).
- file71080932958-qwen2.5-7b-instruct-l4-v0110-len8192-u090 (search-index id 71080932958: 'Image
  `vllm/vllm-openai:v0.11.0`', `--max-model-len=8192 --gpu-memory-utilization=0.90`): 'Available KV cache memory
  5.01 GiB', 93,840 tokens. Planned without the image: 77,536 (−17.4 %).
The code's count of FlashInfer's copies: the bf16 logits, their float32 cast, the masked copy and its softmax,
3.5 × 256 seqs × 151,936 × 4 B = 0.507 GiB for Qwen3-0.6B (flashinfer_copies.py).
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS, DATA

RUN = "docker run --runtime nvidia --gpus all -p 8000:8000 --ipc=host"
QWEN3_06B = DATA / "calibration" / "configs" / "Qwen--Qwen3-0.6B.json"
QWEN25_7B = CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"
TECHBROMOHO = ("--dtype bfloat16 --max-model-len 1024 --gpu-memory-utilization 0.85 --max-num-seqs 256 --seed 0 "
               "--enforce-eager --no-enable-prefix-caching --generation-config vllm")  # fmt: skip
EKS = "--max-model-len=8192 --gpu-memory-utilization=0.90 --port=8000"


def _plan(command: str, config):  # type: ignore[no-untyped-def]
    settings = parse_launch_command(command)
    assert settings is not None
    return planned_capacity(load_config_file(config), settings, gpu_total_bytes=gpu_total_bytes("L4"), gpu_name="L4")


def test_the_v0102_image_start_charges_flashinfers_copies() -> None:
    plan = _plan(f"{RUN} vllm/vllm-openai:v0.10.2 --model Qwen/Qwen3-0.6B {TECHBROMOHO}", QWEN3_06B)
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and "FlashInfer: the official image installs it" in activation.basis
    assert abs(activation.bytes / GIB - 0.52) < 0.02  # the log's 0.52 GiB
    assert abs(plan.ledger.engine.kv_budget_bytes / GIB - 17.07) < 0.05  # the log's 17.07 GiB
    assert abs(plan.ledger.token_capacity / 159_840 - 1) < 0.01


def test_the_same_launch_without_the_image_keeps_the_native_centre() -> None:
    """A pip install's FlashInfer is not known before the start (an extra until v0.11.1): the centre is the native
    path's, the interval reaching FlashInfer's, which holds the logged figure."""
    plan = _plan(f"vllm serve Qwen/Qwen3-0.6B --engine-version 0.10.2 {TECHBROMOHO}", QWEN3_06B)
    assert plan.ledger.token_capacity < 0.96 * 159_840
    assert plan.token_capacity_max >= 0.99 * 159_840


def test_the_v0110_image_start_on_an_l4() -> None:
    plan = _plan(f"{RUN} vllm/vllm-openai:v0.11.0 --model Qwen/Qwen2.5-7B-Instruct {EKS}", QWEN25_7B)
    assert abs(plan.ledger.engine.kv_budget_bytes / GIB - 5.01) < 0.05  # the report's 5.01 GiB
    assert abs(plan.ledger.token_capacity / 93_840 - 1) < 0.01
