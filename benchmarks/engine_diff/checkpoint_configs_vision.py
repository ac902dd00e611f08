"""checkpoint-config stand-ins (both runners), the multimodal wrappers' part of the table: the configuration classes
of vision-language checkpoints that build a text section and a vision section as config objects (issue 26, session
47), in checkpoint_configs.py's shape. Split from checkpoint_configs.py, which merges these tables into its own at
the place they stood (the order of its tables is unchanged), so that each module stays readable.

Data only (standard library). Imported inside the engine's venv.
"""

from __future__ import annotations

from typing import Any

# model type -> (transformers base class of the published configuration class, the published file, defaults)
CHECKPOINT_CONFIGS: dict[str, tuple[str, str, dict[str, Any]]] = {}
# model type -> the sections the published class builds as config objects (checkpoint_configs.SUB_CONFIGS)
SUB_CONFIGS: dict[str, tuple[str, ...]] = {}
# --- issue 26: LLaVA-OneVision-2 (helper b, session 47) ---
# LlavaOnevision2Config(PretrainedConfig), model_type "llava_onevision2" (lmms-lab's configuration_llava_onevision2.py:
# it builds text_config as the transformers class of its model_type, Qwen3Config by default, and vision_config as
# LlavaOnevision2VisionConfig, a PretrainedConfig of the raw fields whose model_type is "llava_onevision2" too).
# vLLM 0.33.0 registers no config class for it (models/llava_onevision2.py reads text_config and vision_config by
# attribute; the vision section is built here as this stand-in of its fields, which it only reads).
CHECKPOINT_CONFIGS["llava_onevision2"] = (
    "PretrainedConfig",
    "lmms-lab LLaVA-OneVision-2 configuration_llava_onevision2.py (LlavaOnevision2Config(PretrainedConfig))",
    {},
)
SUB_CONFIGS["llava_onevision2"] = ("text_config", "vision_config")
# --- issue 26: SGLang's remaining vision classes (helper f, session 47) ---
# NVILAConfig / NVILALiteConfig(PretrainedConfig), model_types "nvila" / "nvila_lite": the checkpoints' own classes
# (_auto_class AutoConfig), copied into SGLang 0.5.23 models/nvila.py:33-62 / nvila_lite.py:33-62 but not registered by
# it; each builds text_config as a Qwen2Config and vision_config as a SiglipVisionConfig from the JSON, then calls
# PretrainedConfig (image_token_id / video_token_id -1 where absent; the model reads neither to size a weight).
# Sarashina2VisionConfig, model_type "sarashina2_vision" (sbintuitions/sarashina2-vision-*'s own class, not in the
# corpora): SGLang 0.5.23 models/sarashina2_vision.py:57-95 reads text_config (LlamaConfig(**text_config.__dict__)
# where its model_type is llama), vision_config's fields by attribute (qwen2_vl.py:299-307) and the top-level
# vocab_size / rms_norm_eps; the stand-in keeps the JSON's sections as config objects.
CHECKPOINT_CONFIGS.update({
    "nvila": ("PretrainedConfig", "NVILA checkpoints' NVILAConfig (SGLang 0.5.23 models/nvila.py copy)", {}),
    "nvila_lite": ("PretrainedConfig", "NVILA-Lite checkpoints' NVILALiteConfig (SGLang 0.5.23 nvila_lite.py copy)", {}),
    "sarashina2_vision": ("PretrainedConfig", "sbintuitions/sarashina2-vision's Sarashina2VisionConfig (not published "
                          "here; SGLang 0.5.23 sarashina2_vision.py reads its sections by attribute)", {}),
})  # fmt: skip
SUB_CONFIGS.update({name: ("text_config", "vision_config") for name in ("nvila", "nvila_lite", "sarashina2_vision")})
# --- issue 26: NemotronH_Nano_VL_V2 (helper c, session 47) ---
# The checkpoint's own configuration class (nvidia Nemotron Nano VL V2's remote code, auto_map AutoConfig), model_type
# "NemotronH_Nano_VL_V2": a PretrainedConfig holding llm_config (NemotronHConfig) and vision_config (the RADIO
# section, a PretrainedConfig of its raw fields: `args`, `preferred_resolution`, `patch_size`) as config objects, as
# SGLang 0.5.23 configs/nano_nemotron_vl.py (its copy) does. vLLM 0.33.0 ships no config class for the model type
# (transformers_utils/config.py maps only the llm_config attribute to text_config); models/nano_nemotron_vl.py reads
# config.text_config, config.vision_config.args and the outer fields by attribute.
CHECKPOINT_CONFIGS["NemotronH_Nano_VL_V2"] = (
    "PretrainedConfig",
    "nvidia Nemotron Nano VL V2 configuration (NemotronH_Nano_VL_V2_Config, as SGLang 0.5.23 ships its copy)",
    {},
)
SUB_CONFIGS["NemotronH_Nano_VL_V2"] = ("llm_config", "vision_config")
# StepRoboticsConfig(PretrainedConfig), model_type "step_robotics" (stepfun-ai/Step3-VL-10B
# configuration_step_robotics.py, auto_map AutoConfig): text_config (a Qwen3Config) and vision_config (the
# PerceptionEncoder's fields: width, layers, heads, mlp_ratio, ... as SGLang 0.5.23's Step3p7VisionEncoderConfig
# names them) as config objects. Neither vLLM 0.33.0 nor SGLang 0.5.23 ships a config class for the model type;
# both engines' StepVLForConditionalGeneration (vLLM step_vl.py, SGLang step3_vl_10b.py) read config.text_config,
# config.vision_config.<field> and config.projector_bias by attribute.
CHECKPOINT_CONFIGS["step_robotics"] = (
    "PretrainedConfig",
    "stepfun-ai/Step3-VL-10B configuration_step_robotics.py (StepRoboticsConfig)",
    {},
)
SUB_CONFIGS["step_robotics"] = ("text_config", "vision_config")
# --- issue 26: OpenCUA and R-4B (helper a, session 47) ---
# OpenCUAConfig(PretrainedConfig), model_type "opencua" (xlangai/OpenCUA-7B's configuration class, as vLLM shipped its
# copy: GitHub vllm-project/vllm vllm/transformers_utils/configs/opencua.py at 84e613438d88c1dcdf06cc9875462c272f8f9df9):
# builds vision_config as Qwen2_5_VLVisionConfig and text_config as Qwen2Config from their JSON objects, sets
# ignore_index / media_placeholder_token_id, then calls PretrainedConfig(pad_token_id=0). vLLM 0.33.0 opencua.py reads
# config.vision_config and config.text_config by attribute (its Qwen2_5_VisionTransformer, its Qwen2ForCausalLM).
CHECKPOINT_CONFIGS["opencua"] = (
    "PretrainedConfig",
    "xlangai/OpenCUA-7B configuration_opencua.py (OpenCUAConfig; vLLM's copy at 84e61343)",
    {"pad_token_id": 0},
)
SUB_CONFIGS["opencua"] = ("vision_config", "text_config")
# YannQi/R-4B's configuration class (model_type "rvl", remote code) is not at hand; vLLM 0.33.0 rvl.py builds
# RForConditionalGeneration as LlavaOnevisionForConditionalGeneration over the same fields (vision_config,
# text_config, vision_feature_layer, image_grid_pinpoints ...) with its own projector, so transformers'
# LlavaOnevisionConfig stands in under the model type.
CHECKPOINT_CONFIGS["rvl"] = (
    "LlavaOnevisionConfig",
    "YannQi/R-4B (its remote configuration class, not at hand; LlavaOnevisionConfig's fields, which vLLM rvl.py reads)",
    {},
)
# Keye-VL (Kwai-Keye/Keye-VL-8B-Preview, model_type "Keye") and Keye-VL-1.5 (Kwai-Keye/Keye-VL-1_5-8B): their remote
# configuration classes are not at hand. vLLM 0.33.0 keye.py builds the language model as Qwen3ForCausalLM over the
# top-level config itself (init_vllm_registered_model with no hf_config, keye.py:1231-1235) and the tower from
# config.vision_config by attribute (KeyeSiglipVisionModel, keye.py:1218-1229; keye_vl1_5.py:521 reads its
# spatial_merge_size): transformers' Qwen3Config stands in, building vision_config as the class its model_type names
# (SiglipVisionConfig, which keeps spatial_merge_size as a field).
for _keye in ("Keye", "KeyeVL1_5"):
    CHECKPOINT_CONFIGS[_keye] = ("Qwen3Config", "Kwai-Keye's remote configuration class (not at hand; Qwen3Config)", {})
    SUB_CONFIGS[_keye] = ("vision_config",)
