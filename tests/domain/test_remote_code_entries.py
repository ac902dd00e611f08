"""Families whose config class is remote code (no transformers class to build): their weights by hand from the
modules the engines build (vLLM chatglm.py, SGLang qwen.py / baichuan.py), checked against published sizes."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import KvStorage, kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS


def params(name: str) -> tuple[ModelSpec, int]:
    model = model_from_config(json.loads((CONFIGS / "heldout" / f"{name}.json").read_text()), source=name)
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    return model, book.total_params


def test_chatglm3_reads_its_own_field_names() -> None:
    """ChatGLM3-6B: query_key_value 4,096 → 32 × 128 + 2 × 2 × 128 (multi_query_group_num 2) with a bias,
    dense 4,096², dense_h_to_4h 4,096 → 2 × 13,696, dense_4h_to_h back, two RMSNorms; 28 layers; embedding
    and output_layer 65,024 × 4,096 (a multiple of 64: no padding); final norm. 6.24B, as published."""
    layer = 4_096 * 4_608 + 4_608 + 4_096 * 4_096 + 3 * 4_096 * 13_696 + 2 * 4_096
    model, total = params("mlc--chatglm")
    assert total == 28 * layer + 2 * 65_024 * 4_096 + 4_096 == 6_243_584_000
    assert (model.num_kv_heads, model.head_dim, model.max_position_embeddings) == (
        2,
        128,
        8_192,
    )  # seq_length


def test_qwen1_halves_its_stated_mlp_width() -> None:
    """Qwen-1.8B: c_attn 2,048 → 3 × 2,048 with a bias, c_proj; w1, w2 and c_proj of intermediate_size ÷ 2 =
    5,504 (QWenMLP); ln_1, ln_2; 24 layers; wte and lm_head 151,936 × 2,048. 1.84B, as published."""
    layer = 2_048 * 6_144 + 6_144 + 2_048 * 2_048 + 3 * 2_048 * 5_504 + 2 * 2_048
    model, total = params("mlc--qwen")
    assert total == 24 * layer + 2 * 151_936 * 2_048 + 2_048 == 1_836_828_672
    assert model.intermediate_size == 5_504 and model.num_kv_heads == 16  # MHA


def test_baichuan2_packs_qkv_without_bias() -> None:
    """Baichuan2-7B: W_pack 4,096 → 3 × 4,096 (no bias), o_proj, a gated MLP of 11,008, two RMSNorms; 32 layers;
    embed_tokens and lm_head 125,696 × 4,096. 7,505,973,248 parameters, Baichuan2-7B's published count."""
    layer = 4_096 * 12_288 + 4_096 * 4_096 + 3 * 4_096 * 11_008 + 2 * 4_096
    _, total = params("mlc--baichuan")
    assert total == 32 * layer + 2 * 125_696 * 4_096 + 4_096 == 7_505_973_248


def test_exaone3_reads_num_layers_and_builds_as_sglang() -> None:
    """EXAONE-3.0-7.8B (ExaoneConfig: `num_layers`, no `num_hidden_layers`): SGLang 0.5.23's meta build
    (`registry_sweep.py --engine sglang --params LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct --tps 1`) holds wte and
    lm_head 102,400 × 4,096, per layer qkv_proj 6,144 × 4,096, out_proj 4,096², gate_up_proj 28,672 × 4,096,
    c_proj 4,096 × 14,336, ln_1, ln_2 (× 32), ln_f: 15,636,897,792 B in bf16; its cell 131,072 B per token at
    TP 1 (32 layers × 8 KV heads × 128 × K and V × 2 B) and 65,536 at TP 2 (the registry rows)."""
    model, total = params("LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct")
    assert 2 * total == 15_636_897_792
    for tp, cell in ((1, 131_072), (2, 65_536)):
        book = kv_book(model, ParallelLayout(tp=tp), range(model.num_layers), "bf16", KvStorage())
        assert sum(pool.bytes_per_token for pool in book.pools) == cell


def test_nanbeige_loops_keep_kv_per_pass_and_weights_once() -> None:
    """Nanbeige-4.2-3B runs its 22 layers twice (num_loops 2), each pass with KV of its own: SGLang 0.5.23's
    cell is 180,224 B per token at TP 1 and 90,112 at TP 2 (44 × 8 KV heads × 128 × K and V × 2 B, over TP; the
    registry rows, tests/data/engine_diff/registry/sglang-0.5.23.json: nanbeige.py builds a RadixAttention per
    loop, layer_id + loop × 22). Its weights are the 22 layers once: the rows' meta-built param_bytes, lm_head
    1,020,788,736 + model 7,318,812,672 B at TP 1, 510,394,368 + 3,659,544,576 B at TP 2."""
    model, _ = params("Nanbeige--Nanbeige4.2-3B")
    assert (model.num_layers, model.kv_passes) == (22, 2)
    for tp, cell, engine_weights in ((1, 180_224, 1_020_788_736 + 7_318_812_672),
                                     (2, 90_112, 510_394_368 + 3_659_544_576)):  # fmt: skip
        book = kv_book(model, ParallelLayout(tp=tp), range(model.num_layers), "bf16", KvStorage())
        assert sum(pool.bytes_per_token for pool in book.pools) == cell
        weights = weights_book(model, ParallelLayout(tp=tp), range(22), first_stage=True, last_stage=True)
        assert weights.total_bytes == engine_weights


