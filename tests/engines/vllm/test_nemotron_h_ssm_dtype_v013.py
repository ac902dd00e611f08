"""vLLM 0.13.0 keeps a NemotronH SSM state in float16 where the config.json names no `mamba_ssm_cache_dtype`.

vLLM 0.13.0 model_executor/models/config.py NemotronHForCausalLMConfig: `getattr(hf_config, "mamba_ssm_cache_dtype",
"float16")`; the config class there is the checkpoint's own (transformers 4.57.6 has no nemotron_h; vLLM's copy in
transformers_utils/configs/nemotron_h.py sets no such field), so transformers 5.x's NemotronHConfig default (float32)
is no field of the file. Expected: the engine's own run (tests/data/engine_diff/vllm-0.13.0.json, its log "Updating
mamba_ssm_cache_dtype to 'float16'" and "Setting attention block size to 2080 tokens"), and the arithmetic by hand.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from tests.data_paths import DATA

CONFIG = "nvidia--Nemotron-H-56B-Base-8K"
# One Mamba layer's state at TP 1: SSM 256 heads × 64 × 256 state × 2 B (float16) = 8,388,608 B, conv
# (4 − 1) × (256 × 64 + 2 × 8 groups × 256) × 2 B = 122,880 B: 8,511,488 B. One attention layer's token:
# 8 KV heads × 128 × 2 (K, V) × 2 B = 4,096 B. Block: 16 × cdiv(8,511,488, 16 × 4,096) = 16 × 130 = 2,080.
STATE = 256 * 64 * 256 * 2 + 3 * (256 * 64 + 2 * 8 * 256) * 2
BLOCK = 16 * -(-STATE // (16 * 4096))
# 54 Mamba layers in 6 groups of 9 (padded to 10) beside the 10 attention layers: a block id spans 10 layers'
# pages of 2,080 × 4,096 B: 85,196,800 B; 40 GiB ÷ that = 504 blocks; 504 ÷ 7 groups × 2,080 = 149,760 tokens.
PER_BLOCK = 10 * BLOCK * 4096


def _row(tp: int, dtype: str) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "vllm-0.13.0.json").read_text())["results"]
    return next(r for r in rows if r["config"] == CONFIG and r["tp"] == tp and r["kv_dtype"] == dtype
                and r["gpu"] == "sm80")  # fmt: skip


def test_the_hand_arithmetic_is_the_engine_s() -> None:
    row = _row(1, "auto")
    assert (BLOCK, PER_BLOCK) == (2080, 85_196_800)
    assert (row["block_size"], row["bytes_per_block"], row["num_blocks"]) == (BLOCK, PER_BLOCK, 504)
    assert row["tokens_logged"] == 504 // 7 * BLOCK == 149_760


@pytest.mark.parametrize(
    ("tp", "dtype", "block", "tokens"), [(1, "auto", 2080, 149_760), (8, "fp8", 4160, 2_396_160)]
)
def test_kvtop_plans_the_float16_state(tp: int, dtype: str, block: int, tokens: int) -> None:
    row = _row(tp, dtype)
    assert (row["block_size"], row["tokens_logged"]) == (block, tokens)
    plan = kvtop_plan("vllm", "0.13.0", row)
    assert (plan["block_size"], plan["tokens"]) == (block, tokens)
