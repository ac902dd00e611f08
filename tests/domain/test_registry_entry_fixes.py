"""Architecture entries fixed by the registry sweep (docs/fidelity_registry.md), against the engines' own classes.

Each expected figure is the arithmetic of the parameter shapes and dtypes vLLM 0.33.0 builds on the meta device
for the config at TP 1 (`python benchmarks/engine_diff/registry_sweep.py --engine vllm --params <config>`, which
lists the class's `named_parameters()`); the shapes are quoted in each test. The configs are the registry sweep's
(tests/data/engine_diff/registry/configs: transformers' config class defaults, SOURCES.md there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import WeightsBook, weights_book

REGISTRY_CONFIGS = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry" / "configs"
BF16, FP32 = 2, 4


def book(class_name: str, tp: int = 1) -> WeightsBook:
    config = json.loads((REGISTRY_CONFIGS / f"{class_name}.json").read_text())
    m = model_from_config(config, source=class_name)
    return weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)


def test_exaone_moe_router_is_in_the_model_dtype() -> None:
    """vLLM's ExaoneMoeForCausalLM (models/exaone_moe.py: GateLinear, no fp32 params_dtype), TP 1, 31 MoE layers
    (first_k_dense_replace 1 of 32): mlp.gate.weight [64, 4096] bfloat16 and mlp.e_score_correction_bias [64]
    float32 each layer; the whole model 57,101,287,168 B (the sum of its named_parameters)."""
    b = book("ExaoneMoeForCausalLM")
    assert next(r.bytes for r in b.rows if r.component == "router") == 31 * (64 * 4096 * BF16 + 64 * FP32)
    assert b.total_bytes == 57_101_287_168


def test_phimoe_lm_head_has_its_bias_whatever_the_config_says() -> None:
    """PhiMoEForCausalLM's ParallelLMHead(bias=True) in vLLM 0.33.0 and SGLang 0.5.23 (models/phimoe.py), though
    the class default says lm_head_bias false: lm_head.weight [32064, 4096] and lm_head.bias [32064], bfloat16, at
    TP 1; at TP 2 each rank holds half the rows of both (32,064 is a multiple of 64: no padding)."""
    lm_head = 32064 * 4096 * BF16 + 32064 * BF16
    for tp in (1, 2):
        assert (
            next(r.bytes for r in book("PhiMoEForCausalLM", tp).rows if r.component == "lm_head")
            == lm_head // tp
        )


def test_qwen3_5_attention_is_gated_where_the_config_does_not_say() -> None:
    """vLLM 0.33.0 (models/qwen3_next.py, built by qwen3_5.py) and SGLang 0.5.23 (models/qwen3_5.py) read
    getattr(config, "attn_output_gate", True); transformers' Qwen3_5MoeTextConfig has no such field. vLLM's
    Qwen3_5MoeForCausalLM at TP 1 builds self_attn.qkv_proj.weight [9216, 2048] (16 heads × 256 × 2 for q and its
    gate, 2 × 2 × 256 for k and v) and o_proj [2048, 4096] on each of its 10 full-attention layers, bfloat16; the
    whole model 69,321,223,296 B."""
    b = book("Qwen3_5MoeForCausalLM")
    assert (
        next(r.bytes for r in b.rows if r.component == "attention") == 10 * (9216 * 2048 + 2048 * 4096) * BF16
    )
    assert b.total_bytes == 69_321_223_296


def test_cohere2_moe_holds_one_norm_a_layer() -> None:
    """Cohere2MoeForCausalLM (Command-A MoE) as SGLang 0.5.23 builds it at TP 1 (`registry_sweep.py --engine sglang
    --params default--Cohere2MoeForCausalLM`; vLLM 0.33.0's class weighs the same): embed_tokens [256000, 8192]
    (tied head), qkv_proj [24576, 8192], o_proj [8192, 8192], mlp.gate [8, 8192], experts.w13_weight
    [8, 45056, 8192] and w2_weight [8, 8192, 22528], input_layernorm [8192] on each of 40 layers (no
    post-attention norm: the parallel block), model.norm [8192]; bfloat16, 380,009,857,024 B in all."""
    b = book("Cohere2MoeForCausalLM")
    assert next(r.bytes for r in b.rows if r.component == "norms") == (40 + 1) * 8192 * BF16
    layer = 24576 * 8192 + 8192 * 8192 + 8 * 8192 + 8 * 45056 * 8192 + 8 * 8192 * 22528 + 8192
    assert b.total_bytes == (256000 * 8192 + 40 * layer + 8192) * BF16 == 380_009_857_024


def test_cohere2_moe_dense_prefix_layers_are_refused() -> None:
    """A `mlp_layer_types` "dense" entry: vLLM 0.33.0 builds those layers dense (cohere2_moe.py reads the list),
    SGLang 0.5.23 reads `first_k_dense_replace`, which transformers' Cohere2MoeConfig pops into the list, so every
    layer is MoE there: kvtop refuses naming the field rather than plan one engine's layers for both."""
    config = json.loads((REGISTRY_CONFIGS / "Cohere2MoeForCausalLM.json").read_text())
    config["mlp_layer_types"] = ["dense"] + config["mlp_layer_types"][1:]
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config(config, source="Cohere2MoeForCausalLM")
    assert refused.value.field == "mlp_layer_types"


def test_gemma4_per_layer_embeddings_and_per_layer_head_sizes() -> None:
    """transformers' default Gemma4TextConfig sets hidden_size_per_layer_input 256 and a per_layer_config
    head_dim of 512 on its 5 full layers. vLLM 0.33.0 at TP 1 (`registry_sweep.py --params
    default--Gemma4ForCausalLM`): embed_tokens_per_layer [262144, 7680], per_layer_model_projection [7680, 2304],
    per_layer_projection_norm [256]; on each of 30 layers per_layer_input_gate [256, 2304], per_layer_projection
    [2304, 256], post_per_layer_input_norm [2304]; full layers qkv_proj [8192, 2304], o_proj [2304, 4096] and q/k
    norms [512] (sliding: [4096, 2304], [2304, 2048], [256]); bfloat16, 10,154,355,712 B in all. At TP 2 the table
    splits by rows (VocabParallelEmbedding), the model projection by its outputs (ColumnParallelLinear), the
    per-layer gate and projection stay whole (ReplicatedLinear): 5,112,933,376 B a rank."""
    per_layer = (262144 * 7680 + 7680 * 2304 + 256 + 30 * (2 * 256 * 2304 + 2304)) * BF16
    full = (8192 * 2304 + 2304 * 4096) * BF16  # the q/k norms are the book's "norms"
    sliding = (4096 * 2304 + 2304 * 2048) * BF16
    b = book("Gemma4ForCausalLM")
    assert next(r.bytes for r in b.rows if r.component == "attention") == 5 * full + 25 * sliding
    assert b.total_bytes == 10_154_355_712 and per_layer == 4_132_838_912
    assert book("Gemma4ForCausalLM", tp=2).total_bytes == 5_112_933_376


def test_gemma4_per_layer_override_of_another_field_is_refused() -> None:
    """per_layer_config overrides only head_dim in the configs read; any other field is refused by name."""
    config = json.loads((REGISTRY_CONFIGS / "Gemma4ForCausalLM.json").read_text())
    config["per_layer_config"]["05"]["num_key_value_heads"] = 1
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config(config, source="Gemma4ForCausalLM")
    assert refused.value.field == "per_layer_config.05"


def test_axk1_experts_follow_mlp_layer_types_with_a_third_norm() -> None:
    """vLLM 0.33.0's AXK1ForCausalLM (models/AXK1.py) on the class defaults, TP 1: mlp_layer_types makes layer 0
    dense (mlp.gate_up_proj [36864, 7168], down_proj [7168, 18432]) and layers 1-60 sparse (experts w13 [192, 4096,
    7168], w2 [192, 7168, 2048], shared gate_up [4096, 7168] and down [7168, 2048], gate [192, 7168] bfloat16 and
    e_score_correction_bias [192] float32); every layer holds input, post-attention and post_mlp_layernorm [7168]
    beside q_a_layernorm [1536] and kv_a_layernorm [512], and model.norm [7168];
    the whole model 1,037,966,164,992 B at TP 1 and 519,990,592,512 B a rank at TP 2 (its named_parameters' sums)."""
    b = book("AXK1ForCausalLM")
    experts = next(r.bytes for r in b.rows if r.component == "routed_experts")
    assert experts == 60 * 192 * (4096 * 7168 + 7168 * 2048) * BF16
    assert next(r.bytes for r in b.rows if r.component == "router") == 60 * (192 * 7168 * BF16 + 192 * FP32)
    assert (
        next(r.bytes for r in b.rows if r.component == "norms")
        == ((61 * 3 + 1) * 7168 + 61 * (1536 + 512)) * BF16
    )
    assert b.total_bytes == 1_037_966_164_992
    assert book("AXK1ForCausalLM", tp=2).total_bytes == 519_990_592_512


def test_laguna_entry_counts_its_gate_projection() -> None:
    """LagunaForCausalLM's entry (table_moe.py; once refused by the generic reading at `gating`): vLLM 0.33.0
    (models/laguna.py LagunaAttention) builds self_attn.g_proj.weight [48, 2048] on each of its 40 layers where
    config.gating is true (7,864,320 B at TP 1); the meta build of LagunaConfig's defaults holds model
    65,968,929,792 B + lm_head 411,041,792 B at TP 1, 33,005,108,224 + 205,520,896 B at TP 2
    (tests/data/engine_diff/registry/vllm-0.33.0.json, default--LagunaForCausalLM)."""
    assert book("LagunaForCausalLM").total_bytes == 65_968_929_792 + 411_041_792
    assert book("LagunaForCausalLM", tp=2).total_bytes == 33_005_108_224 + 205_520_896
    assert next(r.bytes for r in book("LagunaForCausalLM").rows if r.component == "attention") == 40 * (
        (48 + 2 * 8) * 128 * 2048 + 2048 * 48 * 128 + 48 * 2048
    ) * 2


def test_aria_generic_reading_counts_its_experts() -> None:
    """AriaForConditionalGeneration (no entry; its text_config states moe_num_experts 8, moe_num_shared_experts 2,
    moe_topk 2, intermediate_size 4096): vLLM 0.33.0's AriaTextMoELayer (models/aria.py) builds on each of the 32
    layers router_weight [8, 4096], experts w13 [8, 8192, 4096] and w2 [8, 4096, 4096], shared_experts gate_up
    [16384, 4096] and down [4096, 8192], bfloat16; its language_model + lm_head at TP 1: 37,034,139,648 B, and its
    tower (now counted, towers_catalog.py) vision_tower + multi_modal_projector 304,786,944 + 64,840,448 =
    369,627,392 B: 37,403,767,040 B in all (the meta build's named_parameters,
    tests/data/engine_diff/registry/vllm-0.33.0.json)."""
    b = book("AriaForConditionalGeneration")
    assert next(r.bytes for r in b.rows if r.component == "routed_experts") == 32 * 8 * 3 * 4096 * 4096 * BF16
    assert next(r.bytes for r in b.rows if r.component == "shared_experts") == 32 * 3 * 8192 * 4096 * BF16
    assert next(r.bytes for r in b.rows if r.component == "vision") == 304_786_944 + 64_840_448
    assert b.total_bytes == 37_034_139_648 + 369_627_392 == 37_403_767_040


def test_cosmos3_edge_generic_reading_has_no_gate_under_relu2() -> None:
    """Cosmos3EdgeForConditionalGeneration (no entry, hidden_act relu2): vLLM 0.33.0 builds its text model as
    NemotronH attention and MLP layers (models/cosmos3_edge.py _to_nemotron_h_config), each MLP up_proj [9216, 2048]
    and down_proj [2048, 9216] with no gate; its language_model at TP 1 is 3,892,547,584 B, at TP 2 1,946,390,528
    B a rank, and its tower (now counted, towers_catalog.py) visual 978,685,408 B at TP 1, 490,716,784 B a rank at
    TP 2 (the meta build's named_parameters, tests/data/engine_diff/registry/vllm-0.33.0.json)."""
    assert next(
        r.bytes for r in book("Cosmos3EdgeForConditionalGeneration").rows if r.component == "mlp"
    ) == (28 * 2 * 9216 * 2048 * BF16)
    for tp, language_model, visual in ((1, 3_892_547_584, 978_685_408), (2, 1_946_390_528, 490_716_784)):
        b = book("Cosmos3EdgeForConditionalGeneration", tp=tp)
        assert next(r.bytes for r in b.rows if r.component == "vision") == visual
        assert b.total_bytes == language_model + visual


def test_hyperclovax_generic_reading_counts_its_post_norms() -> None:
    """HyperCLOVAXForCausalLM (no entry, use_post_norm true): vLLM 0.33.0's HyperCLOVAXDecoderLayer
    (models/hyperclovax.py) builds post_norm1 and post_norm2 [4096] besides input_layernorm and
    post_attention_layernorm on each of its 32 layers; its meta build holds 13,477,355,520 B at TP 1 and
    6,739,206,144 B a rank at TP 2 (tests/data/engine_diff/registry/vllm-0.33.0.json)."""
    b = book("HyperCLOVAXForCausalLM")
    assert next(r.bytes for r in b.rows if r.component == "norms") == (32 * 4 + 1) * 4096 * BF16
    assert b.total_bytes == 13_477_355_520
    assert book("HyperCLOVAXForCausalLM", tp=2).total_bytes == 6_739_206_144


def test_apertus_xielu_scalars_are_weights() -> None:
    """ApertusForCausalLM's xIELU activation (SGLang 0.5.23 layers/activation.py XIELU, vLLM 0.33.0's too) holds
    mlp.act_fn.alpha_p and alpha_n, [1] bfloat16 parameters, on each of its 32 layers: 128 B; SGLang's meta build of
    the class defaults holds 13,959,192,704 B at TP 1, 6,979,870,848 B a rank at TP 2
    (tests/data/engine_diff/registry/sglang-0.5.23.json)."""
    assert book("ApertusForCausalLM").total_bytes == 13_959_192_704
    assert book("ApertusForCausalLM", tp=2).total_bytes == 6_979_870_848


def test_sglang_ernie_moe_router_is_in_the_model_dtype() -> None:
    """SGLang 0.5.23's Ernie4_5_MoeForCausalLM (models/ernie4.py MoEGate) builds gate.weight [64, 2560] and
    e_score_correction_bias [1, 64] in bfloat16 on its 27 MoE layers; its meta build of the class defaults holds
    43,650,875,776 B at TP 1 (tests/data/engine_diff/registry/sglang-0.5.23.json). vLLM keeps the fp32 router."""
    from kvtop.domain.engines.sglang import SglangRules
    from kvtop.domain.engines.versions import ResolvedVersion

    config = json.loads((REGISTRY_CONFIGS / "Ernie4_5_MoeForCausalLM.json").read_text())
    m = model_from_config(config, source="Ernie4_5_MoeForCausalLM")
    version = ResolvedVersion(text="0.5.23")
    parts = SglangRules().stage_parts(m, 0, 1, version)
    b = weights_book(
        m, ParallelLayout(tp=1), range(m.num_layers), first_stage=True, last_stage=True, parts=parts
    )
    assert next(r.bytes for r in b.rows if r.component == "router") == 27 * (64 * 2560 + 64) * BF16
    assert b.total_bytes == 43_650_875_776


def test_afmoe_entry_books_the_dense_layer_gate_proj_and_four_norms() -> None:
    """AfmoeForCausalLM's entry (it had none: the generic reading stopped at num_dense_layers): SGLang 0.5.23's meta
    build of its class defaults (models/afmoe.py) holds a dense MLP on num_dense_layers (1) layer(s) before the
    experts, self_attn.gate_proj [2048, 2048] and four norms a layer, its gate [64, 2048] bfloat16 on 31 MoE layers:
    38,465,203,968 B (a Llama-shaped reading gave 38,155,849,728 B)."""
    from kvtop.domain.engines.sglang import SglangRules
    from kvtop.domain.engines.versions import ResolvedVersion

    config = json.loads((REGISTRY_CONFIGS / "AfmoeForCausalLM.json").read_text())
    m = model_from_config(config, source="AfmoeForCausalLM")
    parts = SglangRules().stage_parts(m, 0, 1, ResolvedVersion(text="0.5.23"))
    b = weights_book(m, ParallelLayout(tp=1), range(m.num_layers), first_stage=True, last_stage=True, parts=parts)
    assert next(r.bytes for r in b.rows if r.component == "router") == 31 * (64 * 2048 * BF16 + 64 * 4)
    assert b.total_bytes == 38_465_203_968


def test_a_generic_reading_refuses_state_layers_by_name() -> None:
    """A class without an entry whose layer_types lists state layers (linear attention: a recurrent state and
    convolution per request, whose shape only an entry's StateSpec gives) is refused naming layer_types; the
    generic reading used to stop on an AssertionError in weight_matrices.linearattention. The config is the
    layer schedule of vLLM 0.33.0's BailingMoeV3TextConfig default (layer_group_size 5: four linear_attention
    layers then one full_attention, 20 layers), which SGLang 0.5.23 built with KDA state layers."""
    layer_types = (["linear_attention"] * 4 + ["full_attention"]) * 4
    # a class no registry names, so the generic reading is the only one (AliceAI's, a KDA hybrid, is named)
    config = {"architectures": ["HybridForCausalLM"], "model_type": "hybrid_lm", "hidden_size": 2048,
              "num_hidden_layers": 20, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
              "intermediate_size": 5120, "vocab_size": 157184, "max_position_embeddings": 32768,
              "layer_types": layer_types}  # fmt: skip
    with pytest.raises(UnsupportedModelError, match=r"layer_types \(state layers \('linear_attention'"):
        model_from_config(config, source="state-layers")
    assert model_from_config({**config, "layer_types": ["full_attention"] * 20}, source="full").num_layers == 20
