"""The weights term of a plan: the book as the load casts it, and what vLLM's loader holds beside it.

Expected values are the checkpoints' tensor shapes written out as arithmetic (Llama-3.1-8B-Instruct:
hidden 4096, 32 layers, vocabulary 128,256, 8,030,261,248 parameters = its safetensors index's
total_size 16,060,522,496 bytes ÷ 2; gpt-oss-120b: 36 layers of 128 experts, hidden and intermediate
2880) and the weights vLLM printed for the same launches (llm-d-planner's H100 runs,
tests/data/calibration/vllm.jsonl: 29.98, 8.49 and 64.38 GiB; myoceane.fr's A100 start of gpt-oss-20b:
13.72 GiB; Llama-4-Scout at TP 4: 53.12 GiB). vLLM also holds the rope's cos/sin cache on every rank
(rotary_embedding/base.py: max_position_embeddings × rotary_dim in the model's dtype; gpt_oss.py builds it in
float32), which the checkpoint does not count.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import CALIBRATED_WEIGHTS_ROW
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"
GPT_OSS_120B = CONFIGS / "openai--gpt-oss-120b.json"
GPT_OSS_20B = CONFIGS / "openai--gpt-oss-20b.json"
LLAMA_8B_BF16_BYTES = 16_060_522_496  # the safetensors index's total_size
EMBEDDING = 128_256 * 4096  # the embedding, and the LM head (untied) again
NORMS = (2 * 32 + 1) * 4096
LINEAR = 8_030_261_248 - 2 * EMBEDDING - NORMS  # the 7 matrices of each of the 32 layers
LLAMA_8B_ROPE = 131_072 * 128 * 2  # max_position_embeddings × head_dim × bf16: the cos/sin cache
GPT_OSS_ROPE = 131_072 * 64 * 4  # gpt-oss: head_dim 64, its rope built in float32
SCOUT = CONFIGS / "meta-llama--Llama-4-Scout-17B-16E-Instruct.json"


def plan(config: Path, gpu: str, *flags: str, measured: MeasuredInputs | None = None):  # type: ignore[no-untyped-def]
    model = load_config_file(config)
    settings = parse_flags("vllm", [*flags]).model_copy(update={"model": str(config)})
    return planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu, measured=measured)


def weights_of(found) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    term = found.estimate.term(Term.WEIGHTS)
    assert term is not None
    return term.bytes, term.source


def book_of(found) -> int:  # type: ignore[no-untyped-def]
    """The largest rank's weights book without the calibrated term's row beyond it (the checkpoint's count);
    the ledger's own weights figure is the term's: one figure for the budget, the table and the rank."""
    rank = max(found.ledger.ranks, key=lambda r: r.weights_bytes)
    assert found.ledger.weights_bytes == weights_of(found)[0]
    return sum(row.bytes for row in rank.weights.rows if row.component != CALIBRATED_WEIGHTS_ROW)


def test_dtype_float32_holds_every_tensor_in_four_bytes() -> None:
    """llm-d-planner's `--dtype float32` start of Llama-3.1-8B-Instruct printed 29.98 GiB of weights."""
    found = plan(LLAMA_8B, "H100", "--engine-version", "0.19.0", "--dtype", "float32")
    weights, source = weights_of(found)
    assert weights == 2 * LLAMA_8B_BF16_BYTES + 2 * LLAMA_8B_ROPE and source == "calibrated"  # the cache in fp32
    assert weights / GIB == pytest.approx(29.98, rel=0.005)
    # the budget reads it: the plan's KV memory is the BF16 plan's less the 14.96 GiB the cast adds (and the
    # rope cache's 32 MiB, float32 too), and the profile's peak as vLLM 0.19.0's code counts it (sampler_peak.py,
    # since session 68): the hidden states of 8,192 + 1,024 dummy rows grow from 2 to 4 B a value, and the sampler
    # drops half a copy of 1,024 seqs × 128,256 vocab × 4 B (the model-dtype logits are float32 already, so
    # sampler.py's `logits.to(torch.float32)` makes none: 3.0 copies where a 16-bit model holds 3.5)
    bf16 = plan(LLAMA_8B, "H100", "--engine-version", "0.19.0")
    moved = bf16.ledger.engine.kv_budget_bytes - found.ledger.engine.kv_budget_bytes
    hidden_states = (8_192 + 1_024) * 4_096 * (4 - 2)
    half_a_logits_copy = 1_024 * 128_256 * 4 // 2
    assert moved == LLAMA_8B_BF16_BYTES + LLAMA_8B_ROPE + hidden_states - half_a_logits_copy == 15_906_906_112


def test_quantization_fp8_on_a_bf16_checkpoint_holds_its_matrices_in_one_byte() -> None:
    """Each linear matrix in FP8 with one fp32 scale; the embedding, LM head and norms stay BF16: the
    start with `--quantization fp8` printed 8.49 GiB. Fp8Config also gives each of the 32 attention layers its
    KV-cache method's q/k/v/prob scale scalars, 2 B each (BaseKVCacheMethod.create_weights)."""
    weights, source = weights_of(plan(LLAMA_8B, "H100", "--engine-version", "0.19.0", "--quantization", "fp8"))
    expected = 2 * EMBEDDING * 2 + NORMS * 2 + LINEAR * 1 + 32 * 7 * 4 + 32 * 4 * 2
    assert weights == expected + LLAMA_8B_ROPE == 9_081_201_792 + 33_554_432 and source == "calibrated"
    assert weights / GIB == pytest.approx(8.49, rel=0.005)


def test_a_cast_the_book_does_not_model_stays_assumed() -> None:
    """bitsandbytes quantizes at load in its own format: the checkpoint's bytes, said with ± 50 %."""
    found = plan(LLAMA_8B, "H100", "--engine-version", "0.19.0", "--quantization", "bitsandbytes")
    term = found.estimate.term(Term.WEIGHTS)
    assert term is not None and term.source == "assumed" and term.bytes == LLAMA_8B_BF16_BYTES
    assert term.error_bytes == LLAMA_8B_BF16_BYTES // 2


def test_measured_weights_replace_the_cast() -> None:
    found = plan(LLAMA_8B, "H100", "--engine-version", "0.19.0", "--dtype", "float32",
                 measured=MeasuredInputs(weights_bytes=30 * GIB))  # fmt: skip
    assert weights_of(found) == (30 * GIB, "measured") and found.estimate.weights_beside_book_bytes == 0


def test_vllms_mxfp4_experts_on_hopper_hold_their_scales_twice() -> None:
    """gpt-oss-120b on an H100 under the Triton backend (llm-d's vLLM 0.11.0 start, an install with triton_kernels)
    printed 64.38 GiB of weights, 5.6 % above the checkpoint's tensors; planned at v0.12.0, the first wheel that
    vendors triton_kernels (Triton the release's: engines/vllm/mxfp4_backend.py). The Triton backend keeps the checkpoint's E8M0 scales (one byte per 32 weights) beside the
    swizzled copy, whose rows triton_kernels' HopperMXScaleLayout pads to a multiple of 256 (w13 5,760 → 5,888
    rows, w2 2,880 → 3,072; 90 scale columns, already even), and holds the experts' biases in float32 (2 bytes more
    each). The checkpoint's scales (63.3 and 31.6 MiB a layer) each hold their whole 2 MiB-rounded segment in torch's
    caching allocator (64 and 32 MiB: within 1 MiB of the boundary, not split); of the swizzled copies, w2's
    33.75 MiB holds 34 MiB, w13's 64.69 MiB is split (1.31 MiB left over)."""
    found = plan(GPT_OSS_120B, "H100", "--engine-version", "0.12.0", "--gpu-memory-utilization", "0.95",
                 "--max-model-len", "16000")  # fmt: skip
    weights, _ = weights_of(found)
    experts, width, mib = 128, 2880, 1 << 20
    scales_again = experts * (5888 + 3072) * (width // 32)  # the swizzled copies, rows padded to 256
    biases_widened = experts * (2 * width + width) * 2
    rounding = (64 * mib - experts * 2 * width * width // 32) + (32 * mib - experts * width * width // 32)
    rounding += 34 * mib - experts * 3072 * (width // 32)  # w2's swizzled copy in its unsplit segment
    assert weights - book_of(found) == 36 * (scales_again + biases_widened + rounding) + GPT_OSS_ROPE
    assert 36 * rounding == 50_135_040
    assert weights / GIB == pytest.approx(64.38, rel=0.005)
    assert book_of(found) / GIB < 64.38 * 0.95  # the book alone: 5.6 % light


def test_vllms_mxfp4_experts_on_ampere_are_padded_for_marlin() -> None:
    """gpt-oss-20b on an A100 (vLLM 0.19.0, myoceane.fr) printed 13.72 GiB of weights: the Marlin backend pads
    the experts' intermediate size 2880 to 2944 (a multiple of 128) and the hidden size to 3072 (256) at
    create_weights: parameters the class builds, so the book's own row (engines/vllm/weights_built.py); the
    calibrated term adds only the rope's cache beside it."""
    found = plan(GPT_OSS_20B, "A100-80GB", "--engine-version", "0.19.0", "--max-model-len", "131072",
                 "--gpu-memory-utilization", "0.65")  # fmt: skip
    weights, _ = weights_of(found)
    grown = 24 * 32 * 3 * (2944 * 3072 - 2880 * 2880) * 17 // 32  # 4.25 bits a weight, scales included
    rank = max(found.ledger.ranks, key=lambda r: r.weights_bytes)
    assert {row.component: row.bytes for row in rank.weights.rows}["expert_padding"] == grown == 917_471_232
    assert weights - book_of(found) == GPT_OSS_ROPE
    assert weights / GIB == pytest.approx(13.72, rel=0.005)


def test_mxfp4_experts_on_blackwell_keep_the_book() -> None:
    """FlashInfer's Blackwell backends (padding to 256, shuffled copies) are not modelled: the book stands,
    with the rope's cache beside it."""
    found = plan(GPT_OSS_120B, "B200", "--engine-version", "0.11.0", "--max-model-len", "16000")
    assert weights_of(found)[0] == book_of(found) + GPT_OSS_ROPE


def test_vllm_holds_the_ropes_cos_sin_cache_on_every_rank() -> None:
    """Llama-4-Scout at TP 4 (vLLM 0.19.0, llm-d-planner's H100 run) printed 53.12 GiB of weights a rank, 2.5 GiB
    above the checkpoint's quarter: its rope cache is 10,485,760 positions × 128 × 2 B = 2.5 GiB, whole on each of
    the 4 ranks. Llama-3.1-8B's is 131,072 × 128 × 2 B = 32 MiB (14.99 GiB printed: the checkpoint's 14.96 + 0.03)."""
    found = plan(SCOUT, "H100", "--engine-version", "0.19.0", "--tp", "4", "--gpu-memory-utilization", "0.95",
                 "--max-model-len", "8192")  # fmt: skip
    weights, _ = weights_of(found)
    assert weights - book_of(found) == 10_485_760 * 128 * 2 == 5 * GIB // 2
    assert weights / GIB == pytest.approx(53.12, rel=0.001)
    assert book_of(found) / GIB < 53.12 * 0.96  # the book alone: 4.7 % light
    llama = plan(LLAMA_8B, "H100", "--engine-version", "0.19.0")
    assert weights_of(llama)[0] == LLAMA_8B_BF16_BYTES + LLAMA_8B_ROPE
    assert weights_of(llama)[0] / GIB == pytest.approx(14.99, abs=0.005)
