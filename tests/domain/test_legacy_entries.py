"""Older families issue 26's task E gave an entry (architectures/table_legacy.py), against the engines' own classes.

Each config is the registry sweep's (tests/data/engine_diff/registry/configs: transformers 5.20.2's config class
defaults, SOURCES.md there); each expected figure is the arithmetic of the module shapes the engine's class builds,
done by hand in the test's comment, and equals the engine's meta-device build recorded in
tests/data/engine_diff/registry/<engine>-<version>.json (the sum of its named parameters' bytes; SGLang's cell).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.kv import KvStorage, kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book

REGISTRY = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry"
BF16 = 2


def config(class_name: str) -> dict[str, Any]:
    return dict(json.loads((REGISTRY / "configs" / f"{class_name}.json").read_text()))


def model(class_name: str) -> ModelSpec:
    return model_from_config(config(class_name), source=class_name)


def weight_bytes(m: ModelSpec, tp: int = 1) -> int:
    book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
    return book.total_bytes


def kv_bytes_per_token(m: ModelSpec, tp: int = 1, storage: KvStorage | None = None) -> int:
    book = kv_book(m, ParallelLayout(tp=tp), range(m.num_layers), "bf16", storage or KvStorage())
    return sum(pool.bytes_per_token for pool in book.pools)


def test_persimmon_layernorms_its_query_and_key_heads_with_a_bias() -> None:
    """SGLang 0.5.23 persimmon.py over PersimmonConfig's defaults (hidden 4,096, 64 heads of 64, 36 layers, MLP
    16,384, vocab 262,144): per layer query_key_value 4,096 → 3 × 4,096 with its bias, dense 4,096² with its bias,
    q_layernorm and k_layernorm nn.LayerNorm(64) (weight and bias: 256), dense_h_to_4h / dense_4h_to_h with
    biases, two LayerNorms (2 × 2 × 4,096); embed_tokens and an untied lm_head 262,144 × 4,096, a final LayerNorm.
    SGLang built 16,646,866,944 B (model) + 2,147,483,648 B (lm_head) = 18,794,350,592 B at TP 1, half at TP 2
    (every part splits but the norms: 8,324,335,616 + 1,073,741,824); its cell 589,824 B (36 layers × K and V ×
    64 heads × 64 × 2 B), 294,912 at TP 2."""
    layer = (4_096 * 12_288 + 12_288) + (4_096**2 + 4_096) + 2 * 2 * 64 + (2 * 4_096 * 16_384 + 16_384 + 4_096)
    layer += 2 * 2 * 4_096
    m = model("PersimmonForCausalLM")
    assert weight_bytes(m) == (36 * layer + 2 * 262_144 * 4_096 + 2 * 4_096) * BF16 == 18_794_350_592
    assert weight_bytes(m, tp=2) == 8_324_335_616 + 1_073_741_824
    assert kv_bytes_per_token(m) == 36 * 2 * 64 * 64 * BF16 == 589_824
    assert kv_bytes_per_token(m, tp=2) == 294_912


def test_mllama_cross_attention_layers_hold_norms_and_gates_and_share_the_pool() -> None:
    """SGLang 0.5.23 mllama.py over MllamaConfig's defaults (text: hidden 4,096, 32 heads of 128, 8 KV heads, MLP
    14,336, 40 layers, cross_attention_layers [3, 8, …, 38]): every layer qkv_proj 4,096 → 6,144, o_proj 4,096²,
    gate/up/down 3 × 4,096 × 14,336, two RMSNorms; the 8 cross-attention layers also q_norm and k_norm (2 × 128) and
    two one-element gates; embed_tokens 128,256 + 8 rows (padded to 128,320), lm_head 128,256, the final norm.
    SGLang built language_model 19,550,842,912 B at TP 1 and 9,775,755,296 at TP 2 (norms and gates whole; the
    embedding 64,160 rows and the head 64,128 a rank); its cell 163,840 B (40 layers × 2 × 8 × 128 × 2 B: the
    cross-attention layers' KV in the one pool), 81,920 at TP 2. Its vision model and projector, 1,735,908,390 B at
    TP 1 and 948,365,350 at TP 2 (the registry rows; tests/engines/sglang/test_mllama_vision.py), are booked."""
    h, i = 4_096, 14_336
    layer = h * 6_144 + h * h + 3 * h * i + 2 * h
    m = model("MllamaForConditionalGeneration")
    assert m.cross_attention_layers == (3, 8, 13, 18, 23, 28, 33, 38)
    tower = {1: 1_672_985_638 + 62_922_752, 2: 885_442_598 + 62_922_752}  # vision_model + multi_modal_projector
    assert weight_bytes(m) - tower[1] == (40 * layer + 8 * (2 * 128 + 2) + 128_320 * h + 128_256 * h + h) * BF16
    assert weight_bytes(m) - tower[1] == 19_550_842_912
    assert weight_bytes(m, tp=2) - tower[2] == 9_775_755_296
    sglang = engine_rules("sglang").kv_storage  # cross_attention_in_pool: the image tokens in the one pool
    assert kv_bytes_per_token(m, storage=sglang) == 40 * 2 * 8 * 128 * BF16 == 163_840
    assert kv_bytes_per_token(m, tp=2, storage=sglang) == 81_920
    assert not any("vision tower" in note for note in m.not_modelled)
    with pytest.raises(UnsupportedModelError, match="cross-attention KV"):  # an engine whose cross cache kvtop lacks
        kv_bytes_per_token(m)


def test_mllama_without_its_cross_attention_layers_is_refused() -> None:
    """MllamaTextConfig's default list is not assumed: a text section that does not name its cross-attention
    layers is refused by name rather than planned as a plain Llama."""
    cfg = config("MllamaForConditionalGeneration")
    del cfg["text_config"]["cross_attention_layers"]
    with pytest.raises(InputError, match="cross_attention_layers"):
        model_from_config(cfg, source="test")


def test_zamba2_holds_its_shared_block_once_and_adapters_per_hybrid_layer() -> None:
    """vLLM 0.33.0 zamba2.py over Zamba2Config's defaults (hidden 2,560, 54 layers, 9 of them "hybrid", one shared
    block, 32 heads, Mamba2 8 heads of 640, state 64, 1 group, conv 4, adapter rank 128, tied head). Every layer a
    Mamba2 mixer: in_proj 2,560 → 2 × 5,120 + 2 × 64 + 8 = 10,376, out_proj 5,120 → 2,560, conv1d 5,248 × 4 and its
    bias, D, dt_bias, the gated norm 5,120, A 8 in fp32, an input RMSNorm: 79,407,424 B. Each hybrid layer its
    `linear` 2,560² and the MLP's adapter (A 128 × 2,560, B 20,480 × 128): 19,005,440 B. The shared block once:
    qkv_proj 3 × 5,120 rows over 5,120 (2 × hidden in), o_proj 5,120 → 2,560, gate_up 20,480 × 2,560, down
    2,560 × 10,240, norms 5,120 + 2,560: 340,802,560 B. Embedding 32,000 × 2,560 (tied), the final norm. vLLM built
    4,963,697,536 B at TP 1 and 2,558,708,928 at TP 2; its KV: 9 FullAttentionSpec layers of 32 heads of 160
    (16 a rank at TP 2) beside 54 MambaSpec layers."""
    m = model("Zamba2ForCausalLM")
    mamba = (10_376 * 2_560 + 2_560 * 5_120 + 5_248 * 4 + 5_248 + 2 * 8 + 5_120 + 2_560) * BF16 + 8 * 4
    hybrid = (2_560**2 + 128 * 2_560 + 20_480 * 128) * BF16
    block = (15_360 * 5_120 + 2_560 * 5_120 + 20_480 * 2_560 + 2_560 * 10_240 + 5_120 + 2_560) * BF16
    assert (mamba, hybrid, block) == (79_407_424, 19_005_440, 340_802_560)
    assert weight_bytes(m) == 54 * mamba + 9 * hybrid + block + (32_000 * 2_560 + 2_560) * BF16 == 4_963_697_536
    assert weight_bytes(m, tp=2) == 2_558_708_928
    assert (m.head_dim, m.num_kv_heads) == (160, 32)
    assert sum(m.has_state(layer) for layer in range(54)) == 54
    assert kv_bytes_per_token(m) == 9 * 2 * 32 * 160 * BF16 == 184_320
    assert kv_bytes_per_token(m, tp=2) == 92_160


def test_zamba2_with_biased_linear_layers_is_refused() -> None:
    """add_bias_linear puts biases on the Mamba projections and the shared MLP (vLLM zamba2.py use_bias /
    bias=config.add_bias_linear), which no entry reads: refused by name."""
    with pytest.raises(UnsupportedModelError, match="add_bias_linear"):
        model_from_config({**config("Zamba2ForCausalLM"), "add_bias_linear": True}, source="test")


def test_zamba2_attention_width_is_twice_hidden_whatever_the_file_states() -> None:
    """transformers 5.20.2 Zamba2Config.__post_init__ (models/zamba2/configuration_zamba2.py) sets
    attention_hidden_size = 2 × hidden and attention_head_dim = 2 × hidden ÷ heads over what config.json states,
    and vLLM 0.33.0 zamba2.py builds from that config object: stated 4,096 and 128, the block still reads
    2 × 2,560 = 5,120 wide in, heads of 5,120 ÷ 32 = 160, and the same 4,963,697,536 B as the default."""
    m = model_from_config({**config("Zamba2ForCausalLM"), "attention_hidden_size": 4_096, "attention_head_dim": 128},
                          source="test")  # fmt: skip
    assert m.shared_block is not None and (m.shared_block.width, m.head_dim) == (2 * 2_560, 160)
    assert weight_bytes(m) == 4_963_697_536


def test_zamba2_two_shared_blocks_with_attention_adapters() -> None:
    """The same default with num_mem_blocks 2 and use_shared_attention_adapter (the layout of Zyphra's larger
    checkpoints): a second shared block (340,802,560 B more) and, per hybrid layer, q, k and v adapters from the
    block's 5,120-wide input (A 128 × 5,120, B 5,120 × 128 each: 3 × 2,621,440 B). vLLM 0.33.0 built this config
    (`registry_sweep.py --params`, a copy of the default with the two fields changed) as 5,375,278,976 B at TP 1
    and 2,764,507,328 at TP 2."""
    m = model_from_config({**config("Zamba2ForCausalLM"), "num_mem_blocks": 2, "use_shared_attention_adapter": True},
                          source="test")  # fmt: skip
    assert weight_bytes(m) == 4_963_697_536 + 340_802_560 + 9 * 3 * 2 * 128 * 5_120 * BF16 == 5_375_278_976
    assert weight_bytes(m, tp=2) == 2_764_507_328


def test_grok1_four_norms_and_an_fp32_router_whatever_model_type_says() -> None:
    """SGLang's own CI config for Grok1ModelForCausalLM (tests/data/configs/families, model_type "mixtral": SGLang
    0.5.23 grok.py builds Grok-1 by the class, so kvtop reads it as grok-1, not Mixtral). Per layer qkv_proj 6,144 →
    6,144 + 2 × 8 × 128 and o_proj back (no biases), 8 gated experts 3 × 32,768 × 6,144, the router 8 × 6,144 in
    fp32, four RMSNorms: 9,840,082,944 B; embed_tokens and its own lm_head 131,072 × 6,144; the final norm. SGLang
    built 632,986,546,176 B at TP 1, 316,501,143,552 at TP 2; its cell 262,144 B (64 × 2 × 8 × 128 × 2 B), 131,072."""
    cfg = json.loads((REGISTRY.parents[1] / "configs" / "families" / "recon--sglang-ci--grok-1.json").read_text())
    m = model_from_config(cfg, source="grok-1")
    layer = (6_144 * (6_144 + 2_048) + 6_144**2 + 8 * 3 * 32_768 * 6_144 + 4 * 6_144) * BF16 + 8 * 6_144 * 4
    assert (m.model_type, layer) == ("grok-1", 9_840_082_944)
    assert weight_bytes(m) == 64 * layer + (2 * 131_072 * 6_144 + 6_144) * BF16 == 632_986_546_176
    assert weight_bytes(m, tp=2) == 316_501_143_552
    assert kv_bytes_per_token(m) == 64 * 2 * 8 * 128 * BF16 == 262_144
    assert kv_bytes_per_token(m, tp=2) == 131_072
    with pytest.raises(UnsupportedModelError, match="replicate_lm_head"):
        model_from_config({**cfg, "replicate_lm_head": True}, source="a replicated head")


def test_grok2_residual_mlp_beside_experts_of_moe_intermediate_size() -> None:
    """Grok-2's layout (a two-layer config of its shape, tests/data/configs/families/recon--sgl-jax--grok-2-2-layers,
    model_type "git" as xai-org/grok-2 names it): SGLang 0.5.23 grok.py reads the experts' width from
    moe_intermediate_size (2,048) and, under residual_moe, builds Grok1MLP of intermediate_size (1,024) beside them.
    Per layer attention 8,192 × (8,192 + 2 × 8 × 128) and o_proj back, 8 experts 3 × 2,048 × 8,192, the MLP
    3 × 1,024 × 8,192, the router 8 × 8,192 in fp32, four norms: 1,157,955,584 B; embedding and head 131,072 × 8,192.
    SGLang built 6,610,894,848 B at TP 1 (model 4,463,411,200 + lm_head 2,147,483,648) and 3,305,783,296 at TP 2;
    its cell 8,192 B (2 × 2 × 8 × 128 × 2 B), 4,096."""
    cfg = json.loads((REGISTRY.parents[1] / "configs" / "families" / "recon--sgl-jax--grok-2-2-layers.json").read_text())
    m = model_from_config(cfg, source="grok-2 layout")
    h = 8_192
    layer = (h * (h + 2_048) + h * h + 8 * 3 * 2_048 * h + 3 * 1_024 * h + 4 * h) * BF16 + 8 * h * 4
    assert layer == 1_157_955_584
    assert weight_bytes(m) == 2 * layer + (2 * 131_072 * h + h) * BF16 == 6_610_894_848
    assert weight_bytes(m, tp=2) == 3_305_783_296
    assert kv_bytes_per_token(m) == 2 * 2 * 8 * 128 * BF16 == 8_192


def test_phi3_small_keeps_plain_gqa_kv_and_biases_everywhere() -> None:
    """microsoft/Phi-3-small-8k-instruct's config.json (tests/data/configs/families) in SGLang 0.5.23 phi3_small.py:
    per layer query_key_value 4,096 → 4,096 + 2 × 8 × 128 and dense 4,096², up_proj 2 × 14,336 (ff_intermediate_size)
    and down_proj, all four with biases, two LayerNorms with biases: 218,163,200 parameters; the embedding 100,352 ×
    4,096 tied to the head; the final LayerNorm. SGLang built 14,784,544,768 B at TP 1 and 7,393,067,008 at TP 2;
    its cell 131,072 B (32 layers × 2 × 8 × 128 × 2 B: every layer plain KV, the block-sparse layers too), 65,536."""
    cfg = json.loads((REGISTRY.parents[1] / "configs" / "families" / "microsoft--Phi-3-small-8k-instruct.json").read_text())
    m = model_from_config(cfg, source="Phi-3-small")
    layer = (4_096 * 6_144 + 6_144) + (4_096**2 + 4_096) + (2 * 14_336 * 4_096 + 2 * 14_336) + (4_096 * 14_336 + 4_096)
    layer += 2 * 2 * 4_096
    assert layer == 218_163_200
    assert weight_bytes(m) == (32 * layer + 100_352 * 4_096 + 2 * 4_096) * BF16 == 14_784_544_768
    assert weight_bytes(m, tp=2) == 7_393_067_008
    assert kv_bytes_per_token(m) == 32 * 2 * 8 * 128 * BF16 == 131_072
    assert kv_bytes_per_token(m, tp=2) == 65_536


def test_phi3_small_width_from_a_multiplier_is_refused() -> None:
    """A Phi-3-small config giving its MLP width as ff_dim_multiplier (Phi3SmallConfig derives intermediate_size from
    it where ff_intermediate_size is None) is refused by name rather than read with no MLP width."""
    cfg = json.loads((REGISTRY.parents[1] / "configs" / "families" / "microsoft--Phi-3-small-8k-instruct.json").read_text())
    cfg = {**{k: v for k, v in cfg.items() if k != "ff_intermediate_size"}, "ff_dim_multiplier": 3.5}
    with pytest.raises(UnsupportedModelError, match="ff_dim_multiplier"):
        model_from_config(cfg, source="test")
