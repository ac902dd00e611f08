"""Families issue 26's second pass gave an entry: their weights and KV by hand from the modules the engines build
(vLLM 0.33.0 `model_executor/models/<family>.py`), checked against published sizes where there are any."""

from __future__ import annotations

import json
from typing import Any

from kvtop.domain.kv import KvStorage, kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec, model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

FAMILIES = CONFIGS / "families"


def raw(name: str) -> dict[str, Any]:
    return json.loads((FAMILIES / f"{name}.json").read_text())


def params(cfg: dict[str, Any], tp: int = 1) -> tuple[ModelSpec, int]:
    model = model_from_config(cfg, source="test")
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True)
    return model, book.total_params


def kv_per_token(model: ModelSpec) -> int:
    book = kv_book(model, ParallelLayout(), range(model.num_layers), "bf16", KvStorage())
    return sum(pool.bytes_per_token for pool in book.pools)


def test_falcon_7b_is_multi_query_with_one_norm_a_layer() -> None:
    """Falcon-7B (vLLM falcon.py): multi_query and no new decoder, so one KV head whatever num_kv_heads (71) says;
    query_key_value 4,544 → (71 + 2) × 64 = 4,672, dense 4,544², dense_h_to_4h 4 × 4,544 and back, no biases
    (`bias` false); one LayerNorm (weight and bias) for the parallel block; ln_f; the LM head tied (the config
    states no tie_word_embeddings: vLLM ties). 6,921,720,704 parameters; the Hub's "7.22B" counts the checkpoint's
    stored copy of the 65,024 × 4,544 LM head too."""
    layer = 4_544 * 4_672 + 4_544 * 4_544 + 2 * 4_544 * 18_176 + 2 * 4_544
    model, total = params(raw("tiiuae--falcon-7b-instruct"))
    assert total == 32 * layer + 65_024 * 4_544 + 2 * 4_544 == 6_921_720_704
    assert round((total + 65_024 * 4_544) / 1e9, 2) == 7.22
    assert (model.num_kv_heads, model.head_dim, model.tie_word_embeddings) == (1, 64, True)
    assert kv_per_token(model) == 32 * 1 * 64 * 2 * 2  # one K and one V head of 64, bf16: 8,192 B


def test_falcon_rw_1b_is_sequential_with_biases() -> None:
    """Falcon-RW-1B: parallel_attn false (input and post-attention LayerNorms), `bias` true on all four linear
    layers, every head its own KV (neither flag), ALiBi (no position table). 1,311,625,216: "1.3B"."""
    layer = (2_048 * 6_144 + 6_144) + (2_048**2 + 2_048) + (2 * 2_048 * 8_192 + 8_192 + 2_048) + 2 * 2 * 2_048
    model, total = params(raw("tiiuae--falcon-rw-1b"))
    assert total == 24 * layer + 50_304 * 2_048 + 2 * 2_048 == 1_311_625_216
    assert model.num_kv_heads == 32 and model.max_position_embeddings == 2_048  # FalconConfig's default
    assert "max_position_embeddings=2048" in model.defaults_used


def test_falcon_new_decoder_reads_num_kv_heads_before_multi_query() -> None:
    """Falcon-40B's layout (new_decoder_architecture): num_kv_heads (8) wins over multi_query (FalconConfig's
    default true), and the parallel block holds two LayerNorms (ln_attn, ln_mlp) where num_ln_in_parallel_attn is
    absent; stated 1, one (7B's file with that switch, 64 heads of 64 so that 8 KV heads divide them)."""
    cfg = {**raw("tiiuae--falcon-7b-instruct"), "hidden_size": 4_096, "num_attention_heads": 64, "num_kv_heads": 8,
           "new_decoder_architecture": True}  # fmt: skip
    two, total_two = params(cfg)
    one, total_one = params({**cfg, "num_ln_in_parallel_attn": 1})
    assert (two.num_kv_heads, two.body.norms_per_layer, one.body.norms_per_layer) == (8, 2, 1)
    assert total_two - total_one == 32 * 2 * 4_096  # one LayerNorm (weight and bias) a layer
    assert kv_per_token(two) == 32 * 8 * 64 * 2 * 2
