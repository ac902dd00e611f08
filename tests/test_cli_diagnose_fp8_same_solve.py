"""Both sides of diagnose's FP8 KV advice come from one solve: the re-solve at FP8 keeps the speculative draft.

Before, the modern-deployment demo's SGLang engine (Qwen3-235B-A22B TP 4 with an EAGLE3 draft,
examples/scenarios/modern-deployment.json) was advised "capacity 117,552 → 263,185 tokens per rank" (× 2.24): the
what-if at FP8 re-solved the calibrated launch without its draft, so it no longer charged the draft's weights
(682,917,888 B per rank) and the extra KV budget showed up as tokens. The KV cell by hand from the config
(tests/data/configs: 94 layers, 4 KV heads of 128, bf16; TP 4 → 1 head per rank): 94 × 2 × 128 × 2 B = 48,128 B,
and the draft's one layer 2 × 128 × 2 B = 512 B, pooled with the target's (SGLang): 48,640 B; FP8 halves both,
24,320 B. The budget does not depend on the KV dtype, so the tokens at FP8 are twice the tokens at bf16
(each the budget ÷ the cell, floored; at the fits of 2c132cb6 5,717,744,798 B ÷ 48,640 = 117,552; ÷ 24,320 = 235,104).

The budget by hand (SGLang's arithmetic, tests/calibrated_figures.py, from the committed fits): pre-load = CUDA's
total as the demo's NVML v2 reports it (its H200s' total less their reserve, as on a live node: the logged
139.81 GiB of examples/measured/starts.json, DEMO_H200_CUDA_TOTAL_BYTES) less SGLang's context fit at TP 4 on NVLink
GPUs; the rank's weights from the config (hidden 4,096,
94 layers, 64 query and 4 KV heads of 128, 128 experts of MLP 1,536, vocab 151,936, bf16, TP 4 = EP 4): embedding
and LM head 151,936 × 4,096 × 2 B ÷ 4 each; attention 94 × (q and o 2 × 4,096 × 8,192 ÷ 4 + k and v 2 × 4,096 × 512
÷ 4) × 2 B; 32 routed experts a rank 94 × 32 × 3 × 4,096 × 1,536 × 2 B; the router 94 × 128 × 4,096 × 2 B; norms
(94 × (2 × 4,096 + 2 × 128) + 4,096) × 2 B; the rope cache, 20 MiB beyond the book; the unused tails of the segments
PyTorch's caching allocator opens for them (c10/cuda/CUDACachingAllocator.cpp; SGLang measures the load as free memory
before less after): the embedding and LM head shards, 296.75 MiB each, in 298 MiB segments (2 × 1,310,720 B), and
the routers and norms, 100,162,560 B of small tensors (each norm of 128 rounded to 512 B), in 48 segments of 2 MiB
(500,736 B), every other matrix a whole number of 2 MiB: 3,122,176 B; the 8 redundant experts
(--ep-num-redundant-experts) 2 more a rank: 94 × 2 × 3 × 4,096 × 1,536 × 2 B; the EAGLE3 draft 682,917,888 B; and
mem_fraction_static 0.876 (SGLang 0.5.23's automatic share of this launch on an H200: 512 + 1.5 × 8,192 + 4 ÷ 8 ×
1,024 + 2 × 512 decode graphs + 8 × 58 prefill sizes + 1,024 for the breakable prefill graphs beside DeepEP, memory_hook.py
:391-397, = 15,824 MiB above the 10 GiB floor, + 2,048 DeepEP: round((143,771 − 17,872) ÷ 143,771, 3)).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.calibrated_figures import (
    DEMO_H200_CUDA_TOTAL_BYTES,
    MIB,
    sglang_context_bytes,
    sglang_kv_budget_bytes,
)

EXPERT = 3 * 4_096 * 1_536 * 2  # one expert's gate, up and down, bf16
BOOK = (2 * 151_936 * 4_096 * 2 // 4 + 94 * (2 * 4_096 * 8_192 // 4 + 2 * 4_096 * 512 // 4) * 2 + 94 * 32 * EXPERT
        + 94 * 128 * 4_096 * 2 + (94 * (2 * 4_096 + 2 * 128) + 4_096) * 2)  # fmt: skip
SMALL_TENSORS = 94 * 128 * 4_096 * 2 + 94 * (2 * 4_096 * 2 + 2 * 128 * 2) + 4_096 * 2  # routers and norms
ALLOCATOR_TAILS = 2 * ((298 << 20) - 151_936 * 4_096 * 2 // 4) + 48 * (2 << 20) - SMALL_TENSORS
WEIGHTS = BOOK + 20 * MIB + ALLOCATOR_TAILS + 94 * 2 * EXPERT + 682_917_888
BUDGET = sglang_kv_budget_bytes(DEMO_H200_CUDA_TOTAL_BYTES - sglang_context_bytes(4), WEIGHTS, 0.876)


def test_sglang_s_fp8_advice_doubles_with_its_draft_kept(capsys: pytest.CaptureFixture[str]) -> None:
    # 0, or 1 where the demo's tick shows a problem finding (commands/diagnose.py): the advice is the same either way
    assert main(["--demo", "modern-deployment", "diagnose", "--json"]) in (0, 1)
    advice = json.loads(capsys.readouterr().out)["advice"]
    fp8 = next(f for f in advice if f["rule"] == "bf16_kv_where_fp8_supported" and f["engine_id"].startswith("sglang"))
    assert BOOK == 117_621_939_200  # the book's rows summed by hand
    assert ALLOCATOR_TAILS == 2 * 1_310_720 + 500_736 == 3_122_176
    bf16, fp8_tokens = BUDGET // 48_640, BUDGET // 24_320  # 93,640 and 187,280 (115,093 and 230,186 at 0.883, at the fits of 53c086c0)
    assert fp8["evidence"][0] == "KV bytes per token per rank: 48,640 B (bf16) → 24,320 B (FP8)"
    # the change starts from the plan, and says so beside the figure the demo's endpoint states (its scenario's)
    assert fp8["evidence"][1].startswith(
        f"capacity {bf16:,} predicted → {fp8_tokens:,} tokens per rank (the demo simulates "
    )
    assert (fp8["start"]["tokens"], fp8["start"]["source"], fp8["start"]["engine_source"]) == (bf16, "predicted", "simulated")
    assert fp8["gain_tokens"] == fp8_tokens - bf16
