"""V0's profiled activation peak is the larger of its forward and its sampler, not their sum (`v0_profile.py`).

The figures are two real starts of one user and GPU (vllm#10517, tests/data/calibration/vllm.jsonl): Llama-3.1-8B-Instruct
on an RTX 3090, vLLM 0.6.4, `--gpu-memory-utilization 0.9`, `--max-model-len 20000` and `29000` (chunked prefill off below
32K, so V0 profiles max_model_len tokens over its default 256 seqs). Their `Memory profiling results` print
peak_torch_memory 17.06 and 17.98 GiB with 14.99 of weights: 2.07 and 2.99 GiB of activation.

By hand from V0's code (Llama-3.1-8B: hidden 4,096, intermediate 14,336, vocabulary 128,256, bf16):
- forward at its MLP: tokens × (3 × 14,336 + 4,096) × 2 B (gate-up output, the activation's output, the down
  projection's output) + 2 × tokens × 4,096 × 2 B (the layer's residual and normed input) = tokens × 110,592 B:
  20,000 → 2,211,840,000 B (2.060 GiB), 29,000 → 3,207,168,000 B (2.987 GiB);
- sampler: 9.5 × 256 × 128,256 × 4 B (the top-k/top-p's `logits.sort` on 256 rows: the bf16 logits, the float32 copy,
  the sorted values and int64 indices, torch's int64 reverse indices and cub's alternate key and value buffers) +
  tokens × 4,096 × 2 B (the hidden states): 1,247,674,368 + 163,840,000 B at 20,000 tokens (1.31 GiB): the forward is
  the larger.
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
from kvtop.domain.ledger import layout_from_settings
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
    assert v0_sampler_bytes(inputs) == 1_247_674_368 + 163_840_000
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


R1 = load_config_file(CONFIGS / "deepseek-ai--DeepSeek-R1.json")
# DeepSeek-R1 on 8 x H200 at vLLM 0.7.3, as search-index id 20903468563 launched it (tests/data/calibration/vllm.jsonl)
R1_FLAGS = ["--tensor-parallel-size", "8", "--max-model-len", "128000", "--max-num-batched-tokens", "32000",
            "--max-num-seqs", "1024", "--gpu-memory-utilization", "0.85"]  # fmt: skip


def _r1_inputs() -> CalibrationInputs:
    settings = parse_flags("vllm", R1_FLAGS, strict=True)
    return CalibrationInputs(
        model=R1, settings=settings, layout=layout_from_settings(settings), gpu_name="H200",
        gpu_total_bytes=gpu_total_bytes("H200"), version=ResolvedVersion(text="0.7.3"), weights_bytes=0,
        context_length=128000,
    )  # fmt: skip


def test_a_fused_moe_counts_its_caches_the_shared_output_the_router_and_the_fp8_input() -> None:
    """By hand from vLLM 0.7.3 (fused_moe.py fused_experts_impl, invoke_fused_moe_kernel; deepseek_v2.py DeepseekV2MoE
    .forward: the shared experts run first and their output is held; fp8.py Fp8MoEMethod.apply: inplace=True) for
    DeepSeek-R1 (hidden 7,168; 8 of 256 experts of 2,048 ÷ TP 8 = 256; one shared expert; block-FP8 [128, 128]) at
    32,000 tokens, at the first expert GEMM:
    - intermediate_cache1/2/3: 32,000 × 8 × (512 + 256 + 7,168) × 2 B = 4,063,232,000;
    - the shared experts' output: 32,000 × 7,168 × 2 B = 458,752,000;
    - the router's logits 32,000 × 256 × 2 B = 16,384,000, its top-k weights and ids 32,000 × 8 × 8 B = 2,048,000;
    - per_token_group_quant_fp8 of the hidden states: 32,000 × 7,168 × 1 B + 32,000 × 56 groups × 4 B = 236,544,000
      (the second GEMM's, 256,000 × 256 + 256,000 × 2 × 4 = 67,584,000, is smaller);
    - the residual and the normed input the experts overwrite: 2 × 458,752,000 = 917,504,000.
    5,694,464,000 B (5.30 GiB); the log printed 6.37 GiB (the rest is not read) and kvtop counted 4.68 before (the
    shared experts' MLP transient, 32,000 × 768 × 2 B, in place of their output, and no FP8 input)."""
    inputs = _r1_inputs()
    assert v0_moe_forward(inputs)
    assert v0_forward_bytes(inputs) == 5_694_464_000
    # the sort's 9.5 copies of 1,024 × 129,280 × 4 B and the hidden states (5.11 GiB): the forward is the larger side
    assert v0_sampler_bytes(inputs) == 5_030_543_360 + 458_752_000
    assert v0_forward_bound(inputs)


def test_a_fused_moe_runs_its_experts_on_chunks_of_32768_tokens() -> None:
    """fused_experts_impl sizes its caches for M = min(tokens, VLLM_FUSED_MOE_CHUNK_SIZE) (32,768 by default at 0.6.4,
    0.7.1 and 0.7.3) and quantizes each chunk's input; the shared output, the router and the layer's hidden states are
    the whole batch's. At 65,536 tokens: caches 32,768 × 8 × 7,936 × 2 = 4,160,749,568; shared output 65,536 × 7,168 ×
    2 = 939,524,096; router 65,536 × 256 × 2 + 65,536 × 64 = 37,748,736; FP8 input 32,768 × 7,168 + 32,768 × 56 × 4 =
    242,221,056; residual and normed input 1,879,048,192: 7,259,291,648 B."""
    assert v0_forward_bytes(_r1_inputs(), 65536) == 7_259_291_648


def test_the_plan_of_a_v0_fused_moe_charges_the_count_assumed() -> None:
    settings = parse_flags("vllm", ["--engine-version", "0.7.3", *R1_FLAGS])
    plan = planned_capacity(R1, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200",
                            measured=MeasuredInputs(weights_bytes=round(83.88 * GIB)))  # fmt: skip
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.source == "assumed"
    assert activation.bytes == 5_694_464_000 and activation.error_bytes == 2 * GIB


def test_the_sampler_bound_logs_print_the_sorts_copies() -> None:
    """Two sampler-bound V0 starts (tests/data/calibration/vllm.jsonl), by hand from `_apply_top_k_top_p`'s
    `logits.sort` on 256 rows (torch's segmented sort: sorted values and int64 indices, int64 reverse indices, cub's
    alternate key and value buffers, beside the bf16 and float32 logits: 9.5 × 256 × vocab × 4 B) and the hidden states:
    - vllm#10511's Meta-Llama-3-8B on an H100 (v0.6.5, 8,192 tokens): 9.5 × 256 × 128,256 × 4 + 8,192 × 4,096 × 2 =
      1,314,783,232 B (1.22 GiB), printed 1.26;
    - search-index 4922787267's R1-Distill-Qwen-7B on a V100 (v0.7.1, 2,048 tokens): 9.5 × 256 × 152,064 × 4 +
      2,048 × 3,584 × 2 = 1,493,958,656 B (1.39 GiB), printed 1.40.
    The scatter's 8 copies, the count before, gave 1.04 and 1.17."""
    assert v0_sampler_bytes(_inputs(8192, "0.6.5")) == 1_314_783_232
    qwen = load_config_file(CONFIGS / "Qwen--Qwen2.5-7B.json")
    settings = parse_flags("vllm", ["--max-model-len", "2048"], strict=True)
    v100 = CalibrationInputs(
        model=qwen, settings=settings, layout=ParallelLayout(), gpu_name="V100-32GB",
        gpu_total_bytes=gpu_total_bytes("V100-32GB"), version=ResolvedVersion(text="0.7.1"), weights_bytes=0,
        context_length=2048,
    )  # fmt: skip
    assert v0_sampler_bytes(v100) == 1_493_958_656
    for counted, printed in ((1_314_783_232, 1.26), (1_493_958_656, 1.40)):
        assert abs(counted / GIB - printed) < 0.04
