"""transformers' config class defaults of the families added with issue 26 (values only).

Read from each config class of transformers v5.24.0 (`CONFIG_MAPPING[model_type]().to_dict()`, the fields
kvtop reads; values computed from other fields in `__post_init__`, such as Jamba's dt rank, are left out and
computed as the class computes them). The class and file are named above each table.
"""

from __future__ import annotations

from kvtop.domain.architectures.defaults import NOMINAL_POSITIONS, DefaultValue

# Glm4Config — models/glm4/configuration_glm4.py
GLM4: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim":
    128, "vocab_size": 151552, "intermediate_size": 13696, "max_position_embeddings": 131072, "tie_word_embeddings":
    False, "attention_bias": True
}  # fmt: skip
# Glm4MoeConfig — models/glm4_moe/configuration_glm4_moe.py
GLM4_MOE: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8, "vocab_size":
    151552, "intermediate_size": 10944, "max_position_embeddings": 131072, "tie_word_embeddings": False,
    "attention_bias": False, "use_qk_norm": False, "n_routed_experts": 128, "num_experts_per_tok": 8,
    "moe_intermediate_size": 1408, "n_shared_experts": 1, "first_k_dense_replace": 1, "num_nextn_predict_layers": 1
}  # fmt: skip
# Glm4MoeLiteConfig — models/glm4_moe_lite/configuration_glm4_moe_lite.py
GLM4_MOE_LITE: dict[str, DefaultValue] = {
    "hidden_size": 2048, "num_hidden_layers": 47, "num_attention_heads": 20, "num_key_value_heads": 20,
    "vocab_size": 154880, "intermediate_size": 10240, "max_position_embeddings": 202752, "tie_word_embeddings":
    False, "attention_bias": False, "n_routed_experts": 64, "num_experts_per_tok": 4, "moe_intermediate_size": 1536,
    "n_shared_experts": 1, "kv_lora_rank": 512, "q_lora_rank": 768, "qk_rope_head_dim": 64, "qk_nope_head_dim": 192,
    "v_head_dim": 256
}  # fmt: skip
# AXK1Config — models/axk1/configuration_axk1.py (transformers 5.20.2; absent mlp_layer_types: dense below
# first_k_dense_replace, default 1)
AXK1: dict[str, DefaultValue] = {
    "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 64, "num_key_value_heads": 64,
    "vocab_size": 163840, "intermediate_size": 18432, "max_position_embeddings": 32768, "tie_word_embeddings": False,
    "attention_bias": False, "n_routed_experts": 192, "num_experts_per_tok": 8, "moe_intermediate_size": 2048,
    "n_shared_experts": 1, "first_k_dense_replace": 1, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128
}  # fmt: skip
# GlmMoeDsaConfig — models/glm_moe_dsa/configuration_glm_moe_dsa.py
GLM_MOE_DSA: dict[str, DefaultValue] = {
    "hidden_size": 6144, "num_hidden_layers": 78, "num_attention_heads": 64, "num_key_value_heads": 64, "head_dim":
    64, "vocab_size": 154880, "intermediate_size": 12288, "max_position_embeddings": 202752, "tie_word_embeddings":
    False, "attention_bias": False, "n_routed_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size":
    2048, "n_shared_experts": 1, "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 2048,
    "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "v_head_dim": 256, "index_head_dim": 128, "index_n_heads": 32,
    "mlp_bias": False
}  # fmt: skip
# MiniMaxM2Config — models/minimax_m2/configuration_minimax_m2.py
MINIMAX_M2: dict[str, DefaultValue] = {
    "hidden_size": 3072, "num_hidden_layers": 62, "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim":
    128, "vocab_size": 200064, "intermediate_size": 1536, "max_position_embeddings": 196608, "tie_word_embeddings":
    False, "num_local_experts": 256, "num_experts_per_tok": 8
}  # fmt: skip
# Qwen3_5TextConfig — models/qwen3_5/configuration_qwen3_5.py
QWEN3_5_TEXT: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim":
    256, "vocab_size": 248320, "intermediate_size": 12288, "max_position_embeddings": 32768, "tie_word_embeddings":
    False, "attention_bias": False, "linear_num_key_heads": 16, "linear_key_head_dim": 128,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
    "attn_output_gate": True,  # no transformers field: the engines' getattr(config, "attn_output_gate", True)
}  # fmt: skip
# Qwen3_5MoeTextConfig — models/qwen3_5_moe/configuration_qwen3_5_moe.py
QWEN3_5_MOE_TEXT: dict[str, DefaultValue] = {
    "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim":
    256, "vocab_size": 248320, "max_position_embeddings": 32768, "tie_word_embeddings": False, "attention_bias":
    False, "num_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512, "linear_num_key_heads": 16, "linear_key_head_dim": 128,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
    # no transformers field: vLLM 0.33.0 (models/qwen3_next.py Qwen3NextAttention, which qwen3_5.py builds) and
    # SGLang 0.5.23 (models/qwen3_5.py) read getattr(config, "attn_output_gate", True): q_proj twice as wide
    "attn_output_gate": True,
}  # fmt: skip
# Gemma4TextConfig — models/gemma4/configuration_gemma4.py
GEMMA4_TEXT: dict[str, DefaultValue] = {
    "hidden_size": 2304, "num_hidden_layers": 30, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim":
    256, "vocab_size": 262144, "intermediate_size": 9216, "max_position_embeddings": 131072, "tie_word_embeddings":
    True, "attention_bias": False, "sliding_window": 512, "attention_k_eq_v": False, "num_kv_shared_layers": 0
}  # fmt: skip
# Gemma4UnifiedTextConfig — models/gemma4_unified/configuration_gemma4_unified.py (transformers 5.19): no per-layer
# input and no experts; the global layers' head_dim 512 (global_head_dim) goes into per_layer_config
GEMMA4_UNIFIED_TEXT: dict[str, DefaultValue] = {
    "hidden_size": 2304, "num_hidden_layers": 30, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim":
    256, "vocab_size": 262144, "intermediate_size": 9216, "max_position_embeddings": 262144, "tie_word_embeddings":
    True, "attention_bias": False, "sliding_window": 1024, "attention_k_eq_v": False, "num_kv_shared_layers": 0
}  # fmt: skip
# MiMoV2FlashConfig — models/mimo_v2_flash/configuration_mimo_v2_flash.py
MIMO_V2_FLASH: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 48, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim":
    192, "vocab_size": 152576, "intermediate_size": 16384, "max_position_embeddings": 131072, "tie_word_embeddings":
    False, "attention_bias": False, "sliding_window": 129, "n_routed_experts": 256, "num_experts_per_tok": 8,
    "moe_intermediate_size": 2048, "v_head_dim": 128
}  # fmt: skip
# JambaConfig — models/jamba/configuration_jamba.py
JAMBA: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size":
    65536, "intermediate_size": 14336, "max_position_embeddings": 262144, "tie_word_embeddings": False,
    "num_experts": 16, "num_experts_per_tok": 2, "expert_layer_period": 2, "expert_layer_offset": 1,
    "attn_layer_period": 8, "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_expand": 2, "conv_kernel": 4
}  # fmt: skip
# FalconH1Config — models/falcon_h1/configuration_falcon_h1.py
FALCON_H1: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size":
    128000, "intermediate_size": 14336, "max_position_embeddings": 8192, "tie_word_embeddings": False,
    "attention_bias": False, "mlp_bias": False, "mamba_d_state": 256, "mamba_expand": 2, "mamba_n_heads": 128,
    "mamba_d_head": 8, "mamba_d_ssm": 1024, "conv_kernel": 4, "n_groups": 1
}  # fmt: skip
# GraniteMoeHybridConfig — models/granitemoehybrid/configuration_granitemoehybrid.py
GRANITEMOEHYBRID: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 32000, "intermediate_size": 11008, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": False, "num_local_experts": 8, "num_experts_per_tok": 2, "shared_intermediate_size": 1024,
    "mamba_d_state": 256, "mamba_expand": 2, "mamba_n_heads": 128, "mamba_d_head": 64, "conv_kernel": 4, "n_groups":
    1
}  # fmt: skip
# CohereConfig — models/cohere/configuration_cohere.py
COHERE: dict[str, DefaultValue] = {
    "hidden_size": 8192, "num_hidden_layers": 40, "num_attention_heads": 64, "num_key_value_heads": 64,
    "vocab_size": 256000, "intermediate_size": 22528, "max_position_embeddings": 8192, "tie_word_embeddings": True,
    "attention_bias": False, "use_qk_norm": False
}  # fmt: skip
# Cohere2Config — models/cohere2/configuration_cohere2.py
COHERE2: dict[str, DefaultValue] = {
    "hidden_size": 8192, "num_hidden_layers": 40, "num_attention_heads": 64, "num_key_value_heads": 64, "head_dim":
    128, "vocab_size": 256000, "intermediate_size": 22528, "max_position_embeddings": 8192, "tie_word_embeddings":
    True, "attention_bias": False, "sliding_window": 4096
}  # fmt: skip
# CohereCompassTextConfig — transformers 5.20.2 models/cohere_compass/configuration_cohere_compass.py: Cohere-2's
# numbers; KV heads default to the heads and head_dim is hidden ÷ heads (its __post_init__), layer_types all full
COHERE_COMPASS_TEXT: dict[str, DefaultValue] = {**COHERE2, "num_key_value_heads": None, "head_dim": None}
# Starcoder2Config — models/starcoder2/configuration_starcoder2.py
STARCODER2: dict[str, DefaultValue] = {
    "hidden_size": 3072, "num_hidden_layers": 30, "num_attention_heads": 24, "num_key_value_heads": 2, "vocab_size":
    49152, "intermediate_size": 12288, "max_position_embeddings": 4096, "tie_word_embeddings": True, "use_bias":
    True
}  # fmt: skip
# StableLmConfig — models/stablelm/configuration_stablelm.py
STABLELM: dict[str, DefaultValue] = {
    "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 50304, "intermediate_size": 6912, "max_position_embeddings": 4096, "tie_word_embeddings": False,
    "use_qkv_bias": False, "qk_layernorm": False
}  # fmt: skip
# GPT2Config — models/gpt2/configuration_gpt2.py
GPT2: dict[str, DefaultValue] = {
    "vocab_size": 50257, "tie_word_embeddings": True
}  # fmt: skip
# GPTJConfig — models/gptj/configuration_gptj.py
GPTJ: dict[str, DefaultValue] = {
    "vocab_size": 50400, "tie_word_embeddings": False
}  # fmt: skip
# GPTNeoXConfig — models/gpt_neox/configuration_gpt_neox.py
GPT_NEOX: dict[str, DefaultValue] = {
    "hidden_size": 6144, "num_hidden_layers": 44, "num_attention_heads": 64, "vocab_size": 50432,
    "intermediate_size": 24576, "max_position_embeddings": 2048, "tie_word_embeddings": False, "attention_bias":
    True
}  # fmt: skip
# GPTBigCodeConfig — models/gpt_bigcode/configuration_gpt_bigcode.py
GPT_BIGCODE: dict[str, DefaultValue] = {
    "num_key_value_heads": 1, "vocab_size": 50257, "tie_word_embeddings": True, "multi_query": True
}  # fmt: skip
# FalconConfig — models/falcon/configuration_falcon.py (no tie_word_embeddings of its own: PreTrainedConfig's
# True, as vLLM falcon.py reads an absent one)
FALCON: dict[str, DefaultValue] = {
    "num_attention_heads": 71, "num_key_value_heads": None, "vocab_size": 65024, "max_position_embeddings": 2048,
    "tie_word_embeddings": True, "multi_query": True, "parallel_attn": True, "new_decoder_architecture": False,
    "bias": False
}  # fmt: skip
# OPTConfig — models/opt/configuration_opt.py (word_embed_proj_dim None: hidden_size)
OPT: dict[str, DefaultValue] = {
    "vocab_size": 50272, "num_attention_heads": 12, "ffn_dim": 3072, "max_position_embeddings": 2048,
    "do_layer_norm_before": True, "word_embed_proj_dim": None, "enable_bias": True, "tie_word_embeddings": True
}  # fmt: skip
# BloomConfig — models/bloom/configuration_bloom.py: no position field (ALiBi), so kvtop's nominal positions
# (defaults.NOMINAL_POSITIONS: the engines' 2,048 where no key is found), said as such by the entry's own_defaults
BLOOM: dict[str, DefaultValue] = {
    "vocab_size": 250880, "num_attention_heads": 8, **NOMINAL_POSITIONS, "tie_word_embeddings": True
}  # fmt: skip
# DbrxConfig — models/dbrx/configuration_dbrx.py (d_model, n_heads, n_layers, max_seq_len: read under their aliases)
DBRX: dict[str, DefaultValue] = {
    "vocab_size": 32000, "num_attention_heads": 16, "max_position_embeddings": 2048, "tie_word_embeddings": False
}  # fmt: skip
# PhiConfig — models/phi/configuration_phi.py
PHI: dict[str, DefaultValue] = {
    "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 51200, "intermediate_size": 8192, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "qk_layernorm": False
}  # fmt: skip
# PhimoeConfig — models/phimoe/configuration_phimoe.py
PHIMOE: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size":
    32064, "intermediate_size": 6400, "max_position_embeddings": 131072, "tie_word_embeddings": False,
    "attention_bias": False, "num_local_experts": 16, "num_experts_per_tok": 2
}  # fmt: skip
# OlmoeConfig — models/olmoe/configuration_olmoe.py
OLMOE: dict[str, DefaultValue] = {
    "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 16,
    "vocab_size": 50304, "intermediate_size": 2048, "max_position_embeddings": 4096, "tie_word_embeddings": False,
    "attention_bias": False, "num_experts": 64, "num_experts_per_tok": 8
}  # fmt: skip
# Exaone4Config — models/exaone4/configuration_exaone4.py
EXAONE4: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 102400, "intermediate_size": 16384, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "sliding_window": 4096, "sliding_window_pattern": 4
}  # fmt: skip
# ExaoneConfig (remote code: LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct configuration_exaone.py; SGLang 0.5.23 ships
# the same class, sglang/srt/configs/exaone.py): its layers are `num_layers`, an absent width is 4 × hidden
EXAONE: dict[str, DefaultValue] = {
    "vocab_size": 102400, "hidden_size": 2048, "num_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": None, "head_dim": None, "intermediate_size": None, "max_position_embeddings": 2048,
    "tie_word_embeddings": True, "attention_bias": False,
}  # fmt: skip
# NanbeigeConfig (remote code: Nanbeige/Nanbeige4.2-3B configuration_nanbeige.py; SGLang 0.5.23 ships the same
# class, sglang/srt/configs/nanbeige.py): a looped transformer, num_loops 2 unless stated
NANBEIGE: dict[str, DefaultValue] = {
    "vocab_size": 166144, "hidden_size": 3072, "intermediate_size": 10752, "num_hidden_layers": 22,
    "num_attention_heads": 48, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 4096,
    "tie_word_embeddings": False, "attention_bias": False, "num_loops": 2,
}  # fmt: skip
# Ministral3Config — models/ministral3/configuration_ministral3.py
MINISTRAL3: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 34, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim":
    128, "vocab_size": 131072, "intermediate_size": 14336, "max_position_embeddings": 262144, "tie_word_embeddings":
    False
}  # fmt: skip
# SmolLM3Config — models/smollm3/configuration_smollm3.py
SMOLLM3: dict[str, DefaultValue] = {
    "hidden_size": 2048, "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size":
    128256, "intermediate_size": 11008, "max_position_embeddings": 32768, "tie_word_embeddings": True,
    "attention_bias": False, "use_sliding_window": False, "no_rope_layer_interval": 4, "mlp_bias": False
}  # fmt: skip
# SeedOssConfig — models/seed_oss/configuration_seed_oss.py
SEED_OSS: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 64, "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim":
    128, "vocab_size": 155136, "intermediate_size": 27648, "max_position_embeddings": 524288, "tie_word_embeddings":
    False, "attention_bias": True, "mlp_bias": False
}  # fmt: skip
# ApertusConfig — models/apertus/configuration_apertus.py
APERTUS: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 131072, "intermediate_size": 14336, "max_position_embeddings": 65536, "tie_word_embeddings":
    False, "attention_bias": False
}  # fmt: skip
# Ernie4_5Config — models/ernie4_5/configuration_ernie4_5.py
ERNIE4_5: dict[str, DefaultValue] = {
    "hidden_size": 1024, "num_hidden_layers": 18, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim":
    128, "vocab_size": 103424, "intermediate_size": 3072, "max_position_embeddings": 131072, "tie_word_embeddings":
    True, "use_bias": False
}  # fmt: skip
# Ernie4_5_MoeConfig — models/ernie4_5_moe/configuration_ernie4_5_moe.py
ERNIE4_5_MOE: dict[str, DefaultValue] = {
    "hidden_size": 2560, "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4, "vocab_size":
    103424, "intermediate_size": 12288, "max_position_embeddings": 131072, "tie_word_embeddings": True,
    "moe_intermediate_size": 1536, "use_bias": False, "moe_num_experts": 64, "moe_k": 6, "moe_num_shared_experts":
    2, "moe_layer_start_index": 1, "moe_layer_end_index": 27, "moe_layer_interval": 1
}  # fmt: skip
# MiniCPM3Config — models/minicpm3/configuration_minicpm3.py
MINICPM3: dict[str, DefaultValue] = {
    "hidden_size": 2560, "num_hidden_layers": 62, "num_attention_heads": 40, "num_key_value_heads": 40, "head_dim":
    32, "vocab_size": 73448, "intermediate_size": 6400, "max_position_embeddings": 32768, "tie_word_embeddings":
    True, "attention_bias": False, "kv_lora_rank": 256, "q_lora_rank": 768, "qk_rope_head_dim": 32,
    "qk_nope_head_dim": 64, "v_head_dim": 64, "mlp_bias": False
}  # fmt: skip
# KimiLinearConfig — models/kimi_linear/configuration_kimi_linear.py
KIMI_LINEAR: dict[str, DefaultValue] = {
    "hidden_size": 2304, "num_hidden_layers": 27, "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim":
    64, "vocab_size": 163840, "intermediate_size": 9216, "tie_word_embeddings": False, "attention_bias": False,
    "num_experts": 256, "moe_intermediate_size": 1024, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "linear_conv_kernel_dim": 4, "num_experts_per_token": 8,
    "num_shared_experts": 1
}  # fmt: skip
# Lfm2Config — models/lfm2/configuration_lfm2.py
LFM2: dict[str, DefaultValue] = {
    "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size":
    65536, "intermediate_size": 12288, "max_position_embeddings": 128000, "tie_word_embeddings": True,
    "conv_L_cache": 3, "block_auto_adjust_ff_dim": True, "block_multiple_of": 256
}  # fmt: skip
# Lfm2MoeConfig — models/lfm2_moe/configuration_lfm2_moe.py
LFM2_MOE: dict[str, DefaultValue] = {
    "hidden_size": 2048, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 65536, "intermediate_size": 7168, "max_position_embeddings": 128000, "tie_word_embeddings": True,
    "conv_L_cache": 3, "num_experts": 32, "num_experts_per_tok": 4, "moe_intermediate_size": 1792,
    "num_dense_layers": 2, "use_expert_bias": True
}  # fmt: skip
# MambaConfig — models/mamba/configuration_mamba.py
MAMBA: dict[str, DefaultValue] = {
    "hidden_size": 768, "num_hidden_layers": 32, "vocab_size": 50280, "intermediate_size": 1536,
    "tie_word_embeddings": True, "conv_kernel": 4, "use_bias": False, "expand": 2, "state_size": 16
}  # fmt: skip
# Mamba2Config — models/mamba2/configuration_mamba2.py
MAMBA2: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 64, "head_dim": 64, "vocab_size": 32768, "tie_word_embeddings": False,
    "n_groups": 8, "conv_kernel": 4, "use_bias": False, "expand": 2, "state_size": 128
}  # fmt: skip
# NemotronConfig — models/nemotron/configuration_nemotron.py
NEMOTRON: dict[str, DefaultValue] = {
    "hidden_size": 6144, "num_hidden_layers": 32, "num_attention_heads": 48, "head_dim": 128, "vocab_size": 256000,
    "intermediate_size": 24576, "max_position_embeddings": 4096, "tie_word_embeddings": False, "attention_bias":
    False, "mlp_bias": False
}  # fmt: skip
# ArceeConfig — models/arcee/configuration_arcee.py
ARCEE: dict[str, DefaultValue] = {
    "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim":
    80, "vocab_size": 32000, "intermediate_size": 18432, "max_position_embeddings": 4096, "tie_word_embeddings":
    False, "attention_bias": False, "mlp_bias": False
}  # fmt: skip
# GraniteMoeConfig — models/granitemoe/configuration_granitemoe.py
GRANITEMOE: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 32000, "intermediate_size": 11008, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": False, "num_local_experts": 8, "num_experts_per_tok": 2
}  # fmt: skip
# GraniteMoeSharedConfig — models/granitemoeshared/configuration_granitemoeshared.py
GRANITEMOESHARED: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 32000, "intermediate_size": 11008, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": False, "num_local_experts": 8, "num_experts_per_tok": 2, "shared_intermediate_size": 0
}  # fmt: skip
# Dots1Config — models/dots1/configuration_dots1.py
DOTS1: dict[str, DefaultValue] = {
    "hidden_size": 4608, "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 152064, "intermediate_size": 10944, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": False, "sliding_window": 4096, "max_window_layers": 62, "moe_intermediate_size": 1408,
    "first_k_dense_replace": 0
}  # fmt: skip
# Cohere2MoeConfig — models/cohere2_moe/configuration_cohere2_moe.py
COHERE2_MOE: dict[str, DefaultValue] = {
    "hidden_size": 8192, "num_hidden_layers": 40, "num_attention_heads": 64, "num_key_value_heads": 64,
    "head_dim": 128, "vocab_size": 256000, "intermediate_size": 22528, "max_position_embeddings": 8192,
    "tie_word_embeddings": True, "attention_bias": False, "sliding_window": 4096, "sliding_window_pattern": 4, "num_experts": 8,
    "num_experts_per_tok": 2, "num_shared_experts": 0
}  # fmt: skip
# HunYuanDenseV1Config — models/hunyuan_v1_dense/configuration_hunyuan_v1_dense.py
HUNYUAN_V1_DENSE: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 290943, "intermediate_size": 11008, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": False
}  # fmt: skip
# HunYuanMoEV1Config — models/hunyuan_v1_moe/configuration_hunyuan_v1_moe.py (num_experts 1: a dense model in SGLang;
# num_key_value_heads None: every head)
HUNYUAN_V1_MOE: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 290943, "intermediate_size": 11008, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": False, "num_experts": 1, "moe_topk": 1
}  # fmt: skip
# HeliumConfig — models/helium/configuration_helium.py
HELIUM: dict[str, DefaultValue] = {
    "hidden_size": 2560, "num_hidden_layers": 24, "num_attention_heads": 20, "num_key_value_heads": 20, "head_dim":
    128, "vocab_size": 48000, "intermediate_size": 7040, "max_position_embeddings": 4096, "tie_word_embeddings":
    False, "attention_bias": False, "mlp_bias": False
}  # fmt: skip
# Glm4vTextConfig — models/glm4v/configuration_glm4v.py
GLM4V_TEXT: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2, "vocab_size":
    151552, "intermediate_size": 13696, "max_position_embeddings": 32768
}  # fmt: skip
# Glm4vMoeTextConfig — models/glm4v_moe/configuration_glm4v_moe.py
GLM4V_MOE_TEXT: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8, "vocab_size":
    151424, "intermediate_size": 10944, "max_position_embeddings": 65536, "tie_word_embeddings": False,
    "attention_bias": True, "n_routed_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 1408,
    "n_shared_experts": 1, "first_k_dense_replace": 1
}  # fmt: skip
# ExaoneMoeConfig — models/exaone_moe/configuration_exaone_moe.py
EXAONE_MOE: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 102400, "intermediate_size": 16384, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "sliding_window": 4096, "sliding_window_pattern": 4, "num_experts": 64, "num_experts_per_tok": 8,
    "moe_intermediate_size": 1024, "first_k_dense_replace": 1, "num_shared_experts": 1
}  # fmt: skip
# LagunaConfig — models/laguna/configuration_laguna.py (its defaults as transformers 5.20 writes them out)
LAGUNA: dict[str, DefaultValue] = {
    "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 48, "num_key_value_heads": 8,
    "head_dim": 128, "vocab_size": 100352, "intermediate_size": 8192, "max_position_embeddings": 131072,
    "tie_word_embeddings": False, "attention_bias": False, "sliding_window": 512, "num_experts": 256,
    "num_experts_per_tok": 8, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "gating": True
}  # fmt: skip
# MuseGlimmerTextConfig — models/muse_glimmer/configuration_muse_glimmer.py (transformers 5.20 in vLLM 0.33.0's venv)
MUSE_GLIMMER_TEXT: dict[str, DefaultValue] = {
    "hidden_size": 6656, "num_hidden_layers": 52, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim":
    128, "vocab_size": 202048, "intermediate_size": 19968, "max_position_embeddings": 131072, "tie_word_embeddings":
    False, "attention_bias": False, "sliding_window": 2048
}  # fmt: skip
# AfmoeConfig — models/afmoe/configuration_afmoe.py
AFMOE: dict[str, DefaultValue] = {
    "hidden_size": 2048, "num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim":
    128, "vocab_size": 200192, "intermediate_size": 6144, "max_position_embeddings": 16384, "tie_word_embeddings":
    False, "attention_bias": False, "sliding_window": 1024, "num_experts": 64, "num_experts_per_tok": 6,
    "moe_intermediate_size": 1408, "num_shared_experts": 2, "num_dense_layers": 1, "global_attn_every_n_layers": 4
}  # fmt: skip
# FlexOlmoConfig — models/flex_olmo/configuration_flex_olmo.py
FLEX_OLMO: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 100352, "intermediate_size": 11008, "max_position_embeddings": 4096, "tie_word_embeddings": False,
    "attention_bias": False, "num_experts": 7, "num_experts_per_tok": 5
}  # fmt: skip
# Jais2Config — models/jais2/configuration_jais2.py
JAIS2: dict[str, DefaultValue] = {
    "hidden_size": 3328, "num_hidden_layers": 32, "num_attention_heads": 26, "num_key_value_heads": 26, "head_dim":
    128, "vocab_size": 150272, "intermediate_size": 26624, "max_position_embeddings": 8192, "tie_word_embeddings":
    False, "attention_bias": True, "mlp_bias": True
}  # fmt: skip
# MiniMaxM3TextConfig — vLLM 0.33.0 vllm/transformers_utils/configs/minimax_m3.py (no transformers class); its
# moe_layer_freq default is [0] × 3 + [1] × 57: first_k_dense_replace 3 here
MINIMAX_M3: dict[str, DefaultValue] = {
    "vocab_size": 200064, "hidden_size": 6144, "intermediate_size": 3072, "dense_intermediate_size": 12288,
    "shared_intermediate_size": 3072, "num_hidden_layers": 60, "num_attention_heads": 64, "num_key_value_heads": 4,
    "head_dim": 128, "max_position_embeddings": 524288, "use_qk_norm": True, "num_local_experts": 128,
    "num_experts_per_tok": 4, "n_shared_experts": 1, "use_routing_bias": True, "tie_word_embeddings": False,
    "first_k_dense_replace": 3,
}  # fmt: skip
# Spark2_5Config — SGLang 0.5.23 srt/configs/spark2_5.py (no transformers class); its layer_types default is
# three sliding layers then one full (EveryNthFull(every=4)); is_hybrid_swa: true where any layer slides
SPARK2_5: dict[str, DefaultValue] = {
    "hidden_size": 2048, "intermediate_size": 6656, "num_attention_heads": 8, "num_key_value_heads": 2,
    "num_hidden_layers": 28, "head_dim": 256, "headwise_attn_output_gate": True, "sliding_window": 512,
    "vocab_size": 133120, "max_position_embeddings": 8192, "is_hybrid_swa": True,
}  # fmt: skip
# IQuestQ1Config — SGLang 0.5.23 srt/configs/iquest_q1.py (no transformers class); its layer lists and
# mlp_only_layers [0] are the rule's (layer_rules.RepeatedBlock, moe_rules.SparseStep.dense_absent)
IQUEST_Q1: dict[str, DefaultValue] = {
    "vocab_size": 160000, "hidden_size": 3072, "dense_intermediate_size": 12288, "intermediate_size": 1536,
    "num_hidden_layers": 88, "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128,
    "max_position_embeddings": 524288, "tie_word_embeddings": False, "attention_bias": False, "sliding_window": 4096,
    "num_hybrid_layers_block": 21, "num_experts": 256, "num_experts_per_tok": 8, "enable_sink_attention": True,
    "num_mtp_layers": 0, "is_hybrid_swa": True,
}  # fmt: skip
# Moondream3TextConfig — vLLM 0.33.0 transformers_utils/configs/moondream3.py (no transformers class): max_context
# 4096, its moe dict's defaults (start_layer 4, n_experts 64, n_experts_per_tok 8, expert_inner_dim 1024)
MOONDREAM3: dict[str, DefaultValue] = {
    "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24, "vocab_size": 51200,
    "max_position_embeddings": 4096, "num_attention_heads": 32, "num_key_value_heads": 32,
    "tie_word_embeddings": False, "first_k_dense_replace": 4, "moe_num_experts": 64, "moe_topk": 8,
    "moe_intermediate_size": 1024,
}  # fmt: skip
# GigaChat35Config — SGLang 0.5.23 srt/configs/gigachat35.py (no transformers class); layer_types and
# full_attention_layers None: every layer a gated delta net
GIGACHAT3_5: dict[str, DefaultValue] = {
    "vocab_size": 128256, "hidden_size": 1280, "intermediate_size": 896, "moe_intermediate_size": 896,
    "num_hidden_layers": 12, "num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 4096,
    "attention_bias": False, "tie_word_embeddings": False, "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "head_dim": 64, "n_routed_experts": 64,
    "n_shared_experts": 2, "num_experts_per_tok": 6, "moe_layer_freq": 1, "first_k_dense_replace": 1,
    "topk_method": "noaux_tc", "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_num_key_heads": 8, "linear_num_value_heads": 16, "norm_type": "ZeroCenteredGatedNorm",
    "layernorm_type": "pre_post", "gated_attention": True, "num_nextn_predict_layers": 0,
}  # fmt: skip
# LongcatFlashConfig — the defaults vLLM 0.33.0's class (transformers 5.20.2 models/longcat_flash) and SGLang
# 0.5.23's own (srt/configs/longcat_flash.py) share; qk_rope_head_dim (64 against 128) and zero_expert_type
# (none against "identity") differ, so a config must state them (the latter refused on vLLM where absent)
LONGCAT_FLASH: dict[str, DefaultValue] = {
    "vocab_size": 131072, "hidden_size": 6144, "ffn_hidden_size": 12288, "expert_ffn_hidden_size": 2048,
    "num_layers": 28, "num_attention_heads": 64, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
    "v_head_dim": 128, "n_routed_experts": 512, "moe_topk": 12, "zero_expert_num": 256,
    "max_position_embeddings": 131072, "tie_word_embeddings": False, "attention_bias": False,
}  # fmt: skip
# Gemma3nTextConfig — transformers 5.20.2 models/gemma3n/configuration_gemma3n.py (layer_types absent: four
# sliding layers then a full one)
GEMMA3N_TEXT: dict[str, DefaultValue] = {
    "vocab_size": 262400, "vocab_size_per_layer_input": 262144, "hidden_size": 2048, "hidden_size_per_layer_input":
    256, "intermediate_size": 16384, "num_hidden_layers": 35, "num_attention_heads": 8, "num_key_value_heads": 2,
    "head_dim": 256, "max_position_embeddings": 32768, "sliding_window": 512, "tie_word_embeddings": True,
    "attention_bias": False, "laurel_rank": 64, "altup_num_inputs": 4, "num_kv_shared_layers": 15,
}  # fmt: skip
# HYV3Config — transformers 5.20.2 models/hy_v3/configuration_hy_v3.py (no route_norm, first_k_dense_replace or
# expert_hidden_dim: the engines' classes read them, engine_read_fields)
HYV3: dict[str, DefaultValue] = {
    "vocab_size": 120832, "hidden_size": 4096, "intermediate_size": 13312, "num_hidden_layers": 80,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072,
    "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "num_experts": 192,
    "num_experts_per_tok": 8, "num_shared_experts": 1, "moe_intermediate_size": 1536,
}  # fmt: skip
# OlmoHybridConfig — transformers 5.20.2 models/olmo_hybrid/configuration_olmo_hybrid.py; its linear_* sizes are
# derived from hidden and heads where absent (not read: a config must state them)
OLMO_HYBRID: dict[str, DefaultValue] = {
    "vocab_size": 100352, "hidden_size": 3840, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 30, "max_position_embeddings": 65536, "tie_word_embeddings": False,
    "attention_bias": False, "linear_conv_kernel_dim": 4,
}  # fmt: skip
# InternS1ProTextConfig — internlm/Intern-S1-Pro configuration_interns1_pro.py (its __init__ defaults; head_dim
# None: hidden ÷ heads; rope_theta 5000000.0 held as the equal int)
INTERNS1_PRO_TEXT: dict[str, DefaultValue] = {
    "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 128000,
    "tie_word_embeddings": False, "rope_theta": 5000000, "attention_bias": False, "decoder_sparse_step": 1,
    "moe_intermediate_size": 1408, "num_experts_per_tok": 4, "num_experts": 60,
}  # fmt: skip
# Telechat2Config (remote code: TeleAI/TeleChat2-3B configuration_telechat2.py, as vLLM shipped its copy until it dropped
# it: vllm/transformers_utils/configs/telechat2.py @ 1209261e): n_layer, n_head (read here under the schema's names),
# ffn_hidden_size; no num_key_value_heads unless stated (None); it passes no tie_word_embeddings on (PretrainedConfig's
# default, True)
TELECHAT2: dict[str, DefaultValue] = {
    "vocab_size": 160256, "hidden_size": 4096, "num_hidden_layers": 30, "num_attention_heads": 32, "num_key_value_heads": None,
    "ffn_hidden_size": 12288, "tie_word_embeddings": True,
}  # fmt: skip
