"""Composite (multimodal) configs: where the language model's section is, and which entry reads it.

A wrapper's `config.json` keeps its language model under `text_config` (transformers), `llm_config`
(InternVL's remote code) or `language_config` (DeepSeek-VL2); transformers reads that section with a
fixed class for some wrappers whatever its nested `model_type` says, and through AutoConfig from the
nested `model_type` (with a default) for others. Both tables are data: a new wrapper is a line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.unchecked_class import ChosenBy

TEXT_SECTION_KEYS = ("text_config", "llm_config", "language_config")

# Wrappers whose text model has a fixed class (`sub_configs` with a concrete class in the wrapper's file)
FIXED_TEXT: Mapping[str, str] = {
    "multi_modality": "llama",  # Janus: SGLang 0.5.23 configs/janus_pro.py LlamaConfig(**language_config)
    "gemma3": "gemma3_text",  # Gemma3Config
    "gemma3n": "gemma3n_text",  # Gemma3nConfig
    "gemma4": "gemma4_text",  # Gemma4Config
    "gemma4_unified": "gemma4_unified_text",  # Gemma4UnifiedConfig
    "llama4": "llama4_text",  # Llama4Config
    "qwen2_vl": "qwen2_vl_text",  # Qwen2VLConfig
    "qwen2_5_vl": "qwen2_5_vl_text",  # Qwen2_5_VLConfig
    "qwen3_vl": "qwen3_vl_text",  # Qwen3VLConfig
    "qwen3_vl_moe": "qwen3_vl_moe_text",  # Qwen3VLMoeConfig
    "qwen3_5": "qwen3_5_text",  # Qwen3_5Config
    "qwen3_5_moe": "qwen3_5_moe_text",  # Qwen3_5MoeConfig
    "glm4v": "glm4v_text",  # Glm4vConfig
    "glm4v_moe": "glm4v_moe_text",  # Glm4vMoeConfig
    "minimax_m3_vl": "minimax_m3",  # MiniMax-M3's VL wrapper (its text section names no model_type)
    "kimi_k3": "kimi_linear",  # KimiK3Config: text_config is a KimiLinearConfig
    # Qwen2.5-Omni's thinker (served_config): vLLM 0.33.0 qwen2_5_omni_thinker.py builds Qwen2ForCausalLM over its
    # text_config (a qwen2_5_omni_text section)
    "qwen2_5_omni_thinker": "qwen2",
    "qwen3_omni_moe_thinker": "qwen3_vl_moe_text",
    "qwen3_asr_thinker": "qwen3",  # vLLM 0.33.0 / SGLang 0.5.23 qwen3_asr.py: Qwen3ForCausalLM over text_config
    # vLLM 0.33.0 moss_transcribe_diarize.py: Qwen3ForCausalLM over text_config (MossTranscribeDiarizeConfig: Qwen3Config)
    "moss_transcribe_diarize": "qwen3",
    "moss_audio": "qwen3",  # vLLM 0.33.0 moss_audio.py MossAudioConfig: Qwen3Config(**language_config)
    "funaudiochat": "qwen3",  # vLLM 0.33.0 funaudiochat.py: Qwen3ForCausalLM over text_config whatever its model_type
    "midashenglm": "qwen2",  # vLLM 0.33.0 / SGLang 0.5.23 midashenglm.py: Qwen2ForCausalLM over text_config
    "voxtral": "llama",  # SGLang 0.5.23 voxtral.py: LlamaForCausalLM(text_config) whatever its model_type
    "step3_vl": "step3_text",  # Step3VLConfig (vLLM / SGLang configs/step3_vl.py): text_config a Step3TextConfig
    "mllama": "mllama_text_model",  # MllamaConfig: text_config is a MllamaTextConfig
    "cohere_compass": "cohere_compass_text",  # CohereCompassConfig: text_config a CohereCompassTextConfig
    # Ling-3-VL: vLLM 0.33.0 BailingMoeV3TextConfig / SGLang 0.5.23 BailingHybridConfig(**text_config), built as
    # BailingMoeV3ForCausalLM (bailing_moe_v3_vl.py / bailing_mm_v3.py) whatever its model_type (bailing_hybrid)
    "bailing_moe_v3_vl": "bailing_moe_v3",
}
# Configs whose served model is one section of theirs: vLLM 0.33.0 registers Qwen2_5OmniModel and
# Qwen2_5OmniForConditionalGeneration as Qwen2_5OmniThinkerForConditionalGeneration, which builds from
# `hf_config.thinker_config` alone (no talker, no token2wav); Qwen3-Omni-MoE's and Qwen3-ASR's classes likewise
# (qwen3_omni_moe_thinker.py, qwen3_asr.py; SGLang 0.5.23's the same sections). outer model_type -> the section
# read in its place.
SERVED_SECTION: Mapping[str, str] = {
    "qwen2_5_omni": "thinker_config", "qwen3_omni_moe": "thinker_config", "qwen3_asr": "thinker_config",
}  # fmt: skip


def served_config(config: dict[str, Any]) -> dict[str, Any]:
    """The part of `config` the engines build (SERVED_SECTION), with the outer `architectures` (the engines pick
    the class by it), the outer dtype where the section states none, and the outer `tie_word_embeddings` in place
    of the section's: vLLM 0.33.0 VllmConfig.with_hf_config copies the top config's value, where it has one, into
    the text config (Qwen2_5OmniConfig has none: the text_config's own; the thinker's is not read)."""
    key = SERVED_SECTION.get(str(config.get("model_type")))
    section = config.get(key) if key else None
    if not isinstance(section, dict):
        return config
    dtypes = {name: config[name] for name in ("torch_dtype", "dtype") if config.get(name) and not section.get(name)}
    served = {name: value for name, value in section.items() if name != "tie_word_embeddings"}
    tie = {"tie_word_embeddings": config["tie_word_embeddings"]} if "tie_word_embeddings" in config else {}
    return {**served, **dtypes, **tie, "architectures": config.get("architectures")}


# Wrappers that resolve it through AutoConfig from the nested `model_type`, with a default.
AUTO_TEXT: Mapping[str, str] = {
    "mistral3": "mistral",  # Mistral3Config: SubConfigSpec(AutoConfig, model_type="mistral")
    "llava": "llama",  # LlavaConfig: SubConfigSpec(AutoConfig, model_type="llama")
    "llava_next": "llama",  # LlavaNextConfig
    "llava_onevision": "qwen2",  # LlavaOnevisionConfig
    "internvl_chat": "internlm2",  # InternVL's remote InternVLChatConfig: `llm_config`
    "internvl": "qwen2",  # InternVLConfig (transformers)
    "kimi_vl": "deepseek_v3",  # KimiVLConfig: text_config a DeepseekV3Config
    "kimi_k25": "deepseek_v3",  # Kimi-K2.5: text_config a DeepseekV3Config (kimi_k2 in some exports)
    "deepseek_vl_v2": "deepseek_v2",  # DeepSeek-VL2: language_config
    "paligemma": "gemma",  # PaliGemmaConfig
    "idefics3": "llama",  # Idefics3Config
    "smolvlm": "llama",  # SmolVLMConfig
    "aya_vision": "cohere2",  # AyaVisionConfig
    "pixtral": "mistral",
    "qwen2_audio": "qwen2",  # Qwen2AudioConfig: text_config through AutoConfig, default qwen2
    "audioflamingo3": "qwen2",  # AudioFlamingo3Config
    "granite_speech": "granite",  # GraniteSpeechConfig: text_config through AutoConfig, default granite
    "granite_speech_plus": "granite",
    "ultravox": "llama",  # vLLM 0.33.0 configs/ultravox.py: CONFIG_MAPPING[text_config's model_type or llama]
    "glmasr": "llama",  # GlmAsrConfig: text_config through AutoConfig, default llama (its _default_text_config_kwargs)
}


def text_model_type(outer_type: str, nested_type: str | None) -> str:
    """The `model_type` transformers reads the language model as (see the two tables above)."""
    if outer_type in FIXED_TEXT:
        return FIXED_TEXT[outer_type]
    if outer_type in AUTO_TEXT:
        return nested_type if nested_type and nested_type != outer_type else AUTO_TEXT[outer_type]
    return nested_type or outer_type


# Classes that build one fixed language model from the config's top level whatever its model_type says (an engine
# picks its model class by this name): LLaVA-NeXT's LlavaQwenForCausalLM over a `llava` config builds
# Qwen2ForCausalLM (q/k/v biases), where the `llava` default would read it as Llama (SGLang 0.5.23 models/llava.py
# LlavaQwenForCausalLM.__init__; lmms-lab/llava-onevision-qwen2-7b-ov meta-built: 28 × 4,608 × 2 B of biases).
# SGLang 0.5.23 grok.py builds Grok-1 whatever model_type the config names (its own CI's Grok-1 config says "mixtral")
CLASS_TEXT: Mapping[str, str] = {
    "LlavaQwenForCausalLM": "qwen2",
    "Grok1ForCausalLM": "grok-1",
    "Grok1ModelForCausalLM": "grok-1",
    # Ling-3: its config says bailing_hybrid (Ling-2.5's model_type); both engines build bailing_moe_v3.py's class
    "BailingMoeV3ForCausalLM": "bailing_moe_v3",
    # dots.vlm1: SGLang 0.5.23 dots_vlm.py builds DeepseekV2ForCausalLM over DotsVLMConfig's DeepseekV2Config(**the
    # top level) (configs/dots_vlm.py)
    "DotsVLMForCausalLM": "deepseek_v2",
    # vLLM 0.33.0 rnj1.py reads a Gemma3TextConfig (model_type gemma3_text) with its own layer kinds
    "Rnj1ForCausalLM": "rnj1",
}


def class_text_model_type(architecture: str, outer_type: str, nested_type: str | None) -> str:
    """The `model_type` the language model is read as: the class's fixed one (CLASS_TEXT), else text_model_type."""
    return CLASS_TEXT.get(architecture) or text_model_type(outer_type, nested_type)


def text_type_field(outer_type: str, section_key: str | None, nested_type: str | None) -> ChosenBy:
    """How text_model_type found the type it reads (for a class with no entry of its own: `UncheckedClass`): by the
    config's model_type or by its text section, the field and value that chose it."""
    if outer_type in FIXED_TEXT:
        return ChosenBy(by="text_section", field="model_type", value=outer_type, section_rule="always",
                        section_type=FIXED_TEXT[outer_type])  # fmt: skip
    if outer_type in AUTO_TEXT and not (nested_type and nested_type != outer_type):
        return ChosenBy(by="text_section", field="model_type", value=outer_type, section_rule="defaults_to",
                        section_type=AUTO_TEXT[outer_type])  # fmt: skip
    if section_key is not None and nested_type:
        return ChosenBy(by="text_section", field=f"{section_key}.model_type", value=nested_type)
    return ChosenBy(by="model_type", field="model_type", value=outer_type)
