"""Every vision tower kvtop describes, as data: one `Tower` per family (its config class, its source, its class
defaults and the kind `towers.read_tower` reads it with), and the lookup tables: `BY_OUTER_TYPE`, the tower each
outer config model_type builds, `AUDIO_BY_OUTER_TYPE` (the speech and omni towers among them) and
`TOWERS_BY_CLASS`, the tower a class builds whatever its model_type. The audio-only towers with no family module
of their own are in towers_catalog_audio.py. The architecture tables name these; `towers.py` reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from kvtop.domain.architectures import (
    towers_bailing,
    towers_dasheng,
    towers_deepseek_ocr,
    towers_dots_vlm,
    towers_ernie45_vl,
    towers_eva2clip,
    towers_fireredasr2,
    towers_funasr,
    towers_funaudiochat,
    towers_gemma3n,
    towers_isaac,
    towers_janus,
    towers_kanana,
    towers_keye,
    towers_kimi_audio,
    towers_mimo,
    towers_mistral_format,
    towers_mllama,
    towers_molmo,
    towers_nemotron_vl,
    towers_nvila,
    towers_nvlm,
    towers_onevision2,
    towers_ovis2_5,
    towers_phi4_siglip,
    towers_phi4mm,
    towers_points,
    towers_radio,
    towers_step,
    towers_step3_vl,
    towers_ultravox,
    towers_voxtral,
)
from kvtop.domain.architectures import towers_catalog_audio as audio
from kvtop.domain.architectures.towers_fields import Tower

_QWEN3_VISION = {
    "depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "in_channels": 3, "patch_size": 16,
    "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 3584, "num_position_embeddings": 2304,
}  # fmt: skip

# Qwen2-VL: the Qwen ViT with LayerNorms (weight, bias), an unbiased Conv3d patch, no position table, a plain
# fc1/fc2 MLP with biases and one merger (vLLM 0.33.0 / SGLang 0.5.23 qwen2_vl.py Qwen2VisionTransformer: qkv,
# proj, fc1, fc2 and the merger's two linears Column/Row-parallel, split over TP in both)
QWEN2_VL = Tower(
    "Qwen2VLVisionConfig", "transformers models/qwen2_vl (Qwen2VisionTransformerPretrainedModel)",
    {"depth": 32, "in_channels": 3, "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2},
    kind="qwen2_vl", patch_bias=False, position_table=False, absent_default={},
)  # fmt: skip
# GLM-4.1V / GLM-4.5V (towers_glm.py): Glm4vVisionConfig's defaults where vision_config leaves a field out
GLM4V = Tower(
    "Glm4vVisionConfig", "transformers models/glm4v (Glm4vVisionModel); vLLM 0.33.0 glm4_1v.py, SGLang 0.5.23 glm4v.py",
    {"depth": 24, "hidden_size": 1536, "intermediate_size": 13696, "out_hidden_size": 4096, "in_channels": 3,
     "image_size": 336, "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2, "num_heads": 12},
    kind="glm4v", absent_default={},
)  # fmt: skip
QWEN2_5_VL = Tower(
    "Qwen2_5_VLVisionConfig", "transformers models/qwen2_5_vl (Qwen2_5_VisionTransformerPretrainedModel)",
    {"depth": 32, "hidden_size": 3584, "intermediate_size": 3420, "in_channels": 3, "patch_size": 14,
     "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 3584},
    norm_bias=False, patch_bias=False, position_table=False, mlp_gated=True, absent_default={},
)  # fmt: skip
# EXAONE-4.5's vision transformer: Qwen2.5-VL's (RMSNorms, an unbiased Conv3d patch, a biased gated MLP, one
# merger) with grouped KV heads (vLLM 0.33.0 exaone4_5.py EXAONE4_5_VisionAttention: QKVParallelLinear of num_heads and
# num_key_value_heads, head size width ÷ num_heads, biased; Exaone4GatedMLP biased); Exaone4_5_VisionConfig's defaults
EXAONE4_5 = Tower(
    "Exaone4_5_VisionConfig", "transformers models/exaone4_5; vLLM 0.33.0 exaone4_5.py, qwen2_5_vl.py",
    {"depth": 32, "hidden_size": 3584, "intermediate_size": 3420, "num_heads": 16, "num_key_value_heads": 8,
     "in_channels": 3, "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 3584},
    norm_bias=False, patch_bias=False, position_table=False, mlp_gated=True, grouped_kv=True,
    absent_default={},
)  # fmt: skip
# HyperCLOVA X SEED Think: Qwen2.5-VL's ViT (HyperCLOVAXVisionV2Config's vision default) and mm_projector, a biased
# nn.Linear out_hidden_size → the text width, replicated (vLLM 0.33.0 hyperclovax_vision_v2.py HCXVisionV2ForCausalLM)
HCX_VISION_V2 = replace(QWEN2_5_VL, source="transformers models/hyperclovax_vision_v2; vLLM 0.33.0 "
                        "hyperclovax_vision_v2.py", text_projector=True)  # fmt: skip
QWEN3_VL = Tower(
    "Qwen3VLVisionConfig", "transformers models/qwen3_vl (Qwen3VLVisionModel)",
    {**_QWEN3_VISION, "deepstack_visual_indexes": [8, 16, 24]}, deepstack=True,
)  # fmt: skip
QWEN3_VL_MOE = Tower(
    "Qwen3VLMoeVisionConfig", "transformers models/qwen3_vl_moe (Qwen3VLMoeVisionModel)",
    {**_QWEN3_VISION, "deepstack_visual_indexes": [8, 16, 24]}, deepstack=True,
)  # fmt: skip
# Ling-3-VL (towers_bailing): Qwen3-VL-MoE's ViT sizes, the class defaults of both engines' vision configs (vLLM
# 0.33.0 BailingMoeV3VisionConfig, SGLang 0.5.23 Qwen3VLMoeVisionConfig); its merger and linear_proj are the kind's
BAILING_V3_VL = Tower("BailingMoeV3VisionConfig", towers_bailing.SOURCE, _QWEN3_VISION, kind="bailing_v3_vl")
# Cohere Compass: vLLM 0.33.0 cohere_compass.py Cohere_VisionTransformer is Qwen3-VL's vision transformer module for
# module (a biased Conv3d patch, a position table, LayerNorms with biases, biased qkv / proj / fc1 / fc2, a merger and
# one postshuffle-norm merger per deepstack index, split over TP alike); CohereCompassVisionConfig's defaults are
# Qwen3-VL's, deepstack_visual_indexes (8, 16, 24) (transformers 5.20.2 configuration_cohere_compass.py)
COHERE_COMPASS_VISION = Tower(
    "CohereCompassVisionConfig", "transformers 5.20.2 models/cohere_compass; vLLM 0.33.0 cohere_compass.py",
    {**_QWEN3_VISION, "deepstack_visual_indexes": [8, 16, 24]}, deepstack=True, absent_default={},
)  # fmt: skip
# Qwen3.5: the engines build Qwen3-VL's vision transformer, one deepstack merger per deepstack_visual_indexes entry a
# vision_config states (vLLM 0.33.0 qwen3_5.py: use_deepstack = hasattr(vision_config, "deepstack_visual_indexes"),
# Qwen3_VisionTransformer; SGLang 0.5.23 models/qwen3_5.py and interns2preview.py, qwen3_vl.py's
# deepstack_merger_list). Published Qwen3.5 checkpoints state [] (none); SGLang's InternS2PreviewConfig default
# states [8, 16, 24]. A vision_config leaving it out: none (transformers' Qwen3_5VisionConfig has no such field, as
# vLLM reads it); SGLang's own Qwen3_5VisionConfig (a Qwen3VLVisionConfig) would default three: not read.
QWEN3_5 = Tower(
    "Qwen3_5VisionConfig", "transformers models/qwen3_5 (Qwen3_5VisionModel)", _QWEN3_VISION, deepstack=True
)
QWEN3_5_MOE = Tower(
    "Qwen3_5MoeVisionConfig", "transformers models/qwen3_5_moe (Qwen3_5MoeVisionModel)", _QWEN3_VISION,
    deepstack=True,
)
# Intern-S1-Pro: vLLM 0.33.0 interns1_pro.py builds Qwen3-VL's vision transformer (Qwen3_VisionTransformer);
# InternS1ProVisionConfig's defaults are Qwen3-VL's; no deepstack_visual_indexes field (none where not stated)
INTERNS1_PRO = Tower("InternS1ProVisionConfig", "internlm/Intern-S1-Pro configuration_interns1_pro.py; vLLM 0.33.0 "
                     "interns1_pro.py (Qwen3_VisionTransformer)", _QWEN3_VISION, deepstack=True)  # fmt: skip
# Gemma-3's SigLIP tower: SiglipVisionConfig's class defaults where vision_config leaves a field out
GEMMA3_SIGLIP = Tower(
    "SiglipVisionConfig", "transformers models/siglip (SiglipVisionModel), models/gemma3 (Gemma3MultiModalProjector)",
    {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3, "image_size": 224,
     "patch_size": 16},
    kind="siglip_gemma3",
)  # fmt: skip
PIXTRAL_MISTRAL3 = Tower(
    "PixtralVisionConfig", "transformers models/pixtral (PixtralVisionModel), models/mistral3 (Mistral3MultiModalProjector)",
    {"depth": 24, "hidden_size": 1024, "intermediate_size": 4096, "in_channels": 3, "patch_size": 16},
    kind="pixtral_mistral3",
)  # fmt: skip

# llava's (llava-next's, llava-onevision's) CLIP or SigLIP and projector: CLIPVisionConfig's or SiglipVisionConfig's
# class defaults where vision_config leaves a field out; the outer class's vision_feature_layer default
_LLAVA_VISION = {
    "clip_vision_model": {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3,
                          "image_size": 224, "patch_size": 32},
    "siglip_vision_model": {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3,
                            "image_size": 224, "patch_size": 16},
}  # fmt: skip
# llava over Pixtral (mistral-community/pixtral-12b): PixtralVisionConfig's class defaults (transformers
# models/pixtral), the tower vLLM llava.py builds for it (PixtralHFVisionModel, towers_vit.llava_pixtral)
_LLAVA_PIXTRAL = {"pixtral": {"depth": 24, "hidden_size": 1024, "intermediate_size": 4096, "in_channels": 3,
                              "image_size": 1024, "patch_size": 16}}  # fmt: skip
# `absent_default` (towers_absent): the section an outer config class fills in where the file has none (transformers
# 5.20.2 sub_configs_defaults; the registry default configs, tests/data/engine_diff/registry/configs, state it, and
# each one read less its section gives the bytes read with it: tests/domain/test_towers_absent.py). `{}`: the vision
# config class's defaults (Qwen2_5_VLConfig: SubConfigSpec(config_class=Qwen2_5_VLVisionConfig)); otherwise the
# sizes it states: LlavaNextVideoConfig's CLIP-L/336, Cohere2VisionConfig's and PaliGemmaConfig's SigLIPs,
# Qwen3OmniMoeVisionEncoderConfig's image_size 768 (the position table vLLM sizes by it: 48² = 2304 rows)
_CLIP_L336 = {"model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096, "patch_size": 14,
              "image_size": 336, "num_hidden_layers": 24, "num_attention_heads": 16}  # fmt: skip
_COHERE2_VISION_BUILT = {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 3072,
                         "image_size": 512, "patch_size": 16, "num_hidden_layers": 27, "num_attention_heads": 12}  # fmt: skip
_PALIGEMMA_BUILT = {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4096,
                    "image_size": 224, "patch_size": 14, "num_hidden_layers": 27, "num_attention_heads": 16,
                    "vision_use_head": False}  # fmt: skip
_LLAVA_SOURCE = "transformers models/clip, models/siglip (CLIPVisionModel, SiglipVisionModel), models/{}"
LLAVA_CLIP = Tower(
    "CLIPVisionConfig",
    _LLAVA_SOURCE.format("llava (LlavaMultiModalProjector)") + "; over Pixtral: models/pixtral, vLLM llava.py, pixtral.py",
    {"vision_feature_layer": -2}, kind="llava", vision_model_types=frozenset(_LLAVA_VISION) | {"pixtral"},
    vision_defaults={**_LLAVA_VISION, **_LLAVA_PIXTRAL},
)  # fmt: skip
LLAVA_NEXT = Tower(
    "CLIPVisionConfig", _LLAVA_SOURCE.format("llava_next (image_newline, LlavaNextMultiModalProjector)"),
    {"vision_feature_layer": -2}, kind="llava", vision_model_types=frozenset(_LLAVA_VISION),
    vision_defaults=_LLAVA_VISION,
)  # fmt: skip
LLAVA_NEXT_VIDEO = Tower(
    "CLIPVisionConfig", _LLAVA_SOURCE.format("llava_next_video (LlavaNextVideoMultiModalProjector)"),
    {"vision_feature_layer": -2}, kind="llava", vision_model_types=frozenset(_LLAVA_VISION),
    vision_defaults=_LLAVA_VISION, absent_default=_CLIP_L336,
)  # fmt: skip
LLAVA_ONEVISION = Tower(
    "SiglipVisionConfig", _LLAVA_SOURCE.format("llava_onevision (image_newline, LlavaOnevisionMultiModalProjector)"),
    {"vision_feature_layer": -1}, kind="llava", vision_model_types=frozenset(_LLAVA_VISION),
    vision_defaults=_LLAVA_VISION,
)  # fmt: skip
# Llama-4: vLLM 0.33.0 mllama4.py builds vision_model and multi_modal_projector whatever the config says, from
# Llama4VisionConfig's defaults where it has no vision_config (meta-built for AIC's Llama-4-Maverick config, which
# has none: 831,713,280 + 78,643,200 B at TP 1)
LLAMA4_VISION = Tower(
    "Llama4VisionConfig", "transformers models/llama4 (Llama4VisionModel, Llama4MultiModalProjector)",
    {"depth": 34, "hidden_size": 768, "intermediate_size": 5632, "in_channels": 3, "image_size": 448,
     "patch_size": 14, "vision_output_dim": 7680, "projector_input_dim": 4096, "projector_output_dim": 4096,
     "multi_modal_projector_bias": False},
    kind="llama4", absent_default={},
)  # fmt: skip
GEMMA4_VISION = Tower(
    "Gemma4VisionConfig", "transformers models/gemma4 (Gemma4VisionModel, Gemma4AudioModel, Gemma4MultimodalEmbedder)",
    {"depth": 16, "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12,
     "num_key_value_heads": 12, "head_dim": 64, "patch_size": 16, "position_embedding_size": 10240},
    kind="gemma4", audio_counted=True,  # an `audio_config`'s encoder counted too (towers_gemma4_audio)
)  # fmt: skip

# InternViT-6B's InternVisionConfig defaults (remote code configuration_intern_vit.py; qkv_bias False,
# qk_normalization True and norm_type rms_norm are InternVitFields' defaults) and InternVL's mlp1
INTERNVL_CHAT = Tower(
    "InternVisionConfig", "InternVL remote code (InternVisionModel, InternVLChatModel.mlp1); vLLM intern_vit.py",
    {"depth": 48, "hidden_size": 3200, "intermediate_size": 12800, "num_attention_heads": 25, "in_channels": 3,
     "image_size": 224, "patch_size": 14},
    kind="intern_vit",
)  # fmt: skip

# InternVL's transformers format: InternVLVisionConfig's class defaults (InternViT-300M)
INTERNVL_HF = Tower(
    "InternVLVisionConfig", "transformers models/internvl (InternVLVisionModel, InternVLMultiModalProjector); vLLM interns1.py",
    {"depth": 24, "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16, "in_channels": 3},
    kind="intern_vl_hf",
)  # fmt: skip

# Kimi-K2.5's MoonViT3d (Kimi_K25VisionConfig's defaults: towers_moon.MoonVitFields)
KIMI_K25 = Tower(
    "Kimi_K25VisionConfig", "transformers models/kimi_k25 (Kimi_K25VisionModel, projector); vLLM kimi_k25_vit.py",
    kind="moon_vit",
)  # fmt: skip

# Kimi-VL's MoonViT (MoonViTConfig's defaults: the same as towers_moon.MoonVitFields'): vLLM moonvit.py builds the
# layers MoonViT3d has (a biased Conv2d patch, a height × width × width table, blocks of two LayerNorms, wqkv/wo
# and fc0/fc1 biased, a final LayerNorm; QKVParallelLinear, Row, Column, Row: split over TP, the heads dividing
# by it or vLLM stops) and kimi_vl.py's KimiVLMultiModalProjector the same patch merger (ReplicatedLinear, whole);
# SGLang 0.5.23 kimi_vl_moonvit.py splits the attention (VisionAttention) and the block MLP alike
# (MoonVitEncoderLayer builds MLP2 with use_tensor_parallel = not use_data_parallel: Column/RowParallelLinear),
# unlike its kimi_k25.py (MLP2 whole): meta-built at TP 2, 422,452,080 B of vision_tower per rank in both engines
KIMI_VL = Tower(
    "MoonViTConfig", "Kimi-VL remote code (MoonVitPretrainedModel, KimiVLMultiModalProjector); vLLM moonvit.py, kimi_vl.py",
    kind="moon_vit", vision_model_types=frozenset({"moonvit"}), block_mlp_split=True,
)  # fmt: skip

# Kimi-K3's MoonViT and patchmergerv2 (KimiK3VisionConfig's defaults: towers_moon.KimiK3VisionFields)
KIMI_K3 = Tower(
    "KimiK3VisionConfig", "vLLM 0.33.0 configs/kimi_k3.py, kimi_k3/nvidia/model.py, kimi_k25_vit.py; SGLang 0.5.23 kimi_k3_vl.py",
    kind="kimi_k3",
)  # fmt: skip

# Phi-3-vision / Phi-3.5-vision: vLLM phi3v.py's CLIP ViT-L/14-336, HD separators and img_projection (towers_phi)
PHI3_V = Tower(
    "CLIPVisionConfig", "Phi-3.5-vision remote code (Phi3ImageEmbedding); vLLM phi3v.py (Phi3HDImageEmbedding), clip.py",
    kind="phi3v", section="img_processor",
)  # fmt: skip
# Phi-4-multimodal: SigLIP-so400m-patch14-448 as the engines' constant, its projection, and the conformer audio
# encoder of `audio_processor` with its projections (towers_phi4mm), read from the `embd_layer` section
PHI4MM = Tower(
    towers_phi4mm.CONFIG_CLASS, towers_phi4mm.SOURCE, kind="phi4mm", section="embd_layer", audio_counted=True,
    words=towers_phi4mm.WORDS, filled_vision=(towers_phi4mm.LAYERS_BUILT, towers_phi4mm.SIGLIP_448["hidden_size"]),
    audio_elsewhere=True,
)  # fmt: skip
# ERNIE-4.5-VL (the checkpoint's own format): the DFNRope vision transformer and the resampler (towers_ernie45_vl)
ERNIE45_VL = Tower(
    towers_ernie45_vl.CONFIG_CLASS, towers_ernie45_vl.SOURCE, kind="ernie45_vl", words=towers_ernie45_vl.WORDS
)
# Molmo: no vision section in the file; vLLM builds its VisionBackboneConfig() constant (CLIP ViT-L/14-336 to 23
# layers), the pooling attention and the projector the language model's sizes (towers_molmo)
MOLMO = Tower(
    towers_molmo.CONFIG_CLASS, towers_molmo.SOURCE, kind="molmo", section="vision_backbone",
    absent_default=towers_molmo.VIT, filled_vision=(towers_molmo.VIT["layers"], towers_molmo.VIT["width"]),
)  # fmt: skip

# MiniMax-M3's vision config is a CLIPVisionConfig (its class defaults where a field is absent)
MINIMAX_M3 = Tower(
    "CLIPVisionConfig", "transformers models/minimax_m3_vl (MiniMaxM3VL vision model); vLLM minimax_m3/common/vision_tower.py",
    {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3, "patch_size": 32},
    kind="minimax_vl",
)  # fmt: skip

# MiniCPM-V 4.6 and 4.7 over Qwen3.5's text entry: vLLM 0.33.0 minicpmv4_6.py, minicpmv4_7.py (towers_minicpm)
_MINICPM_SOURCE = "transformers models/{} (vision config); vLLM 0.33.0 {}.py, idefics2_vision_model.py"
MINICPM_V4_6 = Tower(
    "MiniCPMV4_6VisionConfig", _MINICPM_SOURCE.format("minicpmv4_6", "minicpmv4_6"), kind="minicpm_v",
    drop_last_layer=True, absent_default={},
)  # fmt: skip
MINICPM_V4_7 = Tower(
    "MiniCPMV4_7VisionConfig", _MINICPM_SOURCE.format("minicpmv4_7", "minicpmv4_7"), kind="minicpm_v",
    absent_default={},
)
# MiniCPM-o 2.6's SigLIP, resampler, Whisper encoder and audio projection (towers_minicpm.minicpm_o; the entry's
# tower: SiglipVisionConfig's and WhisperConfig's class defaults where a section leaves a field out)
MINICPM_O2_6 = Tower(
    "SiglipVisionConfig", "openbmb/MiniCPM-o-2_6 configuration_minicpm.py; vLLM 0.33.0 minicpmo.py, minicpmv.py "
    "(MiniCPMV2_6, Resampler2_5); SGLang 0.5.23 minicpmo.py", kind="minicpm_o", audio_counted=True,
)  # fmt: skip
# MiniCPM-V 2.6's SigLIP and resampler (towers_minicpm.minicpm_v2_6; SiglipVisionConfig's class defaults where the
# section leaves a field out)
MINICPM_V2_6 = Tower(
    "SiglipVisionConfig", "openbmb/MiniCPM-V-2_6 configuration_minicpm.py; vLLM 0.33.0 and SGLang 0.5.23 minicpmv.py "
    "(MiniCPMV2_6, Resampler2_5)", kind="minicpm_v2_6",
)  # fmt: skip

# Step-3.7's PerceptionEncoder and vit_large_projector as SGLang 0.5.23 builds them (towers_step; the entry's tower)
STEP3P7 = Tower("Step3p7VisionEncoderConfig", towers_step.SOURCE, kind="step3p7", absent_default={})
# Step-3-VL: a CLIP-style ViT, two Conv2d downsamplers and vit_large_projector (towers_step3_vl); without a
# vision_config Step3VLConfig builds Step3VisionEncoderConfig() (vLLM 0.33.0 transformers_utils/configs/step3_vl.py,
# SGLang 0.5.23 srt/configs/step3_vl.py: `if vision_config is None`), so the class defaults size it
STEP3_VL = Tower(towers_step3_vl.CONFIG_CLASS, towers_step3_vl.SOURCE, kind="step3_vl",
                 absent_default={})  # fmt: skip

# Muse-Glimmer's vision encoder, adapter and projection: vLLM 0.33.0 / SGLang 0.5.23 models/muse_glimmer.py
MUSE_GLIMMER = Tower(
    "MuseGlimmerVisionConfig",
    "transformers models/muse_glimmer (vision config); vLLM 0.33.0 / SGLang 0.5.23 models/muse_glimmer.py",
    kind="muse_glimmer",
)  # fmt: skip

# PaliGemma's SigLIP and PaliGemmaMultiModalProjector (vLLM paligemma.py builds SiglipVisionModel whatever the
# section's model_type; SiglipVisionConfig's class defaults where vision_config leaves a field out: transformers
# builds the dict as a SiglipVisionConfig)
PALIGEMMA_SIGLIP = Tower(
    "SiglipVisionConfig", "transformers models/siglip, models/paligemma; vLLM 0.33.0 paligemma.py, siglip.py",
    GEMMA3_SIGLIP.defaults, kind="siglip_paligemma", absent_default=_PALIGEMMA_BUILT,
)  # fmt: skip

# Idefics3's and SmolVLM's SigLIP (Idefics3VisionConfig's / SmolVLMVisionConfig's class defaults, the same) and
# connector (vLLM 0.33.0 idefics3.py, smolvlm.py)
IDEFICS3_VISION = Tower(
    "Idefics3VisionConfig", "transformers models/idefics3, models/smolvlm; vLLM 0.33.0 idefics3.py, idefics2_vision_model.py",
    {"depth": 12, "hidden_size": 1152, "intermediate_size": 3072, "in_channels": 3, "image_size": 224,
     "patch_size": 32},
    kind="idefics3", absent_default={},
)  # fmt: skip

# BLIP-2's vision model, Q-Former and projection (towers_blip; Blip2VisionConfig's defaults there)
BLIP2 = Tower(
    "Blip2VisionConfig", "transformers models/blip_2 (config classes); vLLM 0.33.0 blip2.py, blip.py", kind="blip2",
    absent_default={},
)
# Granite-4.0-Vision's SigLIP and window Q-Former projectors (towers_blip): the vision config class's defaults by
# its model_type (Granite4VisionConfig's default section is a CLIPVisionConfig); vLLM builds SiglipVisionModel
GRANITE4_VISION = Tower(
    "SiglipVisionConfig", "transformers models/granite4_vision; vLLM 0.33.0 granite4_vision.py, siglip.py, blip2.py",
    {"in_channels": 3}, kind="granite4_vision", vision_defaults=_LLAVA_VISION, absent_default={},
)  # fmt: skip

# Siglip2VisionConfig's class defaults (transformers models/siglip2), read by every SigLIP2 tower below
SIGLIP2_DEFAULTS: Mapping[str, int] = {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3,
                                       "patch_size": 16, "num_patches": 256}  # fmt: skip

# LFM2-VL's SigLIP2 and projector (towers_vit.lfm2_vl): Siglip2VisionConfig's class defaults; vLLM refuses another
# vision model_type ("Unsupported visual tokenizer type")
LFM2_VL = Tower(
    "Siglip2VisionConfig", "transformers models/siglip2, models/lfm2_vl; vLLM 0.33.0 lfm2_vl.py, lfm2_siglip2.py; SGLang 0.5.23 lfm2_vl.py",
    SIGLIP2_DEFAULTS,
    kind="lfm2_vl", vision_model_types=frozenset({"siglip2_vision_model"}),
    absent_default={"model_type": "siglip2_vision_model"},
)  # fmt: skip

# Phi-4-reasoning-vision's SigLIP2 and LLaVA projector (towers_phi4_siglip): Siglip2VisionConfig's class defaults
# where the vision_config dict leaves a field out, patch_size 16 (phi4siglip.py sets it where the dict omits it)
PHI4_SIGLIP = Tower(
    "Siglip2VisionConfig", towers_phi4_siglip.SOURCE,
    SIGLIP2_DEFAULTS,
    kind="phi4_siglip", absent_default={},
)  # fmt: skip

# Aria's Idefics3 SigLIP and projector (towers_vit.aria; AriaConfig's default section is an Idefics3VisionConfig)
ARIA_VISION = Tower(
    "Idefics3VisionConfig", "transformers models/aria, models/idefics3; vLLM 0.33.0 aria.py, idefics2_vision_model.py",
    IDEFICS3_VISION.defaults, kind="aria", absent_default={},
)  # fmt: skip

# Command-A-Vision's SigLIP and projector (towers_vit.cohere2_vision; SiglipVisionConfig's class defaults)
COHERE2_VISION = Tower(
    "SiglipVisionConfig", "transformers models/cohere2_vision, models/siglip; vLLM 0.33.0 cohere2_vision.py, siglip.py",
    GEMMA3_SIGLIP.defaults, kind="cohere2_vision", absent_default=_COHERE2_VISION_BUILT,
)  # fmt: skip

# Ovis's AIMv2 visual tokenizer and visual embedding table (towers_ovis; the `visual_tokenizer_config` section)
OVIS = Tower(
    "Aimv2VisionConfig", "vLLM 0.33.0 ovis.py, aimv2.py, configs/ovis.py; transformers models/aimv2",
    kind="ovis", section="visual_tokenizer_config",
)  # fmt: skip

# Cosmos-3-Edge's SigLIP2 and patch merger (towers_vit.cosmos3_edge; Cosmos3EdgeVisionConfig's class defaults)
COSMOS3_EDGE = Tower(
    "Cosmos3EdgeVisionConfig", "transformers models/cosmos3_edge; vLLM 0.33.0 / SGLang 0.5.23 cosmos3_edge.py",
    {**LFM2_VL.defaults, "hidden_size": 1152, "intermediate_size": 4304, "depth": 27, "spatial_merge_size": 2},
    kind="cosmos3_edge", absent_default={},
)  # fmt: skip

# Moondream3's vision encoder and projection (towers_moondream; the entry's tower): vLLM builds them from the
# `config` section's `vision` dict, from Moondream3VisionConfig's defaults where the config has no section (vLLM's
# registry serves HfMoondream with the same class: default--HfMoondream meta-built as Moondream3ForCausalLM's)
MOONDREAM3 = Tower(
    "Moondream3VisionConfig", "vLLM 0.33.0 models/moondream3.py, transformers_utils/configs/moondream3.py",
    kind="moondream3", section="config", absent_default={},
)  # fmt: skip

# Llama-3.2-Vision's (Mllama's) local and global vision transformers, gated position and tile embeddings and its
# replicated projector, as SGLang 0.5.23 mllama.py builds them (towers_mllama; MllamaVisionConfig's defaults there)
MLLAMA = Tower(towers_mllama.CONFIG_CLASS, towers_mllama.SOURCE, kind="mllama", absent_default={})

# --- Omni towers: a vision transformer and an audio encoder (towers_audio; audio_counted: no audio note). The
# audio-only towers with no family module of their own are in towers_catalog_audio.py ---
# Qwen2.5-Omni's thinker (the section vLLM 0.33.0 builds: nesting.SERVED_SECTION): Qwen2.5-VL's vision transformer
# (Qwen2_5OmniVisionEncoderConfig's class defaults, Qwen2.5-VL's switches) and Qwen2_5OmniAudioEncoder
# (Qwen2_5OmniAudioEncoderConfig's defaults: Whisper-large's sizes, output_dim 3584: towers_audio.OmniAudioFields)
QWEN2_5_OMNI = Tower(
    "Qwen2_5OmniVisionEncoderConfig", "transformers models/qwen2_5_omni; vLLM 0.33.0 qwen2_5_omni_thinker.py, qwen2_5_vl.py",
    QWEN2_5_VL.defaults, kind="qwen2_5_omni", norm_bias=False, patch_bias=False, position_table=False,
    mlp_gated=True, audio_counted=True, audio_defaults=audio.WHISPER_LARGE, absent_default={},
)  # fmt: skip
# Qwen3-Omni-MoE's thinker (vLLM 0.33.0 qwen3_omni_moe_thinker.py): Qwen3-VL's vision transformer with deepstack
# mergers (Qwen3OmniMoeVisionEncoderConfig's defaults) and Qwen3OmniMoeAudioEncoder (Whisper-large's sizes;
# towers_audio.Qwen3OmniAudioFields)
QWEN3_OMNI = Tower(
    "Qwen3OmniMoeVisionEncoderConfig", "transformers models/qwen3_omni_moe; vLLM 0.33.0 qwen3_omni_moe_thinker.py",
    {**_QWEN3_VISION, "deepstack_visual_indexes": [8, 16, 24]}, kind="qwen3_omni", deepstack=True,
    audio_counted=True, audio_defaults=audio.WHISPER_LARGE, absent_default={"image_size": 768},
)  # fmt: skip
# MiMo-V2.5 (`mimo_v2` with a vision_config: vLLM 0.33.0 builds MiMoV2OmniForCausalLM): its ViT and audio encoder
MIMO_V2_OMNI = Tower(
    towers_mimo.CONFIG_CLASS, towers_mimo.SOURCE, kind="mimo_v2_omni", audio_counted=True,
    notes=(towers_mimo.AUDIO_TOKENIZER_NOT_MODELLED,),
)  # fmt: skip
# GLM-4V-9B's EVA2-CLIP and GLU projector (towers_eva2clip): its config is a ChatGLM one (model_type chatglm, shared
# with the text-only GLM-4-9B) with a `vision_config` vLLM reads with no defaults (none filled in where absent)
EVA2CLIP = Tower(towers_eva2clip.CONFIG_CLASS, towers_eva2clip.SOURCE, kind="eva2clip")
# POINTS-1.5 (towers_points) and Sarashina2-Vision (towers_nvila): the qwen2_vl kind's tower and more, read with
# QWEN2_VL's defaults and switches; a vision_config left out is not modelled (absent_default None)
POINTS_V15 = replace(QWEN2_VL, source=towers_points.SOURCE, kind="points_v15", absent_default=None)
SARASHINA2 = replace(QWEN2_VL, source=towers_nvila.SOURCE_SARASHINA2, kind="sarashina2_vision", absent_default=None)
# Step3-VL-10B (StepVLForConditionalGeneration, model_type step_robotics: its checkpoint's own configuration class)
# builds Step-3.7's PerceptionEncoder and vit_large_projector in both engines (towers_step.STEP_VL_SOURCE)
STEP_VL = Tower("StepRoboticsConfig.vision_config", towers_step.STEP_VL_SOURCE, kind="step3p7")
# Towers read by the class a config names, where its model_type is a text-only entry's (Fun-ASR's config is a
# Qwen3Config: model_type qwen3)
TOWERS_BY_CLASS: Mapping[str, Tower] = {"FunASRForConditionalGeneration": towers_funasr.TOWER,
                                        "GLM4VForCausalLM": EVA2CLIP,
                                        "StepVLForConditionalGeneration": STEP_VL, **towers_keye.TOWERS_BY_CLASS,
                                        "POINTSV15ChatModel": POINTS_V15,
                                        # the class builds Pixtral whatever the outer model_type (MLC's Ministral-3
                                        # states ministral3): vLLM 0.33.0 registry.py:541-543, mistral3.py:401
                                        # (asserts PixtralVisionConfig), 479-486 (tower and projector)
                                        "Mistral3ForConditionalGeneration": PIXTRAL_MISTRAL3}  # fmt: skip
FIREREDASR2 = towers_fireredasr2.TOWER  # the `fireredasr2` entry's tower (table_dense_more)
AUDIO_BY_OUTER_TYPE: Mapping[str, Tower] = {
    "qwen2_audio": audio.QWEN2_AUDIO, "audioflamingo3": audio.AUDIOFLAMINGO3, "qwen2_5_omni_thinker": QWEN2_5_OMNI,
    "qwen3_omni_moe_thinker": QWEN3_OMNI, "qwen3_asr_thinker": audio.QWEN3_ASR,
    "granite_speech": audio.GRANITE_SPEECH, "granite_speech_plus": audio.GRANITE_SPEECH, "glmasr": audio.GLM_ASR,
    "moss_transcribe_diarize": audio.MOSS_TD, "moss_audio": audio.MOSS_AUDIO,
    towers_dasheng.OUTER_TYPE: towers_dasheng.TOWER,
    towers_kimi_audio.OUTER_TYPE: towers_kimi_audio.TOWER, towers_funaudiochat.OUTER_TYPE: towers_funaudiochat.TOWER,
    "fireredasr2": FIREREDASR2,  # also the entry's tower (by class name, whatever the model_type)
    towers_voxtral.OUTER_TYPE: towers_voxtral.TOWER, towers_ultravox.OUTER_TYPE: towers_ultravox.TOWER,
}  # fmt: skip
# Isaac's SigLIP2 and pixel-shuffle MLP (towers_isaac): PixelShuffleSiglip2VisionConfig's defaults (Siglip2VisionConfig's
# and 256 patches) where vision_config leaves a field out
ISAAC = Tower(
    "PixelShuffleSiglip2VisionConfig", towers_isaac.SOURCE,
    SIGLIP2_DEFAULTS,
    kind="isaac", absent_default={},
)  # fmt: skip

# Towers a wrapper's outer model_type names, where its text entry is shared with text-only models (Mistral-3's
# language model is Mistral's entry, llava's Llama's, Llama-4's and Gemma-4's their text-only entries). Skywork-R1V
# (skywork_chat) and H2OVL (h2ovl_chat) are InternVL's InternViT and mlp1 as they are (vLLM 0.33.0 skyworkr1v.py /
# h2ovl.py build intern_vit.py's InternVisionModel up to select_layer and InternVL's LayerNorm-Linear-GELU-Linear)
BY_OUTER_TYPE: Mapping[str, Tower] = {
    "mistral3": PIXTRAL_MISTRAL3, "llava": LLAVA_CLIP, "llama4": LLAMA4_VISION, "gemma4": GEMMA4_VISION,
    "internvl_chat": INTERNVL_CHAT, "skywork_chat": INTERNVL_CHAT, "h2ovl_chat": INTERNVL_CHAT,
    "llava_next": LLAVA_NEXT, "llava_onevision": LLAVA_ONEVISION,
    "kimi_k25": KIMI_K25, "kimi_k3": KIMI_K3, "minimax_m3_vl": MINIMAX_M3, "internvl": INTERNVL_HF, "kimi_vl": KIMI_VL,
    "minicpmv4_6": MINICPM_V4_6, "minicpmv4_7": MINICPM_V4_7, "paligemma": PALIGEMMA_SIGLIP,
    "idefics3": IDEFICS3_VISION, "smolvlm": IDEFICS3_VISION, "blip-2": BLIP2, "granite4_vision": GRANITE4_VISION,
    "lfm2_vl": LFM2_VL, "aria": ARIA_VISION, "cohere2_vision": COHERE2_VISION,
    "ovis": OVIS, "llava_next_video": LLAVA_NEXT_VIDEO,
    "ovis2_5": Tower("Siglip2NavitConfig", towers_ovis2_5.SOURCE, kind="ovis2_5", section="vit_config"),
    "cosmos3_edge": COSMOS3_EDGE, "exaone4_5": EXAONE4_5, "hyperclovax_vision_v2": HCX_VISION_V2,
    "opencua": QWEN2_5_VL, "rvl": LLAVA_ONEVISION,
    "NVLM_D": Tower("InternVisionConfig", towers_nvlm.SOURCE, INTERNVL_CHAT.defaults, kind="nvlm_d"),
    "NemotronH_Nano_VL_V2": Tower(towers_radio.CONFIG_CLASS, towers_radio.SOURCE, kind="radio"),
    towers_nemotron_vl.OUTER_TYPE: Tower(towers_nemotron_vl.CONFIG_CLASS, towers_nemotron_vl.SOURCE, kind="nemotron_vl",
                                         words=towers_nemotron_vl.WORDS,
                                         notes=(towers_nemotron_vl.VISION_MODEL_NOT_MODELLED,)),
    "deepseek_vl_v2": Tower(towers_deepseek_ocr.CONFIG_CLASS, towers_deepseek_ocr.SOURCE, kind="deepseek_ocr"),
    "multi_modality": Tower(towers_janus.CONFIG_CLASS, towers_janus.SOURCE, kind="janus", words=towers_janus.WORDS),
    "gemma3n": Tower(towers_gemma3n.CONFIG_CLASS, towers_gemma3n.SOURCE, kind="gemma3n", audio_counted=True,
                     words=towers_gemma3n.WORDS),
    "mimo_v2": MIMO_V2_OMNI,
    "mllama": MLLAMA,
    **AUDIO_BY_OUTER_TYPE,
    "isaac": ISAAC,
    "phi4-siglip": PHI4_SIGLIP,
    "pixtral": towers_mistral_format.TOWER,  # a Mistral-format checkpoint's (kvtop.domain.mistral_params)
    "bailing_moe_v3_vl": BAILING_V3_VL,
    "llava_onevision2": Tower(towers_onevision2.CONFIG_CLASS, towers_onevision2.SOURCE, kind="onevision2"),
    **towers_kanana.BY_OUTER_TYPE,  # Kanana-V (vLLM 0.33.0's build)
    **towers_nvila.BY_OUTER_TYPE, "sarashina2_vision": SARASHINA2,  # SGLang 0.5.23's builds
    "dots_vlm": Tower(towers_dots_vlm.CONFIG_CLASS, towers_dots_vlm.SOURCE, kind="dots_vlm", absent_default={}),
}  # fmt: skip
