"""transformers' config class defaults, per family: what a field left out of config.json becomes.

Copied (values only) from the config class named above each table, in transformers v5.24.0 (the
wheel on PyPI), `src/transformers/models/…`: the class's field defaults and its `__post_init__`.
Only fields kvtop reads are listed; `num_key_value_heads` / `head_dim` None mean "computed"
(= heads, = hidden ÷ heads).
"""

from __future__ import annotations

from collections.abc import Mapping

DefaultValue = int | bool | str | None
Defaults = Mapping[str, DefaultValue]


def tf(model: str) -> str:
    """Where a table comes from: the transformers file of `model`."""
    return f"transformers v5.24.0 src/transformers/models/{model}/configuration_{model}.py"


# The positions of a family whose config class names no position field: none of the keys vLLM derives the length
# from (max_position_embeddings, n_positions, max_seq_len, seq_length, model_max_length, max_target_positions,
# max_sequence_length, max_seq_length, seq_len) is an attribute of BloomConfig, MambaConfig, FalconMambaConfig or
# Mamba2Config (each class transformers 4.57.6, 5.19.0 and 5.20.2 or vLLM's configs register for a model_type of the
# table, built with no arguments: those four alone have none; remote-code classes, not built, are read from their
# own files). Its 2,048 is no class default but the engines' own figure where no key is found:
# vLLM's `default_max_len` (v0.13.0, v0.33.0 config/model.py _get_and_verify_max_len, which takes a stated
# --max-model-len as it is there) and SGLang's get_context_length fallback (0.5.23 utils/hf_transformers/common.py,
# refusing a --context-length above it). One figure and one sentence for every such family: an entry names both,
# in its defaults and its own_defaults, so the ledger says it as kvtop's nominal figure (ModelSpec.positions_nominal).
NOMINAL_POSITIONS: dict[str, DefaultValue] = {"max_position_embeddings": 2048}
NOMINAL_POSITIONS_SAID = (
    "max_position_embeddings",
    "vLLM's and SGLang's context where a config names no position field (vLLM _get_and_verify_max_len, "
    "SGLang get_context_length)",
)


