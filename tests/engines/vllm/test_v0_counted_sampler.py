"""V0's sampler-bound activation peak is the sampler as its code counts it, the fit's error kept (`v0_profile.py`).

The figures are two real starts of one notebook author (dongukmoon/misc, tests/data/calibration/vllm.jsonl): GPT-2 under
`LLM("gpt2", gpu_memory_utilization=0.5)`, vLLM 0.6.4.post1, float16, on a Colab T4 and a Colab L4. Both print
'Memory profiling results: ... peak_torch_memory=0.71GiB' after 'Loading model weights took 0.2378 GB': 0.47 GiB of
activation. The old `vllm.activation.v0` fit (0.423 GiB + 6.84 × seqs × vocab × 4 B, made on vocabularies of
128,256-152,064) charged 0.423 + 6.84 × 0.0479 = 0.75 GiB.

By hand from V0's code (GPT-2: hidden 768, intermediate 3,072, vocabulary 50,257, fp16; V0's profile runs
max(1,024, 2,048) = 2,048 tokens over 256 seqs):
- sampler: 9.5 × 256 × 50,257 × 4 B (the top-k/top-p's `logits.sort` on 256 rows) = 488,900,096 B, plus the hidden
  states 2,048 × 768 × 2 B = 3,145,728 B: 492,045,824 B (0.458 GiB, the log's 0.47 to 0.012 GiB);
- forward at its MLP: 2,048 × (3 × 3,072 + 3 × 768) × 2 B = 47,185,920 B (0.044 GiB): the sampler is the larger.
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

GPT2 = load_config_file(CONFIGS / "heldout" / "mlc--gpt2.json")
COUNTED = 9.5 * 256 * 50_257 * 4 + 2_048 * 768 * 2  # 492,045,824 B
LOGGED_GIB = 0.71 - 0.2378  # peak_torch_memory less the weights, as printed


def _activation(gpu: str, version: str = "0.6.4.post1") -> tuple[int, int]:
    settings = parse_flags("vllm", ["--engine-version", version, "--gpu-memory-utilization", "0.5"])
    plan = planned_capacity(GPT2, settings, gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu,
                            measured=MeasuredInputs(weights_bytes=round(0.2378 * GIB)))  # fmt: skip
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None
    return activation.bytes, activation.error_bytes


def test_gpt2_on_colab_t4_and_l4_is_charged_the_counted_sampler() -> None:
    for gpu in ("T4", "L4"):
        charged, error = _activation(gpu)
        assert charged == COUNTED
        assert abs(charged / GIB - LOGGED_GIB) < 0.015  # the log prints two decimals
        assert error > 0  # the fit's held-out error stays the interval


def test_v1_is_not_centred_on_the_v0_count() -> None:
    charged, _ = _activation("L4", "0.10.2")
    assert charged != COUNTED