def test_nanbeige_loops_are_refused_on_vllm_by_name() -> None:
    """vLLM 0.33.0 has no class of its own (registry.py: the Transformers backend, which creates one Attention per
    num_hidden_layers, base.py _create_attention_instances): kvtop does not plan the loops there, naming the field."""
    from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
    from kvtop.domain.engines.vllm.config_checks import check_config

    model, _ = params("Nanbeige--Nanbeige4.2-3B")
    with pytest.raises(UnsupportedModelError) as err:
        check_config(model, ResolvedVersion(text="0.33.0", source=VersionSource.FLAG))
    assert err.value.field == "num_loops"


def test_nemotron_super_no_op_sublayers_hold_no_norm() -> None:
    """Llama-3.3-Nemotron-Super-49B: 31 of its 80 blocks have a no-op attention (block_configs), and
    DeciLMDecoderLayer builds input_layernorm only with its attention (post_attention_layernorm only with its FFN),
    so the body holds 49 + 80 RMSNorms of 8,192, not 2 × 80. The engines' meta builds at TP 1 (registry sweep rows,
    tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json: model 97,632,944,128 + lm_head
    2,101,346,304 B) hold 99,734,290,432 B; before the rule kvtop's book held 31 × 8,192 × 2 B = 507,904 B more."""
    blocks = json.loads((CONFIGS / "heldout" / "nvidia--Llama-3_3-Nemotron-Super-49B-v1.json").read_text())
    no_op_attention = sum(block["attention"]["no_op"] for block in blocks["block_configs"])
    assert no_op_attention == 31
    model = model_from_config(blocks, source="nemotron-super-49b")
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    assert book.total_bytes == 99_734_290_432


def test_sglang_cell_counts_nemotron_super_no_op_blocks() -> None:
    """SGLang's default pool configurator sizes the cell over the stage's layers (`num_effective_layers`,
    pool_configurator.py, 0.5.23), no-op attention blocks included, each with the one KV-head count of the
    attention blocks (8 = 64 ÷ n_heads_in_group 8) × head_dim 128 × K and V × bf16. The engine's cell (registry
    sweep, sglang-0.5.23.json): 327,680 B at TP 1 and 163,840 B at TP 2; vLLM's KV spec holds the 49 attention
    layers only (200,704 B per token at TP 1)."""
    from kvtop.domain.engines.sglang import SglangRules
    from kvtop.domain.engines.vllm import VllmRules
    from kvtop.domain.kv import kv_book

    blocks = json.loads((CONFIGS / "heldout" / "nvidia--Llama-3_3-Nemotron-Super-49B-v1.json").read_text())
    model = model_from_config(blocks, source="nemotron-super-49b")
    layers = range(model.num_layers)
    for tp, engine_cell in ((1, 327_680), (2, 163_840)):
        book = kv_book(model, ParallelLayout(tp=tp), layers, "bf16", SglangRules.kv_storage)
        assert book.full_bytes_per_token == engine_cell == 80 * (8 // tp) * 128 * 2 * 2
    vllm_book = kv_book(model, ParallelLayout(), layers, "bf16", VllmRules.kv_storage)
    assert vllm_book.full_bytes_per_token == 49 * 8 * 128 * 2 * 2 == 200_704


def test_minicpm_moe_experts_as_vllm_builds_them_and_sglang_cannot_load() -> None:
    """MiniCPM-MoE-8x2B: vLLM 0.33.0's MiniCPMMoE (minicpm.py) builds per layer a gate 8 × 2,304 (bf16), ws
    8 × 2 × 5,760/TP × 2,304 and w2s 8 × 2,304 × 5,760/TP; beside them q, k, v, o 4 × 2,304², two norms; 40 layers;
    the tied embedding 122,753 rows padded to 122,816 (÷ TP). The engine's meta build (registry sweep,
    vllm-0.33.0.json): 27,746,873,856 B at TP 1 and 13,874,360,832 B at TP 2. SGLang 0.5.23's MiniCPMDecoderLayer
    builds a dense MLP whatever num_experts says, and its load_weights maps the experts onto ws/w2s it never built:
    a launch of this checkpoint fails, so kvtop refuses it there (its meta build sized the dense model)."""
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.launch_check import launch_refusals
    from kvtop.domain.ledger import predict
    from kvtop.sources.hub import load_model

    path = CONFIGS / "heldout" / "mlc--minicpm-moe-8x2b.json"
    model = model_from_config(json.loads(path.read_text()), source="minicpm-moe")
    for tp, engine_bytes in ((1, 27_746_873_856), (2, 13_874_360_832)):
        layer = 4 * 2_304 * 2_304 // tp + 8 * 3 * 2_304 * 5_760 // tp + 8 * 2_304 + 2 * 2_304
        assert 2 * (40 * layer + 122_816 // tp * 2_304 + 2_304) == engine_bytes
        book = weights_book(model, ParallelLayout(tp=tp), range(40), first_stage=True, last_stage=True)
        assert book.total_bytes == engine_bytes
    _, dense = params(
        "mlc--minicpm_2b_sft_bf16"
    )  # the same geometry without num_experts: one dense MLP a layer
    assert dense == 40 * (4 * 2_304 * 2_304 + 3 * 2_304 * 5_760 + 2 * 2_304) + 122_816 * 2_304 + 2_304
    ledger = predict(
        load_model(str(path)), parse_flags("sglang", []), gpu_total_bytes=81_559 << 20, gpu_name="H100"
    )
    (refused,) = launch_refusals(ledger)
    assert refused.field == "num_experts" and "builds MiniCPMForCausalLM dense whatever num_experts says" in refused.message
    vllm = predict(
        load_model(str(path)), parse_flags("vllm", []), gpu_total_bytes=81_559 << 20, gpu_name="H100"
    )
    assert launch_refusals(vllm) == ()
