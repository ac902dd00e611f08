"""Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2, GLM-4.7-Flash, MiniCPM3) and DeepSeek's sparse
attention (DeepSeek-V3.2, GLM-5): one latent of `kv_lora_rank + qk_rope_head_dim` per token and layer, plus
the indexer's key where the config has `index_head_dim`."""

from __future__ import annotations

from dataclasses import replace

from kvtop.domain.architectures import defaults as d
from kvtop.domain.architectures import defaults_more as m
from kvtop.domain.architectures.defaults import tf
from kvtop.domain.architectures.description import Architecture, Attention, Compressed, Geometry, Latent
from kvtop.domain.architectures.moe_rules import EveryOther, FirstDense, LayerTypes, Moe, Shared
from kvtop.domain.architectures.table_moe import BAILING_MOE
from kvtop.domain.model import BodyShape

A = Architecture
# DeepSeek-V3's noaux_tc routing keeps an fp32 score-correction bias per expert, only where topk_method says
# noaux_tc (vLLM 0.33.0 deepseek_v2.py DeepseekV2MoE, SGLang 0.5.23 deepseek_v2.py: every V3-shaped checkpoint
# states it; DeepseekV3Config has no such field, and Mistral-Large-3's params.json maps to topk_method None);
# V2's likewise (its class default is greedy)
DEEPSEEK_MOE = Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), placement=FirstDense(),
                   router_bias_when=("topk_method", "noaux_tc"))  # fmt: skip
DEEPSEEK_V2_MOE = Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), placement=FirstDense(),
                      router_bias_when=("topk_method", "noaux_tc"))  # fmt: skip
GLM_MOE = Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), placement=FirstDense(),
              router_bias=True, router_fp32=True)  # fmt: skip
MTP = ("num_nextn_predict_layers",)
# DeepSeek-V4: every layer MoE (no dense layer), the first `num_hash_layers` routed by token id (no score bias)
DEEPSEEK_V4_MOE = Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), router_bias=True,
                      hash_layers_field="num_hash_layers")  # fmt: skip
# SGLang 0.5.23's own config class (configs/deepseek_v4.py DeepSeekV4Config, which it loads the config with): the
# defaults kvtop may read from it (every shape field must be in the file)
DEEPSEEK_V4_SOURCE = "SGLang 0.5.23 srt/configs/deepseek_v4.py DeepSeekV4Config, srt/models/deepseek_v4.py"
DEEPSEEK_V4_DEFAULTS: d.Defaults = {
    "tie_word_embeddings": False,
    "attention_bias": False,
    "n_shared_experts": 1,
}
TWO_NORMS = BodyShape()
# AXK1 (vLLM 0.33.0 models/AXK1.py): experts where mlp_layer_types says "sparse" (_get_mlp_layer_types), the fp32
# e_score_correction_bias unless topk_method is not noaux_tc (AXK1MoE), and a third norm per layer
# (post_mlp_layernorm, AXK1DecoderLayer); its meta build of the class defaults holds exactly these
AXK1_MOE = Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"),
               placement=LayerTypes(absent=FirstDense()), router_bias=True)  # fmt: skip

PANGU_MOE = Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), placement=FirstDense(),
                router_bias_when=("router_enable_expert_bias", True))  # fmt: skip
SARVAM_SOURCE = "vLLM 0.33.0 models/sarvam.py; SGLang 0.5.23 models/sarvam_moe.py"
SARVAM_MLA_DEFAULTS: d.Defaults = {
    "first_k_dense_replace": 1,
    "moe_router_enable_expert_bias": True,
    "q_lora_rank": None,
    "tie_word_embeddings": False,
}

LONGCAT_SOURCE = "transformers v5.20.2 models/longcat_flash/configuration_longcat_flash.py, SGLang 0.5.23 srt/configs/longcat_flash.py"
LONGCAT_MOE = Moe("n_routed_experts", per_token_field="moe_topk", expert_size_field="expert_ffn_hidden_size",
                  shared=Shared(size_field="ffn_hidden_size"), placement=EveryOther(), router_bias=True, router_fp32=True,
                  zero_experts_field="zero_expert_num", zero_type_field="zero_expert_type")  # fmt: skip

# Hunyuan-V4 (HYV4ForCausalLM): vLLM 0.33.0 transformers_utils/configs/hy_v4.py HYV4Config's defaults (SGLang 0.5.23
# configs/hy_v4.py the same values); experts where mlp_layer_types says "sparse" (absent: one dense layer first), the
# gate fp32 and an fp32 expert_bias always (vLLM models/hy_v4/nvidia/moe.py HYV4MoEFused GateLinear params_dtype,
# expert_bias; SGLang DeepseekV2MoE under topk_method noaux_tc, set by its config class)
HYV4_SOURCE = ("vLLM 0.33.0 transformers_utils/configs/hy_v4.py HYV4Config, models/hy_v4/nvidia; SGLang 0.5.23 "
               "configs/hy_v4.py, models/hunyuan_v4.py")  # fmt: skip
