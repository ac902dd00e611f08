"""At v0.19.x on an SM 8.0 GPU the profiled sampler holds what `sampler_peak.py` counts, and no more, for a large
vocabulary too.

vLLM 0.19.1's native sampler path on an A100 is the one the count reads (VLLM_USE_FLASHINFER_SAMPLER unset:
v1/sample/ops/topk_topp_sampler.py:35-61 of the 0.19.1 wheel; the Triton top-k/top-p from 8 rows, :248-252; the buffer
of min(next_pow2(min(SMs, seqs)), SMs) vocab rows, topk_topp_triton.py:1010-1019; `_dummy_sampler_run` with
`max_num_logprobs=None`, so no logprobs copy, sampler.py:79-90). `vllm serve`'s defaults on an A100 are 2,048 tokens and
256 seqs (engine/arg_utils.py:2053-2071 at 0.19.0: 'a100' is kept out of the 8,192/1,024 tier).

The log: file57978845466-qwen3-8b-a100-40gb-v0191 (tests/data/calibration/vllm.jsonl; Qwen3-8B, vocabulary 151,936,
utilisation 0.9): 'Model loading took 15.27 GiB memory', 'Available KV cache memory: 19.36 GiB'; the A100-40GB's CUDA
total as three corpus logs print it: 39.39 to 39.50 GiB. The TP-1 non-torch memory v0.19.0 printed on llm-d-planner's
H100 starts: 0.24 to 0.27 GiB (same file, llmd-v019-*).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.sampler_peak import counted_sampler_bytes
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN3 = load_config_file(CONFIGS / "Qwen--Qwen3-8B.json")
TOKENS, SEQS = 2048, 256
A100_SMS = 108
CUDA_TOTALS = (39.39 * GIB, 39.50 * GIB)
WEIGHTS, KV = 15.27 * GIB, 19.36 * GIB
NON_TORCH_TP1 = 0.24 * GIB  # the least the v0.19.0 TP-1 starts printed
PRINTED = 0.005 * GIB  # each printed figure's rounding


def _counted() -> int | None:
    version = ResolvedVersion(text="0.19.1", source=VersionSource.FLAG, detail="--engine-version 0.19.1")
    return counted_sampler_bytes(QWEN3, ParallelLayout(), version, "A100-40GB", TOKENS, SEQS)


def test_the_a100_count_is_the_code_arithmetic() -> None:
    """3.5 copies of seqs × vocab × 4 B (bf16 logits, float32 copy, probabilities, noise), 108 kernel rows (an A100's
    SMs, fewer than the 256 seqs) and the hidden states over tokens + seqs."""
    expected = round(3.5 * SEQS * 151_936 * 4) + A100_SMS * 151_936 * 4 + (TOKENS + SEQS) * 4_096 * 2
    assert _counted() == expected


def test_a_152k_vocabulary_on_the_a100_leaves_no_room_for_another_logits_copy() -> None:
    """What the log leaves beside the weights, less the count and the least TP-1 non-torch memory, is under one more
    seqs × vocab float32 copy (0.145 GiB) at either end of the A100-40GB's total: a vocab-sized term kvtop missed at
    0.19.x on SM 8.0 would show here, as the ≈ 0.6 GiB the A100-40GB Llama-3.1-8B and A10G Qwen2.5-14B starts
    leave does not."""
    counted = _counted()
    assert counted is not None
    copy = SEQS * 151_936 * 4
    for total in CUDA_TOTALS:
        beside = 0.9 * total - WEIGHTS - KV
        room = beside - counted - NON_TORCH_TP1
        assert -3 * PRINTED < room < copy, (total / GIB, room / GIB)
