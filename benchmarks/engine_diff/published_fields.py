"""The published-field patches of the registry sweep's default configs: for each class whose transformers (or
engine) config class leaves out a field a published config.json carries and the engine reads, the fields a checkpoint
states, derived from the default's own (DERIVED_FIELDS); and the sections a default is written without
(NOT_WRITTEN). registry_sweep.py applies both when it writes a default (--defaults); each patch names its source.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from benchmarks.engine_diff.venvs import REPO

HELDOUT = REPO / "tests" / "data" / "configs" / "heldout"

# Fields a real checkpoint's config.json carries and the engine reads that the transformers config class does not
# define, derived from the default's own fields. Glm4MoeLiteConfig (transformers 5.20.2) lays out its dense layers as
# mlp_layer_types; vLLM's glm4_moe_lite.py and SGLang read first_k_dense_replace (GLM-4.7-Flash's config.json: 1),
# the leading "dense" layers.
# Qwen2-VL: the published vision_config names its input channels `in_chans` (Qwen/Qwen2-VL-7B-Instruct config.json:
# 3), which SGLang's qwen2_vl.py vision tower reads; transformers 5.20.2's Qwen2VLVisionConfig names it in_channels.
# (ERNIE-4.5-VL's default needs more published fields than its vision ones: pixel_hidden_size,
# moe_layer_start_index … at the top, which transformers 5.x moved into text_config; Step-3.5's, beside
# moe_layers_enum and use_moe_router_bias, need_fp32_gate and more: both left as they are.)


def _qwen2_vl_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"vision_config": {**data["vision_config"], "in_chans": data["vision_config"]["in_channels"]}}


# GLM-4.1V: transformers' Glm4vTextConfig (5.20.2) has no attention_bias (its Glm4vTextAttention builds q/k/v with
# bias=True), while a published text_config states it: transformers' models/glm4v/convert_glm4v_mgt_weights_to_hf.py
# writes "attention_bias": add_qkv_bias (default True). vLLM's glm4.py reads getattr(config, "attention_bias",
# False), SGLang's glm4.py getattr(…, True): the default states it as a checkpoint does.


def _glm4v_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"text_config": {"attention_bias": True, **data["text_config"]}}


# GLM-4.5V: Glm4vMoeTextConfig's defaults (transformers 5.20.2) are GLM-4.5V's text sizes (4,096 hidden, 46 layers,
# 96 heads, 8 KV heads, 128 experts) but leave head_dim out, which vLLM reads (config.head_dim) and SGLang's
# glm4_moe.py would take as 4,096 // 96 = 42; zai-org/GLM-4.5V's config.json text_config states head_dim 128. It
# also states use_qk_norm (vLLM's glm4_moe.py reads config.use_qk_norm), which transformers'
# models/glm4v_moe/convert_glm4v_moe_mgt_weights_to_hf.py writes as use_qk_norm, default False.


def _glm4v_moe_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"text_config": {"head_dim": 128, "use_qk_norm": False, **data["text_config"]}}


# ChatGLM: vLLM's own ChatGLMConfig (vllm/transformers_utils/configs/chatglm.py) neither sets nor defaults
# `original_rope`, and transformers 5.x leaves an absent tie_word_embeddings unset; every published ChatGLM config.json
# states both (THUDM/chatglm2-6b, chatglm3-6b, glm-4-9b-chat config.json: original_rope true, tie_word_embeddings
# false), and vLLM 0.33.0 chatglm.py reads them (GLMAttention's rope style, ChatGLMForCausalLM's own output_layer).


def _chatglm_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"original_rope": data.get("original_rope", True), "tie_word_embeddings": data.get("tie_word_embeddings", False)}


# Layer patterns a published config.json states beside layer_types / mlp_layer_types, which transformers 5.20.2's
# config classes derive into those lists and do not keep, and SGLang 0.5.23 reads (without them it refuses the
# default). Each is derived from the default's own lists, in the published form:
# - EXAONE-4.0: `sliding_window_pattern` as letters, one period of layer_types (L sliding, G full), "LLLG" in
#   LGAI-EXAONE/EXAONE-4.0-32B config.json; SGLang's exaone4.py Exaone4Attention takes len() of it.
# - EXAONE-MoE: `is_moe_layer`, a bool a layer ([False] + [True] * 47 in LGAI-EXAONE/K-EXAONE-236B-A23B
#   config.json, = mlp_layer_types "sparse"); SGLang's exaone_moe.py indexes config.is_moe_layer.
# - Qwen3.5 / Qwen3.5-MoE (and MiniCPM-V 4.6/4.7, whose text_config is Qwen3.5's): `full_attention_interval`,
#   the period of "full_attention" in layer_types (4 in Qwen/Qwen3.5-27B's and Qwen3.5-35B-A3B's text_config,
#   tests/data/configs/heldout); SGLang's configs/qwen3_next.py layers_block_type reads it.


def _period(layer_types: list[str], full: str) -> int:
    """The layer count of one period of `layer_types`, which ends with its first `full` layer (checked periodic)."""
    period = layer_types.index(full) + 1
    assert all(kind == layer_types[i % period] for i, kind in enumerate(layer_types)), layer_types
    return period


def _exaone4_published(data: dict[str, Any]) -> dict[str, Any]:
    one = data["layer_types"][: _period(data["layer_types"], "full_attention")]
    return {"sliding_window_pattern": "".join("G" if kind == "full_attention" else "L" for kind in one)}


def _exaone_moe_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"is_moe_layer": [kind == "sparse" for kind in data["mlp_layer_types"]]}


def _qwen3_5_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"full_attention_interval": _period(data["layer_types"], "full_attention")}


def _qwen3_5_text_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"text_config": {**data["text_config"], **_qwen3_5_published(data["text_config"])}}


# MiMo-V2-Flash: transformers 5.20.2's MiMoV2FlashConfig defaults are XiaomiMiMo/MiMo-V2-Flash's sizes, its layer
# kinds in layer_types / mlp_layer_types, and its modeling_mimo_v2_flash.py gives the sliding layers twice the KV
# heads and a sink per head. The published config.json states them as vLLM's and SGLang's mimo_v2.py read them:
# hybrid_layer_pattern (1 sliding), moe_layer_freq (1 sparse), swa_num_attention_heads 64, swa_num_key_value_heads
# 8 (= 2 x num_key_value_heads 4), swa_head_dim 192, swa_v_head_dim 128, add_swa_attention_sink_bias true,
# add_full_attention_sink_bias false, layernorm_epsilon 1e-05 (= rms_norm_eps; the published name vLLM reads)
# and sliding_window_size 128 (transformers' class keeps sliding_window = sliding_window_size + 1 = 129)
# (tests/data/configs/heldout/XiaomiMiMo--MiMo-V2-Flash.json).


def _mimo_v2_published(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "hybrid_layer_pattern": [int(kind == "sliding_attention") for kind in data["layer_types"]],
        "moe_layer_freq": [int(kind == "sparse") for kind in data["mlp_layer_types"]],
        "swa_num_attention_heads": data["num_attention_heads"],
        "swa_num_key_value_heads": 2 * data["num_key_value_heads"],
        "swa_head_dim": data["head_dim"],
        "swa_v_head_dim": data["v_head_dim"],
        "add_swa_attention_sink_bias": True,
        "add_full_attention_sink_bias": False,
        "layernorm_epsilon": data["rms_norm_eps"],
        "sliding_window_size": data["sliding_window"] - 1,
    }


# LFM2: transformers 5.20.2's Lfm2Config drops the block/conv widths a published config.json states, which vLLM
# 0.33.0's lfm2.py reads (config.block_dim for the MLP, config.conv_dim for the ShortConv state); each equals
# hidden_size (LiquidAI/LFM2-1.2B config.json: hidden_size, block_dim, conv_dim and conv_dim_out 2048). Its
# default makes every layer attention (full_attn_idxs None -> all), which no checkpoint has and SGLang 0.5.23 cannot
# hold (configs/lfm2.py mamba2_cache_params is None without a conv layer): the default takes the first checkpoints'
# attention layers, full_attn_idxs [2, 5, 8, 10, 12, 14] (LiquidAI/LFM2-350M and LFM2-1.2B config.json), the rest
# ShortConv. LFM2-MoE's Lfm2MoeConfig leaves layer_types None (its own modeling_lfm2_moe.py indexes it): the default
# takes LiquidAI/LFM2-8B-A1B's attention layers, [2, 6, 10, 14, 18, 21] in its config.json's layer_types.
LFM2_ATTENTION_LAYERS = (2, 5, 8, 10, 12, 14)
LFM2_MOE_ATTENTION_LAYERS = (2, 6, 10, 14, 18, 21)


def _lfm2_layer_types(layers: int, attention: tuple[int, ...]) -> list[str]:
    return ["full_attention" if i in attention else "conv" for i in range(layers)]


def _lfm2_published(data: dict[str, Any]) -> dict[str, Any]:
    width = data["hidden_size"]
    return {"block_dim": width, "conv_dim": width, "conv_dim_out": width, "full_attn_idxs": list(LFM2_ATTENTION_LAYERS),
            "layer_types": _lfm2_layer_types(data["num_hidden_layers"], LFM2_ATTENTION_LAYERS)}  # fmt: skip


def _lfm2_moe_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"layer_types": _lfm2_layer_types(data["num_hidden_layers"], LFM2_MOE_ATTENTION_LAYERS)}


def _lfm2_vl_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"text_config": {**data["text_config"], **_lfm2_published(data["text_config"])}}


# Granite 4.0 Vision: Granite4VisionConfig (transformers 5.20.2) defaults deepstack_layer_map and downsample_rate to
# None, which vLLM 0.33.0's granite4_vision.py takes len() of / parses; ibm-granite/granite-4.0-3b-vision's
# config.json states deepstack_layer_map [[-19, 9], [-13, 6], [-7, 3], [-1, 0]] and downsample_rate "4/8".


def _granite4_vision_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"deepstack_layer_map": [[-19, 9], [-13, 6], [-7, 3], [-1, 0]], "downsample_rate": "4/8"}


# AFMoE (Trinity): transformers 5.20.2's AfmoeConfig has no router fields, which vLLM 0.33.0's afmoe.py reads
# (config.score_func, route_norm, n_group, topk_group); arcee-ai/Trinity-Mini's and Trinity-Nano's config.json state
# score_func "sigmoid", route_norm true, n_group 1, topk_group 1.


def _afmoe_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"score_func": "sigmoid", "route_norm": True, "n_group": 1, "topk_group": 1}


# Kimi-Linear: transformers 5.20.2's KimiLinearConfig lays the layers out as layer_types / mlp_layer_types and the
# KDA sizes as linear_* fields; vLLM 0.33.0 (transformers_utils/configs/kimi_linear.py) and SGLang 0.5.23
# (configs/kimi_linear.py) ship their own KimiLinearConfig, which reads a published config.json's form:
# linear_attn_config {kda_layers, full_attn_layers (1-based), num_heads, head_dim, short_conv_kernel_size},
# first_k_dense_replace, moe_layer_freq 1, and mla_use_nope true (the engines' MLA is NoPE-only; vLLM asserts it).
# moonshotai/Kimi-Linear-48B-A3B-Instruct config.json states them so; each is derived from the default's own lists.


def _kimi_linear_published(data: dict[str, Any]) -> dict[str, Any]:
    kinds = data["layer_types"]
    return {
        "linear_attn_config": {
            "kda_layers": [i + 1 for i, kind in enumerate(kinds) if kind == "linear_attention"],
            "full_attn_layers": [i + 1 for i, kind in enumerate(kinds) if kind == "full_attention"],
            "num_heads": data["linear_num_heads"],
            "head_dim": data["linear_head_dim"],
            "short_conv_kernel_size": data["linear_conv_kernel_dim"],
        },
        "first_k_dense_replace": next((i for i, kind in enumerate(data["mlp_layer_types"]) if kind != "dense"), 0),
        "moe_layer_freq": 1,
        "mla_use_nope": True,
    }


# Step-3.5 (Step3p5ForCausalLM): vLLM 0.33.0 reads it through transformers' Step3p7TextConfig (its sizes the 288-expert
# Flash's; layer_types all full, no router fields), SGLang 0.5.23 through its own Step3p5Config (configs/step3p5.py:
# moe_layers_enum a tuple its model `.split(",")`s, sliding layers' heads from attention_other_setting). A stand-in
# derived from the real stepfun-ai--Step-3.7-Flash config (tests/data/configs/heldout, AIC's, trimmed): its
# layer_types (one full layer, three sliding), sliding_window 512, use_moe_router_bias true and
# moe_router_scaling_factor 3.0; need_fp32_gate true, which vLLM's step3p5.py asserts ("Router logits must use FP32");
# the published form's moe_layers_enum string (the default's own sparse layers) and attention_other_setting (the
# sliding layers' heads as the default states them: num_sliding_attention_heads, num_key_value_heads, head_dim);
# use_head_wise_attn_gate false (SGLang reads it; the trimmed config does not say, so the stand-in leaves it off);
# norm_expert_weight true (vLLM reads it; SGLang's Step3p5Config default); rope_theta and partial_rotary_factors in
# the published per-layer list form SGLang indexes, each layer the default's (theta 10,000, whole rotary), and
# swiglu_limits / swiglu_limits_shared 0.0 a layer (no clamp; SGLang indexes them, vLLM reads `or []`): no weight.
STEP_3P7_FLASH = HELDOUT / "stepfun-ai--Step-3.7-Flash.json"


def _step3p5_published(data: dict[str, Any]) -> dict[str, Any]:
    real = json.loads(STEP_3P7_FLASH.read_text())
    sparse = [str(i) for i, kind in enumerate(data["mlp_layer_types"]) if kind == "sparse"]
    return {
        **{key: real[key] for key in ("layer_types", "sliding_window", "use_moe_router_bias",
                                      "moe_router_scaling_factor")},
        "need_fp32_gate": True,
        "moe_layers_enum": ",".join(sparse),
        "attention_other_setting": {"attention_type": "sliding_attention",
                                    "num_attention_heads": data["num_sliding_attention_heads"],
                                    "num_attention_groups": data["num_key_value_heads"], "head_dim": data["head_dim"]},
        "use_head_wise_attn_gate": False,
        "norm_expert_weight": True,
        "rope_theta": [data["rope_parameters"]["full_attention"]["rope_theta"]] * len(real["layer_types"]),
        "partial_rotary_factors": [1.0] * len(real["layer_types"]),
        "swiglu_limits": [0.0] * len(real["layer_types"]),
        "swiglu_limits_shared": [0.0] * len(real["layer_types"]),
    }  # fmt: skip


# LongCat-Flash: transformers 5.20.2's LongcatFlashConfig drops fields the checkpoint's own configuration class
# (meituan-longcat/LongCat-Flash-Chat configuration_longcat_flash.py, which SGLang 0.5.23 ships as
# configs/longcat_flash.py) defaults and keeps: mla_scale_q_lora / mla_scale_kv_lora True (vLLM 0.33.0
# longcat_flash.py reads both) and zero_expert_type "identity" (vLLM reads it). Neither holds a weight: the LoRA
# norms are scaled in place, zero experts are identities. (SGLang 0.5.23 fails on any LongCat-Flash config without
# a rope_theta in rope_scaling: sglang_config_failures.py.)


def _longcat_flash_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"mla_scale_q_lora": True, "mla_scale_kv_lora": True, "zero_expert_type": "identity"}


# Step-3.7 (Step3p7ForConditionalGeneration): its text_config is Step-3.5's (transformers 5.20.2 Step3p7TextConfig;
# stepfun-ai/Step-3.7-Flash's text_config model_type step3p5), which SGLang 0.5.23 reads through its models/step3p5.py
# (`config.moe_layers_enum.split(",")`): the same published form as Step3p5ForCausalLM's above.


def _step3p7_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"text_config": {**data["text_config"], **_step3p5_published(data["text_config"])}}


# Qwen3-Omni-MoE: transformers 5.20.2's Qwen3OmniMoeVisionEncoderConfig has no image_size nor
# apply_vit_abs_pos_embed, which vLLM 0.33.0 qwen3_omni_moe_thinker.py Qwen3Omni_VisionTransformer reads (its
# position table is (image_size ÷ patch_size)² rows); Qwen/Qwen3-Omni-30B-A3B-Instruct's config.json
# thinker_config.vision_config states image_size 768 (48² = its num_position_embeddings 2,304) and
# apply_vit_abs_pos_embed true; its text_config states tie_word_embeddings false, which Qwen3OmniMoeTextConfig does
# not define and vLLM's thinker reads (`self.config.tie_word_embeddings`).


def _qwen3_omni_published(data: dict[str, Any]) -> dict[str, Any]:
    thinker = data["thinker_config"]
    vision = {**thinker["vision_config"], "image_size": 768, "apply_vit_abs_pos_embed": True}
    text = {**thinker["text_config"], "tie_word_embeddings": False}
    return {"thinker_config": {**thinker, "vision_config": vision, "text_config": text}}


# Step-3: vLLM 0.33.0's Step3TextConfig defaults moe_layers_enum to a tuple (4 … 59), which its step3_text.py
# Step3TextDecoderLayer splits as a string (moe_layers_enum.strip().split(",")): the same layers, written as that
# string (a config with the tuple cannot be built).


def _step3_text_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"moe_layers_enum": ",".join(str(i) for i in data["moe_layers_enum"])}


def _step3_vl_published(data: dict[str, Any]) -> dict[str, Any]:
    """… and, in Step3VLConfig's text_config, the class's own `architectures` (Step3TextConfig.architectures, which
    its to_dict writes as None: vLLM's init_vllm_registered_model then finds "No model architectures") and
    `pad_token_id` None, which SGLang 0.5.23's Step3TextModel reads (config.pad_token_id) and transformers 5's
    PreTrainedConfig no longer defines (4.x's set it None); without it SGLang fails (sglang_config_failures.py)."""
    text = {**data["text_config"], **_step3_text_published(data["text_config"])}
    return {"text_config": {**text, "architectures": ["Step3TextForCausalLM"], "pad_token_id": None}}


# Nemotron (NemotronForCausalLM): transformers 5.20.2's NemotronConfig defaults num_key_value_heads to None and never
# fills it (its __post_init__ derives head_dim only), which vLLM 0.33.0's ModelConfig takes as total_num_kv_heads
# ("Input should be a valid integer"); every published Nemotron config.json states it. The class's default geometry
# (32 layers, hidden 6144, 48 heads, vocabulary 256,000, 4,096 positions) is Nemotron-4 15B's, whose report (arXiv
# 2402.16819, Table 1) gives 8 KV heads (GQA).
NEMOTRON_KV_HEADS = 8


def _nemotron_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"num_key_value_heads": NEMOTRON_KV_HEADS}


# Cohere Compass (CohereCompassForConditionalGeneration): vLLM 0.33.0's CohereCompassForCausalLM asserts
# config.tie_word_embeddings (cohere_compass.py:2326), which under transformers 5 it reads off the composite (its
# with_hf_config takes the top level's tie); transformers 5.20.2's CohereCompassConfig defaults the top level to False
# where its text_config (CohereCompassTextConfig) defaults to True. A checkpoint vLLM serves ties them, as every
# Cohere text model does: the default states it at the top level too.


def _cohere_compass_published(data: dict[str, Any]) -> dict[str, Any]:
    return {"tie_word_embeddings": True}


DERIVED_FIELDS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "Qwen3OmniMoeForConditionalGeneration": _qwen3_omni_published,
    "Step3TextForCausalLM": _step3_text_published,
    "Step3VLForConditionalGeneration": _step3_vl_published,
    "NemotronForCausalLM": _nemotron_published,
    "CohereCompassForConditionalGeneration": _cohere_compass_published,
    "Step3p7ForConditionalGeneration": _step3p7_published,
    "LongcatFlashForCausalLM": _longcat_flash_published,
    "Step3p5ForCausalLM": _step3p5_published,
    "MiMoV2ForCausalLM": _mimo_v2_published,
    "AfmoeForCausalLM": _afmoe_published,
    "KimiLinearForCausalLM": _kimi_linear_published,
    "Lfm2ForCausalLM": _lfm2_published,
    "Lfm2MoeForCausalLM": _lfm2_moe_published,
    "Lfm2VlForConditionalGeneration": _lfm2_vl_published,
    "Granite4VisionForConditionalGeneration": _granite4_vision_published,
    "Exaone4ForCausalLM": _exaone4_published,
    "ExaoneMoEForCausalLM": _exaone_moe_published,
    "ExaoneMoeForCausalLM": _exaone_moe_published,
    "Qwen3_5ForCausalLM": _qwen3_5_published,
    "Qwen3_5MoeForCausalLM": _qwen3_5_published,
    "MiniCPMV4_6ForConditionalGeneration": _qwen3_5_text_published,
    "MiniCPMV4_7ForConditionalGeneration": _qwen3_5_text_published,
    "ChatGLMForConditionalGeneration": _chatglm_published,
    "Glm4vMoeForConditionalGeneration": _glm4v_moe_published,
    "Glm4vForConditionalGeneration": _glm4v_published,
    "Qwen2VLForConditionalGeneration": _qwen2_vl_published,
    "Glm4MoeLiteForCausalLM": lambda data: {
        "first_k_dense_replace": next(
            (i for i, kind in enumerate(data["mlp_layer_types"]) if kind != "dense"),
            len(data["mlp_layer_types"]),
        )
    },
}
# Moondream3Config (vLLM configs/moondream3.py) builds text_config / vision_config from the checkpoint's `config`
# object ({"text": …, "vision": …}) and its to_dict writes them back as plain dicts, which would replace the built
# ones: the default is written as a checkpoint has it, without them.
NOT_WRITTEN: dict[str, tuple[str, ...]] = {
    "HfMoondream": ("text_config", "vision_config"),
    "Moondream3ForCausalLM": ("text_config", "vision_config"),
}