HYV4_DEFAULTS: d.Defaults = {
    "vocab_size": 120832, "hidden_size": 2816, "intermediate_size": 6912, "moe_intermediate_size": 768,
    "num_hidden_layers": 34, "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 262144,
    "tie_word_embeddings": False, "attention_bias": False, "n_routed_experts": 256, "n_shared_experts": 1,
    "num_experts_per_tok": 8, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 192,
    "qk_rope_head_dim": 64, "v_head_dim": 256, "index_head_dim": 128, "index_n_heads": 16, "enable_ihc": True,
    "hc_mult": 4, "gated_mla": True, "gating_type": "elementwise", "learnable_sink": True,
    "num_nextn_predict_layers": 1,
}  # fmt: skip
HYV4_MOE = Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"),
               placement=LayerTypes(absent=FirstDense(default_first=1)), router_bias=True, router_fp32=True)  # fmt: skip
# MLA with DSA where layer_types says sparse (shared indexer layers keep no key), the elementwise gate (linear_gate:
# hidden → heads × v_head_dim, split with the heads), an fp32 sink per head, iHC's mixers (weight_hyper.py)
HYV4 = Architecture(
    "hy_v4", "HYV4Config", HYV4_SOURCE, HYV4_DEFAULTS, ("HYV4ForCausalLM",),
    latent=Latent(use_field=None, sparse_types="layer_types"), moe=HYV4_MOE, mtp_fields=MTP,
    attention=Attention(latent_gate_kind_field="gating_type", latent_gate_if="gated_mla",
                        latent_sink_field="learnable_sink"),
    hyper_connection_fields=("enable_ihc", "hc_mult"),
)  # fmt: skip


def deepseek(
    model_type: str,
    config_class: str,
    source: str,
    defaults: d.Defaults,
    *archs: str,
    moe: Moe = DEEPSEEK_MOE,
    body: BodyShape = TWO_NORMS,
) -> Architecture:
    """A DeepSeek-V3-shaped entry: MLA (DSA where the config has an indexer), DeepSeek's experts, MTP."""
    return A(model_type, config_class, source, defaults, archs, latent=Latent(), moe=moe,
             mtp_fields=MTP, body=body)  # fmt: skip


