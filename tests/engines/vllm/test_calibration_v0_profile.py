"""V0's profiled activation peak is the larger of its forward and its sampler, not their sum (`v0_profile.py`).

The figures are two real starts of one user and GPU (vllm#10517, tests/data/calibration/vllm.jsonl): Llama-3.1-8B-Instruct
on an RTX 3090, vLLM 0.6.4, `--gpu-memory-utilization 0.9`, `--max-model-len 20000` and `29000` (chunked prefill off below
32K, so V0 profiles max_model_len tokens over its default 256 seqs). Their `Memory profiling results` print
peak_torch_memory 17.06 and 17.98 GiB with 14.99 of weights: 2.07 and 2.99 GiB of activation.

By hand from V0's code (Llama-3.1-8B: hidden 4,096, intermediate 14,336, vocabulary 128,256, bf16):
- forward at its MLP: tokens × (3 × 14,336 + 4,096) × 2 B (gate-up output, the activation's output, the down
  projection's output) + 2 × tokens × 4,096 × 2 B (the layer's residual and normed input) = tokens × 110,592 B:
  20,000 → 2,211,840,000 B (2.060 GiB), 29,000 → 3,207,168,000 B (2.987 GiB);
- sampler: 8 × 256 × 128,256 × 4 B (the sort-based top-k/top-p's copies) + tokens × 4,096 × 2 B (the hidden states):
  1,050,673,152 + 163,840,000 B at 20,000 tokens (1.13 GiB): the forward is the larger.
The old V0 fit added them (5.7 × 0.122 + 0.92 × 1.755 = 2.36 GiB at 20,000 tokens, 0.29 over the log).
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.calibration import fit_features
from kvtop.domain.engines.vllm.v0_profile import (
    v0_forward_bound,
    v0_forward_bytes,
    v0_moe_forward,
    v0_sampler_bytes,
)
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

LLAMA = load_config_file(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
LOGGED = {20000: 2.07, 29000: 2.99}  # GiB, peak_torch_memory less the weights, as printed


def _inputs(context: int, version: str = "0.6.4") -> CalibrationInputs:
    settings = parse_flags("vllm", ["--max-model-len", str(context), "--gpu-memory-utilization", "0.9"], strict=True)
    return CalibrationInputs(
        model=LLAMA, settings=settings, layout=ParallelLayout(), gpu_name="RTX3090",
        gpu_total_bytes=gpu_total_bytes("RTX3090"), version=ResolvedVersion(text=version), weights_bytes=0,
        context_length=context,
    )  # fmt: skip


def test_the_forward_counts_the_mlp_and_the_layers_held_hidden_states() -> None:
    for tokens, logged in LOGGED.items():
        forward = v0_forward_bytes(_inputs(tokens))
        assert forward == tokens * 110_592
        assert abs(forward / GIB - logged) < 0.015  # the log prints two decimals


def test_the_sampler_is_the_smaller_side_at_these_batches() -> None:
    inputs = _inputs(20000)
    assert v0_sampler_bytes(inputs) == 1_050_673_152 + 163_840_000
    assert v0_forward_bound(inputs)
    assert fit_features("vllm.activation.v0", inputs) is None  # the sampler's fit never sees a forward-bound log


def test_the_plan_charges_the_larger_side() -> None:
    for tokens, logged in LOGGED.items():
        settings = parse_flags("vllm", ["--engine-version", "0.6.4", "--max-model-len", str(tokens),
                                        "--gpu-memory-utilization", "0.9"])  # fmt: skip
        plan = planned_capacity(LLAMA, settings, gpu_total_bytes=gpu_total_bytes("RTX3090"), gpu_name="RTX3090",
                                measured=MeasuredInputs(weights_bytes=round(14.99 * GIB)))  # fmt: skip
        activation = plan.estimate.term(Term.ACTIVATION)
        assert activation is not None and activation.bytes == tokens * 110_592
        assert abs(activation.bytes / GIB - logged) < 0.015


def test_v1_and_dense_models_are_not_v0_moe() -> None:
    assert v0_forward_bytes(_inputs(20000, "0.8.0")) is None
    assert not v0_moe_forward(_inputs(20000))
