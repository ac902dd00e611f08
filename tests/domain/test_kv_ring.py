"""The circular-buffer pool (kv_ring.py) against vLLM 0.33.0's CircularBufferSpec arithmetic, worked by hand.

vLLM 0.33.0 v1/kv_cache_interface.py: AttentionSpec.page_size_bytes (lines 585-601) = num_heads × num_states ×
(head_size + head_size_v) × dtype bytes, num_states = block_size // tokens_per_state (lines 269-275; 1 for a ring);
CircularBufferSpec (lines 968-1005): max_num_blocks_per_req = 1, max_memory_usage_bytes = page_size_bytes.
The figures below are each model's get_kv_cache_spec done by hand for the fields a published config states.
"""

from __future__ import annotations

import pytest

from kvtop.domain.kv import KvBook, KvPool
from kvtop.domain.kv_ring import RingBuffer, ring_pool


@pytest.mark.parametrize(
    ("ring", "page"),
    [
        # Qwen4-Exp QSAKeyStateCache (models/qwen4_exp/common/qsa_cache.py 842-860, storage width 812-822):
        # indexer_head_dim 128, indexer_compress_ratio 4, no speculative tokens: rows = round_up(4 + 0, 4) = 4,
        # one bf16 head of 128: 1 × 4 × 128 × 2 = 1,024 B
        (RingBuffer(rows=4, key_width=128), 1_024),
        # … with MRoPE positions cached (uses_mrope): width round_up(128, 4) + 3 × 4 = 140, and 3 speculative tokens:
        # rows = round_up(4 + 3, 4) = 8: 1 × 8 × 140 × 2 = 2,240 B
        (RingBuffer(rows=8, key_width=140), 2_240),
        # GLM-5-Next Glm5NextTailCache (models/glm5next/common/attention.py 156-179): index_kpool 4, index_head_dim
        # 128, 3 speculative tokens: span 7, ring = 4 × next_power_of_2(cdiv(7, 4)) = 8 rows, two head slots
        # [K, gate score]: 2 × 8 × 128 × 2 = 4,096 B
        (RingBuffer(rows=8, heads=2, key_width=128), 4_096),
        # … Glm5NextTextConfig's default index_kpool 16, no speculative tokens: ring 16: 2 × 16 × 128 × 2 = 8,192 B
        (RingBuffer(rows=16, heads=2, key_width=128), 8_192),
        # Step-5 Step5CSATailRing (models/step5/nvidia/csa_tail_ring.py 166-189): the main page's block 64 and a
        # 131,072 B main page: head_size = 131,072 // (64 × 2) = 1,024, so 1 × 64 × 1,024 × 2 = 131,072 B, the
        # main page itself (131,072 // 1,024 = 128 rows of [index_k | index_z])
        (RingBuffer(rows=64, key_width=131_072 // (64 * 2)), 131_072),
    ],
)
def test_a_rings_page_is_the_specs(ring: RingBuffer, page: int) -> None:
    assert ring.page_bytes == page


def test_a_request_holds_one_page_per_ring_layer_and_no_bytes_per_token() -> None:
    # 12 QSA layers of 1,024 B rings: 12 × 1,024 = 12,288 B a request, whatever its length; a full-attention pool
    # beside it of 4,096 B a token is unchanged by the ring
    pool = ring_pool(RingBuffer(rows=4, key_width=128), layers=12)
    assert (pool.name, pool.layers, pool.bytes_per_request, pool.bytes_per_token) == ("ring", 12, 12_288, 0)
    full = KvPool(name="full", layers=1, bytes_per_token=4_096, bytes_per_layer_token=4_096.0)
    book = KvBook(kv_format="bf16", kv_heads_per_rank=1, pools=(full, pool))
    ring = book.pool("ring")
    assert ring is not None
    assert (ring.bytes_per_request, book.full_bytes_per_token, book.state_bytes_per_request) == (12_288, 4_096, 0)


def test_a_rings_bytes_and_torch_dtype_follow_its_one_kv_format() -> None:
    # the QSA ring above in FP8 KV: 1 × 4 × 128 × 1 = 512 B a page, allocated as float8_e4m3fn (vLLM's fp8 cache
    # dtype); 12 layers: 6,144 B a request
    pool = ring_pool(RingBuffer(rows=4, key_width=128, kv_format="fp8_e4m3"), layers=12)
    assert (pool.bytes_per_request, pool.torch_dtype) == (6_144, "float8_e4m3fn")
    assert ring_pool(RingBuffer(rows=4, key_width=128), layers=1).torch_dtype == "bfloat16"


def test_a_ring_has_rows() -> None:
    with pytest.raises(ValueError):
        RingBuffer(rows=0, key_width=128)


def test_a_ring_is_read_per_request_as_a_state_is() -> None:
    # the views (render_ledger, probe_plan) ask the pool, not its name: a ring's 12,288 B are per request
    ring = ring_pool(RingBuffer(rows=4, key_width=128), layers=12)
    full = KvPool(name="full", layers=1, bytes_per_token=4_096, bytes_per_layer_token=4_096.0)
    assert (ring.per_request, KvPool(name="state", layers=1).per_request, full.per_request) == (True, True, False)
