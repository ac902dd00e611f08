"""A pool an engine's budget does not count is refused by name before the budget runs, never dropped from capacity.

A per-request pool (a state, a ring) has 0 B a token, so a budget that sums bytes per token would solve the same
capacity with or without it. Each engine states the pools its budget counts (`EngineBase.budget_pools`); the one
check (kv.py `refuse_uncounted_pools`, run by `EngineBase.solve`) refuses the others. The ring is vLLM 0.33.0's
CircularBufferSpec (v1/kv_cache_interface.py 968-1005): one page per ring layer per request, from the same block
pool as the attention's, which no engine's budget here sizes yet.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.registry import ENGINE_IDS, display_name, engine_rules
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import KvBook, KvPool
from kvtop.domain.kv_ring import RingBuffer, ring_pool
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

H100 = 81559 << 20
LLAMA8B = model_from_config(
    json.loads((CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_text()), source="llama-3.1-8b"
)
# Qwen4-Exp's QSA key ring (models/qwen4_exp/common/qsa_cache.py 842-860): one bf16 head of 128, 4 rows, so a page
# of 1 × 4 × 128 × 2 = 1,024 B; 12 ring layers: 12 × 1,024 = 12,288 B a request, 0 B a token
RING = ring_pool(RingBuffer(rows=4, key_width=128), layers=12)


def _inputs(engine: str, extra: KvPool | None) -> tuple[EngineInputs, int]:
    """Llama-3.1-8B's own inputs on one H100 (the book kvtop builds), with `extra` added to its pools, and the
    capacity the plan solved without it."""
    settings = parse_flags(engine, [], strict=True)
    ledger = predict(LLAMA8B, settings, gpu_total_bytes=H100, gpu_name="H100")
    rank = ledger.ranks[0]
    kv: KvBook = rank.kv if extra is None else rank.kv.model_copy(update={"pools": (*rank.kv.pools, extra)})
    inputs = EngineInputs(
        model=LLAMA8B, layout=ledger.layout, settings=ledger.settings, gpu_total_bytes=H100, gpu_name="H100",
        weights_bytes=rank.weights.total_bytes, kv=kv, context_length=ledger.context_length, version=ledger.version,
    )  # fmt: skip
    return inputs, ledger.engine.token_capacity


@pytest.mark.parametrize("engine", ENGINE_IDS)
def test_every_engines_budget_refuses_a_ring_pool_by_name(engine: str) -> None:
    plain, planned = _inputs(engine, None)
    assert engine_rules(engine).solve(plain).token_capacity == planned > 0  # the book alone solves as planned
    with_ring, _ = _inputs(engine, RING)
    with pytest.raises(UnsupportedModelError) as refused:
        engine_rules(engine).solve(with_ring)
    message = str(refused.value)
    assert "the ring pool" in message and "12,288 B a request" in message
    assert f"is not modelled by {display_name(engine)}'s budget" in message


@pytest.mark.parametrize("engine", ENGINE_IDS)
def test_a_cross_pool_counts_only_where_the_budget_sizes_its_group(engine: str) -> None:
    # vLLM 0.33.0 sizes a CrossAttentionSpec group beside the decoder's (vllm/encdec.py); the others hold an
    # encoder-decoder's KV in their one pool or refuse it at the book, so a cross pool reaching them is refused
    cross = KvPool(name="cross", layers=32, bytes_per_token=32 * 2_048, bytes_per_layer_token=2_048.0)
    assert ("cross" in engine_rules(engine).budget_pools) == (engine == "vllm")
    if engine == "vllm":
        return
    inputs, _ = _inputs(engine, cross)
    with pytest.raises(UnsupportedModelError) as refused:
        engine_rules(engine).solve(inputs)
    # counted per encoder token (KvPool.per_request is False for it): 32 layers × 2,048 B = 65,536 B a token
    message = str(refused.value)
    assert "the cross pool (cross-attention KV per encoder token" in message and "65,536 B a token" in message
    assert "per request" not in message and f"is not modelled by {display_name(engine)}'s budget" in message