LATENT: tuple[Architecture, ...] = (
    deepseek(
        "deepseek_v2",
        "DeepseekV2Config",
        tf("deepseek_v2"),
        d.DEEPSEEK_V2,
        "DeepseekV2ForCausalLM",
        # n_routed_experts null: a dense MLP on every layer, as both engines' deepseek_v2.py build it (vLLM 0.33.0
        # DeepseekV2DecoderLayer is_moe_layer, SGLang 0.5.23 _is_layer_sparse: `n_routed_experts is not None`;
        # SGLang's DeepseekV2Config default, configs/deepseekvl2.py, which DeepSeek-VL2's and dots.vlm1's read)
        moe=replace(DEEPSEEK_V2_MOE, optional=True),
    ),
    # Mistral-Large-3: vLLM 0.33.0 models/mistral_large_3.py subclasses DeepseekV3ForCausalLM (its own tensor names
    # only); its params.json is read as DeepSeek-V3's fields (kvtop.domain.mistral_params)
    deepseek("deepseek_v3", "DeepseekV3Config", tf("deepseek_v3"), d.DEEPSEEK_V3, "DeepseekV3ForCausalLM",
             "MistralLarge3ForCausalLM"),  # fmt: skip
    deepseek(
        "deepseek_v32", "DeepseekV32Config", tf("deepseek_v32"), d.DEEPSEEK_V32, "DeepseekV32ForCausalLM"
    ),
    # Kimi-K2 ships remote code whose class is DeepseekV3Config (auto_map in its config.json)
    deepseek(
        "kimi_k2",
        "DeepseekV3Config",
        tf("deepseek_v3"),
        d.DEEPSEEK_V3,
        "DeepseekV3ForCausalLM",
        "KimiK25ForConditionalGeneration",
    ),
    # GLM-5 (DSA): DeepSeek-V3.2's attention and experts, the gate bf16 and its score-correction bias fp32 in
    # both engines (their meta-built gate.weight [256, 6144] bfloat16); GLM-4.7-Flash (MLA): V3's attention,
    # GLM's fp32 gate
    deepseek("glm_moe_dsa", "GlmMoeDsaConfig", tf("glm_moe_dsa"), m.GLM_MOE_DSA, "GlmMoeDsaForCausalLM"),
    deepseek(
        "glm4_moe_lite",
        "Glm4MoeLiteConfig",
        tf("glm4_moe_lite"),
        m.GLM4_MOE_LITE,
        "Glm4MoeLiteForCausalLM",
        moe=GLM_MOE,
    ),
    # DeepSeek-V4: compressed attention (one 512-wide latent per 1, 4 or 128 tokens by layer: `Compressed`),
    # hyper-connections, DeepSeek's experts with token-id routed first layers, MTP
    A(
        "deepseek_v4",
        "DeepSeekV4Config",
        DEEPSEEK_V4_SOURCE,
        DEEPSEEK_V4_DEFAULTS,
        ("DeepseekV4ForCausalLM",),
        compressed=Compressed(),
        moe=DEEPSEEK_V4_MOE,
        mtp_fields=MTP,
    ),
    deepseek(
        "axk1",
        "AXK1Config",
        tf("axk1"),
        m.AXK1,
        "AXK1ForCausalLM",
        moe=AXK1_MOE,
        body=BodyShape(norms_per_layer=3),
    ),  # fmt: skip
    # LongCat-Flash (vLLM 0.33.0 / SGLang 0.5.23 models/longcat_flash.py FlashDecoderLayer / LongcatFlashDecoderLayer):
    # each of num_layers layers holds two MLA blocks (each its own KV layer: SGLang num_attention_layers = 2 ×
    # num_hidden_layers), four norms, two dense MLPs of ffn_hidden_size and one MoE (no shared expert); read as two
    # kvtop layers a layer, the MoE on the second beside its dense MLP. The router (classifier and e_score_correction
    # bias, fp32) has a row for each of n_routed_experts + zero_expert_num; the zero experts hold no weights
    A("longcat_flash", "LongcatFlashConfig", LONGCAT_SOURCE, m.LONGCAT_FLASH, ("LongcatFlashForCausalLM",),
      geometry=Geometry(layers="num_layers", blocks_per_layer=2, intermediate="ffn_hidden_size"), latent=Latent(),
      moe=LONGCAT_MOE, mtp_fields=(),
      engine_read_fields=("mla_scale_q_lora", "mla_scale_kv_lora", "zero_expert_type", "rope_scaling.rope_theta"),
      refused_when=(("ngram_vocab_size_ratio", "LongCat's n-gram embeddings (SGLang NgramEmbedding)"),
                    ("num_hidden_layers", "a stated num_hidden_layers beside num_layers (SGLang builds that many "
                     "layers, vLLM's config class half as many)"))),  # fmt: skip
    # LongCat-Flash-Lite (vLLM 0.33.0 models/longcat_flash_ngram.py; SGLang 0.5.23 registers no such class): the same
    # FlashModel (config.py _ARCHITECTURE_TO_MODEL_TYPE: a checkpoint without model_type read as transformers'
    # LongcatFlashConfig) with NgramEmbedding beside embed_tokens (BodyShape.ngram_tables); its MTP (model.mtp.) is
    # dropped by the loader
    A("longcat_flash_ngram", "LongcatFlashConfig", LONGCAT_SOURCE, m.LONGCAT_FLASH, ("LongcatFlashNgramForCausalLM",),
      geometry=Geometry(layers="num_layers", blocks_per_layer=2, intermediate="ffn_hidden_size"), latent=Latent(),
      moe=LONGCAT_MOE, mtp_fields=(),
      engine_read_fields=("mla_scale_q_lora", "mla_scale_kv_lora", "zero_expert_type"),
      ngram_fields=("ngram_vocab_size_ratio", "emb_split_num", "emb_neighbor_num"),
      refused_when=(("num_hidden_layers", "a stated num_hidden_layers beside num_layers (vLLM's config class builds "
                     "half as many layers)"),)),  # fmt: skip
    # Sarvam-105B (model_type sarvam_mla; vLLM 0.33.0 models/sarvam.py SarvamMLAForCausalLM, SGLang 0.5.23
    # models/sarvam_moe.py): DeepSeek-V3's latent attention (q_proj whole where q_lora_rank is None) under Bailing's
    # expert fields: dense MLPs of intermediate_size below first_k_dense_replace, then num_experts experts of
    # moe_intermediate_size, num_shared_experts shared, and the fp32 e_score_correction_bias [num_experts] unless
    # moe_router_enable_expert_bias is false (vLLM SarvamMLAMoE; defaults: vLLM sarvam.py's getattr defaults)
    A("sarvam_mla", "the checkpoint's configuration class (remote code)", SARVAM_SOURCE, SARVAM_MLA_DEFAULTS,
      ("SarvamMLAForCausalLM",), latent=Latent(), moe=BAILING_MOE, mtp_fields=()),
    # openPangu-Ultra-MoE (model_type pangu_ultra_moe; vLLM 0.33.0 models/openpangu.py PanguUltraMoEForCausalLM, SGLang
    # 0.5.23 has no class): DeepSeek-V3's latent attention and experts; the fp32 e_score_correction_bias only where
    # router_enable_expert_bias is stated true (OpenPanguMoE's hasattr check); sandwich_norm adds pre- and post-MLP
    # RMSNorms to every layer (OpenPanguDecoderLayer: four norms)
    A("pangu_ultra_moe", "PanguUltraMoEConfig (configuration_openpangu_moe.py, remote code)",
      "vLLM 0.33.0 models/openpangu.py", {}, ("PanguUltraMoEForCausalLM",), latent=Latent(), moe=PANGU_MOE,
      mtp_fields=MTP, norms_by_word=("sandwich_norm", (("True", 4),))),
    # MiniCPM3: latent attention, a dense MLP
    A("minicpm3", "MiniCPM3Config", tf("minicpm3"), m.MINICPM3, ("MiniCPM3ForCausalLM",), latent=Latent()),
    HYV4,
)