# --- issue 26: Kanana-V (helper e, session 47) ---
# KananaVConfig(PretrainedConfig), model_type "kanana-1.5-v" (kakaocorp/kanana-1.5-v-3b-instruct's configuration.py,
# auto_map AutoConfig; its copy in the code corpus): builds vision_config (KananaVVisionConfig), projector_config
# (KananaVVisualProjectorConfig), both PretrainedConfigs of their fields, and text_config (KananaLanguageConfig, a
# LlamaConfig) as config objects. vLLM 0.33.0 ships no config class for it (registry.py maps only the model class);
# models/kanana_v.py reads config.vision_config, config.projector_config and config.text_config by attribute.
CHECKPOINT_CONFIGS["kanana-1.5-v"] = (
    "PretrainedConfig",
    "kakaocorp/kanana-1.5-v-3b-instruct configuration.py (KananaVConfig)",
    {},
)
SUB_CONFIGS["kanana-1.5-v"] = ("vision_config", "projector_config", "text_config")
# Llama_Nemotron_Nano_VL (helper e, session 47): the checkpoint's own configuration class (nvidia
# Llama-3.1-Nemotron-Nano-VL-8B-V1's remote code, not at hand), model_type "Llama_Nemotron_Nano_VL": a PretrainedConfig
# holding llm_config (a LlamaConfig) and vision_config (C-RADIO's, a PretrainedConfig of its raw fields) as config
# objects, as its sibling NemotronH_Nano_VL_V2's class does. vLLM 0.33.0 ships no config class for it
# (transformers_utils/config.py maps llm_config to text_config); models/nemotron_vl.py reads config.get_text_config(),
# config.vision_config.patch_size and the outer fields by attribute; its vision model is vllm_input_standins'
# remote-vision-model stand-in.
CHECKPOINT_CONFIGS["Llama_Nemotron_Nano_VL"] = (
    "PretrainedConfig",
    "nvidia/Llama-3.1-Nemotron-Nano-VL-8B-V1's configuration class (remote code; not at hand)",
    {},
)
SUB_CONFIGS["Llama_Nemotron_Nano_VL"] = ("llm_config", "vision_config")
