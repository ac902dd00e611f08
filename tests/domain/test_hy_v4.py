"""Hunyuan-V4 (HYV4ForCausalLM): MLA with DSA on the layers layer_types marks sparse (a "shared" indexer layer keeps
no indexer and no key), a gated MLA output, an fp32 sink per head and independent hyper-connections (iHC). Expected
bytes by hand from vLLM 0.33.0 models/hy_v4/nvidia (attention.py, moe.py, hc.py, model.py) on the RECONSTRUCTED
config of HYV4Config's class defaults (tests/data/configs/recon/SOURCES.md); the registry sweep's vLLM meta build of
the same config (tests/data/engine_diff/registry/vllm-0.33.0.json, rows recon--tencent--HY-V4-class) holds the same
totals: lm_head 680,525,824 + model 115,935,827,380 B at TP 1, 340,262,912 + 58,265,849,140 B at TP 2."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang import SglangRules
from kvtop.domain.engines.vllm import VllmRules
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

HYV4 = "recon--tencent--HY-V4-class"
H, V, LAYERS, HEADS, HC = 2816, 120832, 34, 32, 4
INDEXED = 10  # indexer_types "full" at layer 0 and every (i − 1) % 4 == 0: 0, 1, 5, 9, …, 33


def config() -> dict[str, object]:
    data: dict[str, object] = json.loads((CONFIGS / "recon" / f"{HYV4}.json").read_text())
    return data


def hyv4() -> ModelSpec:
    return model_from_config(config(), source=HYV4)


def weights(tp: int) -> int:
    book = weights_book(hyv4(), ParallelLayout(tp=tp), range(LAYERS), first_stage=True, last_stage=True)
    return book.total_bytes


def test_hyv4_weights_by_hand_and_the_meta_build() -> None:
    """attention.py HYV4MLAAttention: fused_qkv_a_proj (1,536 + 512 + 64) × 2,816, q_a/kv_a norms 1,536 + 512,
    q_b_proj 32 × (192 + 64) × 1,536, kv_b_proj 32 × (192 + 256) × 512, o_proj 2,816 × 32 × 256, linear_gate (gating
    elementwise) 32 × 256 × 2,816; learnable_sink_param [32] fp32; Indexer on the 10 full layers: wq_b 16 × 128 ×
    1,536, wk_weights_proj (128 + 16) × 2,816 (bf16), k_norm LayerNorm(128) fp32 weight + bias. hc.py: two
    HYV4HCPreLayer a layer, hc_fn [2 × 4, 4 × 2,816] + hc_base [8] + hc_scale [2], fp32; the model's HYV4HCHeadLayer
    hc_head_fn [4, 4 × 2,816] + base [4] + scale [1], fp32. moe.py: layer 0 dense 3 × 6,912 × 2,816; 33 MoE layers of
    256 experts 3 × 768 × 2,816, one shared 3 × 768 × 2,816, GateLinear [256, 2,816] fp32 and expert_bias [256] fp32.
    Embedding and LM head 120,832 × 2,816 each (vocab a multiple of 64: no padding), the final norm; bf16."""
    attention = (2112 * H + 1536 + 512 + HEADS * 256 * 1536 + HEADS * 448 * 512 + 2 * H * HEADS * 256 + 2 * H) * 2
    attention += (HEADS + 2 * (8 * HC * H + 8 + 2)) * 4  # sinks and the two iHC mixers, fp32
    assert attention == 144_751_824
    indexer = (16 * 128 * 1536 + 144 * H) * 2 + 2 * 128 * 4
    moe = (257 * 3 * 768 * H) * 2 + (256 * H + 256) * 4
    total = LAYERS * attention + INDEXED * indexer + 3 * 6912 * H * 2 + 33 * moe + 2 * V * H * 2 + H * 2
    total += (HC * HC * H + HC + 1) * 4
    assert total == 680_525_824 + 115_935_827_380  # the meta build's lm_head + model at TP 1
    assert weights(1) == total
    assert weights(2) == 340_262_912 + 58_265_849_140  # the meta build at TP 2


def test_hyv4_kv_latent_and_only_the_full_indexers_keys() -> None:
    """34 MLA layers of kv_lora_rank 512 + qk_rope_head_dim 64 bf16 (the meta build's MLAAttentionSpec head_size 576,
    page 73,728 B of 64 tokens), whole on every rank; the 10 full indexers' DeepseekV32IndexerCache, fp8 128 + a
    4-byte scale per 128 (head_size 132, page 8,448 B); the 24 shared layers build no indexer (attention.py
    create_indexer) and keep no key."""
    for storage in (VllmRules.kv_storage, SglangRules.kv_storage):
        for tp in (1, 2):
            book = kv_book(hyv4(), ParallelLayout(tp=tp), range(LAYERS), "bf16", storage)
            assert book.full_bytes_per_token == LAYERS * 576 * 2 + INDEXED * 132 == 40_488


def test_hyv4_without_layer_types_is_refused_by_name() -> None:
    """The engines disagree where layer_types is absent: SGLang 0.5.23 configs/hy_v4.py makes every layer DSA,
    vLLM 0.33.0 attention.py (requested_sparse needs layer_types) none; kvtop plans neither."""
    data = {k: v for k, v in config().items() if k != "layer_types"}
    with pytest.raises(UnsupportedModelError, match="layer_types"):
        model_from_config(data, source=HYV4)
