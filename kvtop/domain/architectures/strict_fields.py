"""Config fields a transformers 5.x `@strict` config class types that a published config.json states with another
type: loading the config raises huggingface_hub's StrictDataclassFieldValidationError, so an engine release that
loads it through that class cannot read the config at all. The reader names each such field
(ModelSpec.strict_type_mismatches); each engine's config checks refuse it on the releases, and for the model types,
whose config class is the strict one (the engine packages hold those ranges).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvtop.domain.errors import InputError

if TYPE_CHECKING:
    from kvtop.domain.model import ModelSpec

# model_type -> (dotted config field, the type its strict config class declares; None not allowed)
TYPED_FIELDS: dict[str, tuple[tuple[str, type], ...]] = {
    # DbrxFFNConfig.moe_normalize_expert_weights: float | None (transformers 5.19.0 / 5.20.2
    # models/dbrx/configuration_dbrx.py); databricks/dbrx-instruct's config.json states 1
    "dbrx": (("ffn_config.moe_normalize_expert_weights", float),),
    # DeepseekV3Config.kv_lora_rank: int (transformers 5.19.0 models/deepseek_v3/configuration_deepseek_v3.py), the
    # base SGLang 0.5.23 loads deepseek_v4 through (utils/hf_transformers/common.py _DeepseekV4ConfigAlias);
    # RedHatAI/DeepSeek-V4-Flash-NVFP4-FP8's config.json states null
    "deepseek_v4": (("kv_lora_rank", int),),
    # BailingHybridConfig.kda_lower_bound: float (transformers 5.20.2 models/bailing_hybrid/configuration_bailing_hybrid.py
    # @strict); inclusionAI/Ling-3.0-tiny's config.json states -5. Ling-3's class reads it as kvtop's bailing_moe_v3
    # (nesting.CLASS_TEXT); Ling-2.5's configs state no such field
    "bailing_moe_v3": (("kda_lower_bound", float),),
}
# Outer model types whose config class builds the text section with its own (not @strict) class, so the strict class of
# the section's model type is never met: vLLM 0.33.0 transformers_utils/configs/bailing_moe_v3_vl.py
# BailingMoeV3TextConfig (kda_lower_bound: float | None, unchecked) and SGLang 0.5.23 configs/bailing_hybrid.py
# BailingHybridConfig (Ling-3-VL's text_config; recon--inclusionAI--Ling-3-VL-class-int-bound: -5 built by both)
OWN_TEXT_CLASS: frozenset[str] = frozenset({"bailing_moe_v3_vl"})
_ABSENT = object()


def _value(config: dict[str, Any], dotted: str) -> Any:
    section: Any = config
    for key in dotted.split("."):
        section = section.get(key, _ABSENT) if isinstance(section, dict) else _ABSENT
    return section


def _mismatch(value: Any, declared: type) -> bool:
    if value is _ABSENT or isinstance(value, bool):
        return False
    if declared is float:  # float | None: an int is refused
        return isinstance(value, int)
    return not isinstance(value, declared)  # int: None or any other type is refused


def strict_type_mismatches(model_type: str, config: dict[str, Any], outer_type: str = "") -> tuple[str, ...]:
    """The fields of `model_type`'s strict config class that `config` states with another type; none where the outer
    config class (`outer_type`) builds the section with its own class (OWN_TEXT_CLASS)."""
    if outer_type in OWN_TEXT_CLASS:
        return ()
    return tuple(
        name
        for name, declared in TYPED_FIELDS.get(model_type, ())
        if _mismatch(_value(config, name), declared)
    )


def refuse_strict_types(model: ModelSpec, strict_types: frozenset[str], loader: str) -> None:
    """Raise InputError naming the first mismatched field where `loader` (an engine release and the transformers it
    pins, e.g. "SGLang 0.5.23 (transformers 5.19)") loads this model type through a strict config class."""
    if model.strict_type_mismatches and (model.config_model_type or model.model_type) in strict_types:
        name = model.strict_type_mismatches[0]
        raise InputError(
            f"{loader} cannot load this config: its config class types {name} otherwise than the config states it "
            "(StrictDataclassFieldValidationError as the config loads)",
            field=name,
            source=model.source,
        )
