"""The registry judge reads a CircularBufferSpec layer as kvtop's ring pool, per request, on both sides."""

from __future__ import annotations

from benchmarks.engine_diff.architectures import _engine_kv, _kvtop_kv
from kvtop.domain.kv_ring import RingBuffer, ring_pool


def test_a_ring_is_compared_per_request_not_per_token() -> None:
    # vLLM 0.33.0 CircularBufferSpec(block_size=16, num_kv_heads=2, head_size=128, head_size_v=0, bfloat16): GLM-5-Next's
    # tail ring at Glm5NextTextConfig's index_kpool 16 (models/glm5next/common/attention.py 156-179); page_size_bytes
    # = 2 × 16 × 128 × 2 = 8,192 B and max_memory_usage_bytes the same page (kv_cache_interface.py 968-989), as the
    # harness records a layer spec (vllm_runner: kind, block_size, page_size_bytes, layers)
    engine = [{"kind": "CircularBufferSpec", "block_size": 16, "page_size_bytes": 8_192, "layers": 3,
               "first": "model.layers.3.self_attn.indexer.tail_cache"}]  # fmt: skip
    assert _engine_kv(engine) == {"ring": (3, 8_192)}
    pool = ring_pool(RingBuffer(rows=16, heads=2, key_width=128), layers=3)
    assert _kvtop_kv([pool.model_dump()], "vllm", {"block_size": 64}) == {"ring": (3, 8_192.0)}
