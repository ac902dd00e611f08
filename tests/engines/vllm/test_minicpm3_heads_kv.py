"""vLLM runs MiniCPM3's latent attention as plain attention (models/minicpm3.py MiniCPM3Attention: Attention with
num_kv_heads = the rank's heads, head size qk_nope + qk_rope, V padded to it), so its KV is every head's K and V.

The engine figures are its meta build of the registry sweep's default config (transformers' MiniCPM3Config:
40 heads, qk_nope 64 + qk_rope 32, 62 layers): vLLM 0.33.0's KV cache spec FullAttentionSpec, head_size 96,
num_kv_heads 40 at TP 1 and 20 at TP 2, page_size_bytes 245,760 / 122,880 for a 16-token block
(tests/data/engine_diff/registry/vllm-0.33.0.json). SGLang keeps the latent: kvtop's MLA figure stands there.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang import SglangRules
from kvtop.domain.engines.vllm import VllmRules
from kvtop.domain.kv import kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "MiniCPM3ForCausalLM.json"


@pytest.mark.parametrize(("tp", "page_bytes"), [(1, 245_760), (2, 122_880)])
def test_vllm_minicpm3_caches_every_heads_k_and_v(tp: int, page_bytes: int) -> None:
    model = model_from_config(json.loads(CONFIG.read_text()), source="MiniCPM3ForCausalLM")
    book = kv_book(model, ParallelLayout(tp=tp), range(62), "bf16", VllmRules.kv_storage)
    assert book.pool("full").bytes_per_token == 62 * page_bytes // 16


def test_sglang_minicpm3_keeps_the_latent() -> None:
    """(kv_lora_rank 256 + qk_rope 32) × 2 B a layer, whatever the TP (SGLang's MLA pool)."""
    model = model_from_config(json.loads(CONFIG.read_text()), source="MiniCPM3ForCausalLM")
    book = kv_book(model, ParallelLayout(tp=2), range(62), "bf16", SglangRules.kv_storage)
    assert book.pool("full").bytes_per_token == 62 * (256 + 32) * 2
