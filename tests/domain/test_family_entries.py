"""Families issue 26's second pass gave an entry: their weights and KV by hand from the modules the engines build
(vLLM 0.33.0 `model_executor/models/<family>.py`), checked against published sizes where there are any."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.kv import KvStorage, kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
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
    assert ("max_position_embeddings", 2048) in {(d.field, d.value) for d in model.defaults_used}


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


def test_opt_350m_projects_its_narrow_embedding_and_has_no_final_norm() -> None:
    """OPT-350m (vLLM opt.py): embed_tokens 50,272 (→ 50,304, a multiple of 64) × word_embed_proj_dim 512, tied
    LM head; project_in 512 → 1,024 and project_out back (no bias); positions (2,048 + 2) × 1,024; per layer
    qkv_proj 1,024 → 3,072, out_proj, fc1 → 4,096, fc2 back, all biased, two LayerNorms; do_layer_norm_before
    false: no final LayerNorm. 331,196,416 parameters unpadded (its fp16 checkpoint: 662,392,832 B)."""
    layer = (1_024 * 3_072 + 3_072) + (1_024**2 + 1_024) + (1_024 * 4_096 + 4_096) + (4_096 * 1_024 + 1_024) + 4 * 1_024
    unpadded = 50_272 * 512 + 2_050 * 1_024 + 2 * 512 * 1_024 + 24 * layer
    model, total = params(raw("facebook--opt-350m"))
    assert unpadded == 331_196_416 == 662_392_832 // 2
    assert total == unpadded + (50_304 - 50_272) * 512
    assert (model.embedding_size, model.body.final_norm, model.num_kv_heads) == (512, False, 16)
    assert kv_per_token(model) == 24 * 16 * 64 * 2 * 2


def test_opt_125m_keeps_its_final_norm() -> None:
    """OPT-125m: word_embed_proj_dim = hidden (no projections), a final LayerNorm. 125,239,296 parameters
    unpadded (fp16: 250,478,592 B)."""
    layer = (768 * 2_304 + 2_304) + (768**2 + 768) + (768 * 3_072 + 3_072) + (3_072 * 768 + 768) + 4 * 768
    unpadded = 50_272 * 768 + 2_050 * 768 + 12 * layer + 2 * 768
    model, total = params(raw("facebook--opt-125m"))
    assert unpadded == 125_239_296 == 250_478_592 // 2
    assert total == unpadded + 32 * 768
    assert model.embedding_size is None and model.body.final_norm


def test_bloom_560m_has_an_embedding_norm_and_a_4x_mlp() -> None:
    """BLOOM-560m (vLLM bloom.py): word_embeddings 250,880 × 1,024 (tied) and word_embeddings_layernorm; per layer
    query_key_value 1,024 → 3,072, dense, dense_h_to_4h 4,096 and back, all biased, two LayerNorms; ln_f; ALiBi (no
    position table; n_head and n_layer read as the heads and layers). 559,214,592 parameters, as published."""
    layer = (1_024 * 3_072 + 3_072) + (1_024**2 + 1_024) + (1_024 * 4_096 + 4_096) + (4_096 * 1_024 + 1_024) + 4 * 1_024
    model, total = params(raw("bigscience--bloom-560m"))
    assert total == 250_880 * 1_024 + 2 * 1_024 + 24 * layer + 2 * 1_024 == 559_214_592
    assert (model.num_layers, model.num_kv_heads, model.intermediate_size) == (24, 16, 4_096)
    # BLOOM states no length and BloomConfig has no position field: the engines' 2,048, kvtop's nominal figure
    assert ("max_position_embeddings", 2048) in {(d.field, d.value) for d in model.nominal_defaults}


def test_dbrx_reads_its_nested_sections() -> None:
    """DBRX (vLLM dbrx.py): d_model 6,144, n_heads 48 of 128, n_layers 40, attn_config.kv_n_heads 8; Wqkv
    6,144 → (48 + 16) × 128 and out_proj, no biases; on every layer 16 experts (ffn_config) of w1, v1, w2 at
    10,752 and a 16 × 6,144 router; two LayerNorms with the bias vLLM's nn.LayerNorm allocates; wte and an untied
    LM head of 100,352 × 6,144; norm_f. 131,596,523,520 parameters in the checkpoint (its norms without bias)
    plus 81 × 6,144 bias vectors vLLM holds."""
    layer = 6_144 * 8_192 + 6_144**2 + 16 * 6_144 + 16 * 3 * 10_752 * 6_144 + 2 * 6_144
    checkpoint = 40 * layer + 2 * 100_352 * 6_144 + 6_144
    model, total = params(raw("databricks--dbrx-instruct"))
    assert checkpoint == 131_596_523_520
    assert total == checkpoint + 81 * 6_144
    assert model.moe is not None
    assert (model.moe.num_routed_experts, model.moe.experts_per_token, model.moe.expert_intermediate_size) == (16, 4, 10_752)
    assert (model.num_kv_heads, model.head_dim, model.max_position_embeddings) == (8, 128, 32_768)
    assert kv_per_token(model) == 40 * 8 * 128 * 2 * 2


def test_dbrx_names_a_bad_nested_field() -> None:
    """A nested field out of bounds is refused naming its whole path."""
    cfg = raw("databricks--dbrx-instruct")
    with pytest.raises(InputError, match=r"ffn_config\.moe_top_k"):
        model_from_config({**cfg, "ffn_config": {**cfg["ffn_config"], "moe_top_k": "four"}}, source="test")