# LlamaConfig — models/llama/configuration_llama.py (GraniteConfig, models/granite/, has the same numbers)
LLAMA: dict[str, DefaultValue] = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": None,
    "head_dim": None,
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
    "attention_bias": False,
}
# MistralConfig — models/mistral/configuration_mistral.py
MISTRAL: dict[str, DefaultValue] = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": None,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
    "sliding_window": 4096,
}
# MixtralConfig — models/mixtral/configuration_mixtral.py
MIXTRAL: dict[str, DefaultValue] = {
    **MISTRAL,
    "sliding_window": None,
    "num_experts_per_tok": 2,
    "num_local_experts": 8,
}
# Qwen2Config — models/qwen2/configuration_qwen2.py
QWEN2: dict[str, DefaultValue] = {
    "vocab_size": 151936,
    "hidden_size": 4096,
    "intermediate_size": 22016,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": False,
    "use_sliding_window": False,
    "sliding_window": 4096,
    "max_window_layers": 28,
}
# Qwen2VLTextConfig / Qwen2_5_VLTextConfig — models/qwen2_vl/configuration_qwen2_vl.py and
# models/qwen2_5_vl/configuration_qwen2_5_vl.py (the same numbers in both)
QWEN2_VL_TEXT: dict[str, DefaultValue] = {
    **QWEN2,
    "vocab_size": 152064,
    "hidden_size": 8192,
    "intermediate_size": 29568,
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "max_window_layers": 80,
}
# Qwen2MoeConfig — models/qwen2_moe/configuration_qwen2_moe.py
QWEN2_MOE: dict[str, DefaultValue] = {
    **QWEN2,
    "hidden_size": 2048,
    "intermediate_size": 5632,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "decoder_sparse_step": 1,
    "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632,
    "num_experts_per_tok": 4,
    "num_experts": 60,
    "qkv_bias": True,
}
# Qwen3Config — models/qwen3/configuration_qwen3.py
QWEN3: dict[str, DefaultValue] = {**QWEN2, "head_dim": 128, "attention_bias": False}
# Qwen3MoeConfig — models/qwen3_moe/configuration_qwen3_moe.py (no head_dim field: hidden ÷ heads)
QWEN3_MOE: dict[str, DefaultValue] = {
    **QWEN2,
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "num_hidden_layers": 24,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "attention_bias": False,
    "decoder_sparse_step": 1,
    "moe_intermediate_size": 768,
    "num_experts_per_tok": 8,
    "num_experts": 128,
}
# Qwen3NextConfig — models/qwen3_next/configuration_qwen3_next.py (full_attention_interval: the kwarg's
# default in __post_init__)
QWEN3_NEXT: dict[str, DefaultValue] = {
    "vocab_size": 151936,
    "hidden_size": 2048,
    "intermediate_size": 5632,
    "num_hidden_layers": 48,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "decoder_sparse_step": 1,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
    "num_experts_per_tok": 10,
    "num_experts": 512,
    "full_attention_interval": 4,
}
# Qwen3VLTextConfig — models/qwen3_vl/configuration_qwen3_vl.py. It has no sliding window at all (Qwen3-MoE-VL's
# class sets `self.sliding_window = None`), so vLLM's `get_sliding_window` finds none and every layer is full
# attention: Qwen2's 4,096 is not inherited (issue 28).
QWEN3_VL_TEXT: dict[str, DefaultValue] = {
    **QWEN3,
    "max_position_embeddings": 128000,
    "num_key_value_heads": 32,
    "sliding_window": None,
}
# Qwen3VLMoeTextConfig — models/qwen3_vl_moe/configuration_qwen3_vl_moe.py
QWEN3_VL_MOE_TEXT: dict[str, DefaultValue] = {
    **QWEN3_VL_TEXT,
    "hidden_size": 2048,
    "intermediate_size": 5632,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "head_dim": None,
    "tie_word_embeddings": True,
    "decoder_sparse_step": 1,
    "moe_intermediate_size": 1408,
    "num_experts_per_tok": 4,
    "num_experts": 60,
}
# Phi3Config — models/phi3/configuration_phi3.py
PHI3: dict[str, DefaultValue] = {
    "vocab_size": 32064,
    "hidden_size": 3072,
    "intermediate_size": 8192,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": None,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
    "sliding_window": None,
}
# GemmaConfig — models/gemma/configuration_gemma.py
GEMMA: dict[str, DefaultValue] = {
    "vocab_size": 256000,
    "hidden_size": 3072,
    "intermediate_size": 24576,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "head_dim": 256,
    "max_position_embeddings": 8192,
    "tie_word_embeddings": True,
    "attention_bias": False,
}
# Gemma2Config — models/gemma2/configuration_gemma2.py
GEMMA2: dict[str, DefaultValue] = {
    **GEMMA,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "sliding_window": 4096,
}
# Gemma3TextConfig — models/gemma3/configuration_gemma3.py (sliding_window_pattern: the kwarg's default in
# __post_init__)
GEMMA3_TEXT: dict[str, DefaultValue] = {
    **GEMMA2,
    "vocab_size": 262208,
    "max_position_embeddings": 131072,
    "sliding_window_pattern": 6,
}
# Olmo2Config — models/olmo2/configuration_olmo2.py (OlmoConfig, models/olmo/, has the same numbers)
OLMO2: dict[str, DefaultValue] = {**LLAMA, "vocab_size": 50304}
# Olmo3Config — models/olmo3/configuration_olmo3.py
OLMO3: dict[str, DefaultValue] = {**OLMO2, "sliding_window": 4096}
# Llama4TextConfig — models/llama4/configuration_llama4.py
LLAMA4_TEXT: dict[str, DefaultValue] = {
    "vocab_size": 202048,
    "hidden_size": 5120,
    "intermediate_size": 8192,
    "intermediate_size_mlp": 16384,
    "num_hidden_layers": 48,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
    "num_experts_per_tok": 1,
    "num_local_experts": 16,
    "interleave_moe_layer_step": 1,
    "use_qk_norm": True,
    "attention_chunk_size": 8192,
    "no_rope_layer_interval": 4,
    "attention_bias": False,
}
# GptOssConfig — models/gpt_oss/configuration_gpt_oss.py
GPT_OSS: dict[str, DefaultValue] = {
    "num_hidden_layers": 36,
    "num_local_experts": 128,
    "vocab_size": 201088,
    "hidden_size": 2880,
    "intermediate_size": 2880,
    "head_dim": 64,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "sliding_window": 128,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
    "num_experts_per_tok": 4,
    "attention_bias": True,
}
# DeepseekV2Config — models/deepseek_v2/configuration_deepseek_v2.py
DEEPSEEK_V2: dict[str, DefaultValue] = {
    "vocab_size": 102400,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": None,
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "first_k_dense_replace": 0,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "n_routed_experts": 64,
    "n_shared_experts": 2,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "num_experts_per_tok": None,
    "moe_intermediate_size": 1407,
}
# DeepseekV3Config — models/deepseek_v3/configuration_deepseek_v3.py
DEEPSEEK_V3: dict[str, DefaultValue] = {
    "vocab_size": 129280,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_shared_experts": 1,
    "n_routed_experts": 256,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "qk_nope_head_dim": 128,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
    "attention_bias": False,
}
# DeepseekV32Config — models/deepseek_v32/configuration_deepseek_v32.py
DEEPSEEK_V32: dict[str, DefaultValue] = {
    **DEEPSEEK_V3,
    "max_position_embeddings": 163840,
    "index_head_dim": 128,
    "index_n_heads": 64,
}
# NemotronHConfig — models/nemotron_h/configuration_nemotron_h.py (its default layer list is no model's:
# kvtop requires hybrid_override_pattern)
NEMOTRON_H: dict[str, DefaultValue] = {
    "vocab_size": 131072,
    "hidden_size": 4096,
    "tie_word_embeddings": False,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 4096,
    "attention_bias": False,
    "intermediate_size": 21504,
    "ssm_state_size": 128,
    "mamba_num_heads": 128,
    "mamba_head_dim": 64,
    "n_groups": 8,
    "conv_kernel": 4,
    "mamba_ssm_cache_dtype": "float32",
    "n_routed_experts": 8,
    "n_shared_experts": 1,
    "moe_intermediate_size": 7688,
    "moe_shared_expert_intermediate_size": 7688,
    "num_experts_per_tok": 2,
    "num_nextn_predict_layers": 0,
}
# InternLM3Config — models/internlm3/configuration_internlm3.py
INTERNLM3: dict[str, DefaultValue] = {
    "vocab_size": 128512,
    "hidden_size": 4096,
    "intermediate_size": 10240,
    "num_hidden_layers": 48,
    "num_attention_heads": 32,
    "num_key_value_heads": 2,
    "head_dim": 128,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": False,
    "attention_bias": False,
}
# InternLMConfig and InternLM2Config are remote code (trust_remote_code), not in transformers:
# internlm/internlm-7b `configuration_internlm.py` (mirrored in mindspore-lab/mindnlp) and
# internlm/internlm2-7b `configuration_internlm2.py` (copied into sgl-project/sglang
# python/sglang/srt/configs/internvl.py). Both: bias=True, no GQA unless num_key_value_heads is set.
INTERNLM: dict[str, DefaultValue] = {
    "vocab_size": 103168,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": None,
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
    "bias": True,
}

