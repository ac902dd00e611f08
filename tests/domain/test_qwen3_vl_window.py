"""Qwen3-VL has no sliding window (issue 28): its text config class states none (Qwen3-MoE-VL's sets
`sliding_window = None`), so vLLM's `ModelConfig.get_sliding_window` finds none and every layer is a
FullAttentionSpec. kvtop took Qwen2's class default 4,096 and windowed every layer under vLLM (V21 in
docs/fidelity.md: 930,590 tokens against vLLM's 582,528)."""

from __future__ import annotations

import json

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS
from tests.data_paths import DATA

QWEN3_VL_8B = DATA / "engine_diff" / "configs" / "Qwen--Qwen3-VL-8B-Instruct.json"
QWEN3_VL_30B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-30B-A3B-Instruct.json"
H100 = 81559 << 20


def test_qwen3_vl_configs_read_no_window() -> None:
    for path in (QWEN3_VL_8B, QWEN3_VL_30B):
        model = model_from_config(json.loads(path.read_text()), source=str(path))
        assert (model.sliding_window, model.config_sliding_window) == (None, None)
        assert ("sliding_window", 4096) not in {(d.field, d.value) for d in model.defaults_used}


def test_vllm_sizes_qwen3_vl_8b_as_full_attention_like_its_recorded_run() -> None:
    """vLLM 0.33.0's run (tests/data/engine_diff/vllm-0.33.0.flags.json, page32): TP 2, block 32, a KV budget
    of 42,949,672,960 B; one FullAttentionSpec group of 36 layers × 65,536 B a block (4 KV heads × 128 × 2 × 2 B
    × 32 tokens); 42,949,672,960 // (36 × 65,536) = 18,204 blocks × 32 = 582,528 tokens, as it logged."""
    block = 36 * (4 * 128 * 2 * 2 * 32)
    assert 42_949_672_960 // block == 18_204
    model = model_from_config(json.loads(QWEN3_VL_8B.read_text()), source=str(QWEN3_VL_8B))
    flags = ["--tensor-parallel-size", "2", "--block-size", "32", "--kv-cache-memory-bytes", "42949672960",
             "--max-model-len", "32768", "--engine-version", "0.33.0"]  # fmt: skip
    ledger = predict(model, parse_flags("vllm", flags), gpu_total_bytes=H100, gpu_name="H100")
    assert ledger.engine.num_blocks == 18_204
    assert ledger.engine.token_capacity == 18_204 * 32 == 582_528
