"""The families kvtop models: what each `model_type` reads as, and whose class defaults fill it in.

An engine loads config.json through transformers' config class for its `model_type`, so a field
the file leaves out takes that class's default (Gemma-3-4B's config states neither head counts
nor head_dim: Gemma3TextConfig's 8 / 4 / 256 are what SGLang and vLLM run). Each `Family` names
that class, the file its defaults come from (the tables are in `class_defaults`), and the reader
of `model_families` that interprets it. Twins (OLMo 3, InternLM, Ministral, the Qwen VL text
models, Kimi-K2, …) are families of their own with their own defaults, read by an existing reader.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from enum import Enum
from typing import NamedTuple

from kvtop.domain import class_defaults as defaults
from kvtop.domain.class_defaults import DefaultValue, tf


class LayerPattern(str, Enum):
    """How a family lays out sliding / chunked / linear layers when `layer_types` is absent."""

    NONE = "none"  # every layer full attention
    ALTERNATE = "alternate"  # sliding on even layers (0, 2, …), full on odd (Gemma2Config, GptOssConfig)
    EVERY_NTH_FULL = "every_nth_full"  # full on every `sliding_window_pattern`-th layer (Gemma3TextConfig)
    EVERY_4TH_FULL = "every_4th_full"  # Olmo3Config: 3 sliding then 1 full
    QWEN2_WINDOW = "qwen2_window"  # sliding from layer `max_window_layers` on, if `use_sliding_window`
    QWEN2_MOE_WINDOW = "qwen2_moe_window"  # sliding on even layers below `max_window_layers`, if enabled
    ALL_SLIDING = "all_sliding"  # MinistralConfig: every layer, when a window is set
    CHUNKED = "chunked"  # Llama4TextConfig: chunked attention except every 4th (NoPE) layer
    LINEAR = "linear"  # Qwen3NextConfig: linear attention except every `full_attention_interval`-th layer


class Family(NamedTuple):
    """One modelled `model_type`: its class defaults and how kvtop reads it."""

    model_type: str
    reads_as: str  # the reader in model_families: dense, qwen_moe, mixtral, gpt_oss, llama4, deepseek, …
    config_class: str
    source: str
    defaults: Mapping[str, DefaultValue]
    layer_pattern: LayerPattern = LayerPattern.NONE
    qkv_bias: bool = False  # q/k/v carry a bias whatever the config says (Qwen2Attention: bias=True)
    qk_norm: bool = False  # per-head RMSNorm on q and k


_T = tf
_FAMILIES: tuple[Family, ...] = (
    Family("llama", "dense", "LlamaConfig", _T("llama"), defaults.LLAMA),
    Family("granite", "dense", "GraniteConfig", _T("granite"), defaults.LLAMA),
    Family("olmo", "dense", "OlmoConfig", _T("olmo"), defaults.OLMO2),
    Family("olmo2", "dense", "Olmo2Config", _T("olmo2"), defaults.OLMO2),
    Family("olmo3", "dense", "Olmo3Config", _T("olmo3"), defaults.OLMO3, LayerPattern.EVERY_4TH_FULL),
    Family(
        "internlm",
        "dense",
        "InternLMConfig",
        "internlm/internlm-7b configuration_internlm.py",
        defaults.INTERNLM,
    ),
    Family(
        "internlm2",
        "dense",
        "InternLM2Config",
        "internlm/internlm2-7b configuration_internlm2.py",
        defaults.INTERNLM,
    ),
    Family("internlm3", "dense", "InternLM3Config", _T("internlm3"), defaults.INTERNLM3),
    Family("mistral", "dense", "MistralConfig", _T("mistral"), defaults.MISTRAL),
    Family(
        "ministral", "dense", "MinistralConfig", _T("ministral"), defaults.MISTRAL, LayerPattern.ALL_SLIDING
    ),
    Family("phi3", "dense", "Phi3Config", _T("phi3"), defaults.PHI3),
    Family(
        "qwen2", "dense", "Qwen2Config", _T("qwen2"), defaults.QWEN2, LayerPattern.QWEN2_WINDOW, qkv_bias=True
    ),
    Family(
        "qwen2_vl_text",
        "dense",
        "Qwen2VLTextConfig",
        _T("qwen2_vl"),
        defaults.QWEN2_VL_TEXT,
        LayerPattern.QWEN2_WINDOW,
        qkv_bias=True,
    ),
    Family(
        "qwen2_5_vl_text",
        "dense",
        "Qwen2_5_VLTextConfig",
        _T("qwen2_5_vl"),
        defaults.QWEN2_VL_TEXT,
        LayerPattern.QWEN2_WINDOW,
        qkv_bias=True,
    ),
    Family(
        "qwen3", "dense", "Qwen3Config", _T("qwen3"), defaults.QWEN3, LayerPattern.QWEN2_WINDOW, qk_norm=True
    ),
    Family(
        "qwen3_vl_text", "dense", "Qwen3VLTextConfig", _T("qwen3_vl"), defaults.QWEN3_VL_TEXT, qk_norm=True
    ),
    Family("gemma", "dense", "GemmaConfig", _T("gemma"), defaults.GEMMA),
    Family("gemma2", "dense", "Gemma2Config", _T("gemma2"), defaults.GEMMA2, LayerPattern.ALTERNATE),
    Family(
        "gemma3_text",
        "dense",
        "Gemma3TextConfig",
        _T("gemma3"),
        defaults.GEMMA3_TEXT,
        LayerPattern.EVERY_NTH_FULL,
        qk_norm=True,
    ),
    Family("mixtral", "mixtral", "MixtralConfig", _T("mixtral"), defaults.MIXTRAL),
    Family(
        "qwen2_moe",
        "qwen_moe",
        "Qwen2MoeConfig",
        _T("qwen2_moe"),
        defaults.QWEN2_MOE,
        LayerPattern.QWEN2_MOE_WINDOW,
    ),
    Family("qwen3_moe", "qwen_moe", "Qwen3MoeConfig", _T("qwen3_moe"), defaults.QWEN3_MOE, qk_norm=True),
    Family(
        "qwen3_vl_moe_text",
        "qwen_moe",
        "Qwen3VLMoeTextConfig",
        _T("qwen3_vl_moe"),
        defaults.QWEN3_VL_MOE_TEXT,
        qk_norm=True,
    ),
    Family(
        "qwen3_next",
        "qwen3_next",
        "Qwen3NextConfig",
        _T("qwen3_next"),
        defaults.QWEN3_NEXT,
        LayerPattern.LINEAR,
        qk_norm=True,
    ),
    Family(
        "llama4_text", "llama4", "Llama4TextConfig", _T("llama4"), defaults.LLAMA4_TEXT, LayerPattern.CHUNKED
    ),
    Family("gpt_oss", "gpt_oss", "GptOssConfig", _T("gpt_oss"), defaults.GPT_OSS, LayerPattern.ALTERNATE),
    Family("deepseek_v2", "deepseek", "DeepseekV2Config", _T("deepseek_v2"), defaults.DEEPSEEK_V2),
    Family("deepseek_v3", "deepseek", "DeepseekV3Config", _T("deepseek_v3"), defaults.DEEPSEEK_V3),
    Family("deepseek_v32", "deepseek", "DeepseekV32Config", _T("deepseek_v32"), defaults.DEEPSEEK_V32),
    # Kimi-K2 ships remote code whose class is DeepseekV3Config (auto_map in its config.json)
    Family("kimi_k2", "deepseek", "DeepseekV3Config", _T("deepseek_v3"), defaults.DEEPSEEK_V3),
    Family("nemotron_h", "nemotron_h", "NemotronHConfig", _T("nemotron_h"), defaults.NEMOTRON_H),
)
FAMILIES: Mapping[str, Family] = {family.model_type: family for family in _FAMILIES}

# Composite (multimodal) configs whose text model has a fixed class, whatever the nested
# `model_type` says (`sub_configs_defaults` with a concrete class in each file)…
_FIXED_TEXT = {
    "gemma3": "gemma3_text",  # Gemma3Config
    "llama4": "llama4_text",  # Llama4Config
    "qwen2_vl": "qwen2_vl_text",  # Qwen2VLConfig
    "qwen2_5_vl": "qwen2_5_vl_text",  # Qwen2_5_VLConfig
    "qwen3_vl": "qwen3_vl_text",  # Qwen3VLConfig
    "qwen3_vl_moe": "qwen3_vl_moe_text",  # Qwen3VLMoeConfig
}
# …and those that resolve it through AutoConfig from the nested `model_type`, with a default.
_AUTO_TEXT = {
    "mistral3": "mistral",  # Mistral3Config: SubConfigSpec(AutoConfig, model_type="mistral")
    "llava": "llama",  # LlavaConfig: SubConfigSpec(AutoConfig, model_type="llama")
    "internvl_chat": "internlm2",  # InternVL's remote InternVLChatConfig: `llm_config`
}


def text_model_type(outer_type: str, nested_type: str | None) -> str:
    """The `model_type` transformers reads the language model as (see the two tables above)."""
    if outer_type in _FIXED_TEXT:
        return _FIXED_TEXT[outer_type]
    if outer_type in _AUTO_TEXT:
        return nested_type if nested_type and nested_type != outer_type else _AUTO_TEXT[outer_type]
    return nested_type or outer_type


def modelled_types() -> tuple[str, ...]:
    """Every `model_type` kvtop reads, outer (composite) types included, sorted."""
    return tuple(sorted({*FAMILIES, *_FIXED_TEXT, *_AUTO_TEXT}))


# Fields that only one reader knows: a config that has them is shaped like that family.
_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("kv_lora_rank", "deepseek_v3", "multi-head latent attention (kv_lora_rank)"),
    ("hybrid_override_pattern", "nemotron_h", "a Mamba/attention layer pattern (hybrid_override_pattern)"),
    ("linear_num_key_heads", "qwen3_next", "linear-attention layers (linear_num_key_heads)"),
    ("num_local_experts", "mixtral", "experts named num_local_experts"),
    ("num_experts", "qwen3_moe", "experts named num_experts"),
)


def nearest_family(model_type: str, fields: frozenset[str], architecture: str = "") -> tuple[str, str]:
    """(the modelled family an unknown config is most like, why): by its fields, then its names."""
    for field, family, why in _SHAPES:
        if field in fields:
            return family, f"it has {why}"
    stem = re.sub(r"(For(CausalLM|ConditionalGeneration)|Model)$", "", architecture).lower()
    for name in (model_type, stem):
        close = difflib.get_close_matches(name, list(FAMILIES), n=1, cutoff=0.6) if name else []
        if close:
            return close[0], f"its name is closest to {close[0]!r}"
    return "llama", "the common decoder's fields: hidden_size, num_attention_heads, num_key_value_heads, …"