# PanguEmbeddedConfig (remote code) — openPangu-Embedded-7B-V1.1 configuration_openpangu_dense.py
PANGU_EMBEDDED: dict[str, DefaultValue] = {
    "vocab_size": 153376,
    "hidden_size": 4096,
    "intermediate_size": 12800,
    "num_hidden_layers": 34,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": False,
    "bias": True,
}

# Plamo3Config (remote code) — pfnet/plamo-3-nict configuration_plamo3.py, as SGLang ships its copy (sgl-project/sglang
# python/sglang/srt/configs/plamo3.py @ 33918d47): every sliding_window_pattern-th layer full, window_size elsewhere
PLAMO3: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 4,
    "head_dim": 128, "max_position_embeddings": 2048, "window_size": 2048, "sliding_window_pattern": 8,
    "intermediate_size": 13312, "vocab_size": 32000, "tie_word_embeddings": True, "attention_bias": False,
}  # fmt: skip
# FlintConfig — vLLM 0.33.0 vllm/models/flint/configs.py (vLLM's own class: transformers_utils/config.py
# _CONFIG_REGISTRY flint); its layer_types default every layer full, its mlp_only_layers none
FLINT: dict[str, DefaultValue] = {
    "vocab_size": 150144, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 49,
    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "max_position_embeddings": 262144,
    "tie_word_embeddings": False, "attention_bias": False, "sliding_window": 513, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 1024, "num_experts_per_tok": 6, "num_experts": 256,
}  # fmt: skip
# SolarConfig (remote code) — upstage/solar-pro-preview-instruct configuration_solar.py, as LoRAX ships its copy
# (predibase/lorax server/lorax_server/models/custom_modeling/flash_solar_modeling.py @ 52710ea7): Llama's sizes,
# num_key_value_heads None (→ the heads), and a sliding_window of 2,047 that vLLM applies to every layer
SOLAR: dict[str, DefaultValue] = {
    **LLAMA, "sliding_window": 2047, "mlp_bias": False,
}  # fmt: skip
