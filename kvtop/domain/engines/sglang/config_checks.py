"""Configs SGLang cannot build from what they hold, on any device (docs/engines/sglang.md §4.7), refused as the
engine fails: each read in SGLang 0.5.23's source (with its pinned transformers 5.19.0) and seen in the registry
sweep's meta builds (engine-diff `sglang_config_failures.py`: the engine refuses at TP 1 and 2).

- A model type neither transformers nor SGLang's config registry knows, with no `auto_map` (no configuration code
  ships to trust): AutoConfig's "Transformers does not recognize this architecture" (sgl-project's DeepSeek-V4
  FP8 configs say `deepseek_ref`; utils/hf_transformers/common.py registers `deepseek_v4`, not it; LLaVA-1.6-Mistral's
  `llava_mistral`, whose LlavaConfig is LLaVA's package code).
- MiMo-V2-Flash (model_type mimo_v2_flash, whichever MiMoV2 class): MiMoV2DecoderLayer (models/mimo_v2.py) hands `config.rope_scaling` to `get_rope`; transformers
  5.19's MiMoV2FlashConfig holds one rope dict per layer type, which get_rope's cache key cannot hash. MiMo-V2.5's
  model_type mimo_v2 loads the checkpoint's own MiMoV2Config (auto_map), whose rope_scaling is the config's: built.
- A MIXED_PRECISION ModelOpt NemotronH whose config.json holds no `quantization_config` (its layers in
  hf_quant_config.json): the NemotronH overrides (arg_groups/model_overrides/nemotron_h.py) read
  `hf_config.quantization_config["quantized_layers"]`.
- Mistral3ForConditionalGeneration under a top-level model_type that is the text model's own (MLC's ministral3
  preset): the config class leaves `vision_config` a dict and models/mistral.py sets `pad_image_border` on it.
- LlavaForConditionalGeneration with a CLIP tower: llava.py resolves CLIPVisionConfig to CLIPVisionModel, which
  SGLang does not register, so the Transformers backend builds it and reads `get_input_embeddings()
  .num_embeddings` of CLIP's patch Conv2d.
- Cohere2VisionForConditionalGeneration over a dense Cohere2 text config: models/cohere2_vision.py always builds
  Cohere2MoeForCausalLM, whose MoE block (models/cohere2_moe.py) reads `config.num_experts`.
- Gemma4ForCausalLM (a text-only Gemma-4, model_type gemma4_text): HfModelConfigParser.parse
  (utils/hf_transformers/config.py) asks `hasattr(config, key)` for each key of the text config, and transformers
  5.19's Gemma4TextConfig is heterogeneous (per_layer_config: the class default and the Hub's gemma-4 text configs
  alike), so `head_dim` raises AmbiguousGlobalPerLayerAttributeError, which hasattr does not catch. The
  multimodal classes ask it of their outer config, which is not heterogeneous.
- A field its transformers 5.x config class types otherwise than config.json states it (architectures/
  strict_fields.py): transformers 5.19.0's `@strict` classes raise StrictDataclassFieldValidationError as the config
  loads (0.5.6.post2 pins 4.57.1: no check): DBRX's ffn_config.moe_normalize_expert_weights 1 (DbrxFFNConfig: float),
  RedHatAI's DeepSeek-V4-Flash-NVFP4-FP8 kv_lora_rank null (DeepseekV3Config, SGLang's deepseek_v4 base: int).
- A Nemotron-H config whose `layers_block_type` uses transformers 5.x's words (linear_attention, full_attention, as
  transformers' NemotronHConfig writes them and vLLM 0.33.0 reads them): SGLang's own NemotronHConfig
  (configs/nemotron_h.py _validate_layers_block_type) accepts only mamba, attention, mlp, moe ("contains invalid
  types").
- Hunyuan-V3 (HYV3ForCausalLM) without route_norm: HYV3MoEFused (models/hunyuan_v3.py) reads it, and transformers
  5.19's HYV3Config defines none.
- LongCat-Flash (LongcatFlashForCausalLM) without a rope_theta inside rope_scaling: LongcatFlashDecoderLayer
  (models/longcat_flash.py) reads `"rope_theta" in config.rope_parameters`, and SGLang's own LongcatFlashConfig sets
  rope_parameters from rope_scaling (transformers 5.19's setter), None where the config states none.
- InternS1ProForConditionalGeneration, whatever the config: Qwen2MoeModel's layer builder (models/qwen2_moe.py)
  passes `start_layer=` to the decoder layer class, and models/interns1pro.py's InternS1ProTextDecoderLayer takes
  none ("unexpected keyword argument 'start_layer'").
- MuseGlimmerForCausalLM from a transformers-form text config (model_type muse_glimmer_text): models/muse_glimmer.py
  reads SGLang's own MuseGlimmerConfig fields (output_soft_cap_temp, rope_theta, no_rope_layers …), built from a
  GGUF file or the composite muse_glimmer form; transformers 5.19's MuseGlimmerTextConfig holds none of them.
- Ling-2.5 (BailingMoeV2_5ForCausalLM) whose num_hidden_layers layer_group_size does not divide: models/
  bailing_moe_linear.py BailingMoeV2_5Model asserts `num_layers % layer_group_size == 0` (vLLM 0.33.0 builds the
  layers past the last group as lightning layers, as kvtop reads them: its is_linear_layer, (i + 1) % group != 0).
Releases before 0.5.23 are not checked (no refusal); later ones take 0.5.23's reading, as every era here.
"""

from __future__ import annotations

from kvtop.domain.architectures.strict_fields import refuse_strict_types
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.model import LayerKind, ModelSpec

_NOT_CHECKED = "not checked before 0.5.23"
# model types AutoConfig (transformers 5.19.0) and SGLang's _CONFIG_REGISTRY both lack, seen in real configs
UNKNOWN_MODEL_TYPES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), _NOT_CHECKED),
    # llava_mistral: LLaVA-1.6-Mistral's config.json (liuhaotian/llava-v1.6-mistral-7b, LlavaMistralForCausalLM) names
    # LLaVA's own LlavaConfig(MistralConfig), whose code ships in the LLaVA package, not the checkpoint (no auto_map):
    # sgl-project/sglang#128 "has model type `llava_mistral` but Transformers does not recognize this architecture"
    Era("0.5.23", frozenset({"deepseek_ref", "llava_mistral"}),
        "utils/hf_transformers/common.py _CONFIG_REGISTRY (deepseek_v4 only; no llava_mistral)"),
))  # fmt: skip
# the model types whose config class (transformers 5.19's) holds one rope dict per layer type, which
# models/mimo_v2.py MiMoV2DecoderLayer hands to get_rope (both EntryClass classes build it): MiMoV2FlashConfig
# (models/mimo_v2_flash, model_type mimo_v2_flash) fills rope_parameters {"full_attention": {...},
# "sliding_attention": {...}}. MiMo-V2.5's model_type mimo_v2 is the checkpoint's own MiMoV2Config (auto_map), which
# keeps config.json's rope_scaling (absent: None; {"rope_type": "default"}: SGLang reads None): SGLang builds it
ROPE_DICT_TYPES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), _NOT_CHECKED),
    Era("0.5.23", frozenset({"mimo_v2_flash"}),
        "models/mimo_v2.py MiMoV2DecoderLayer -> get_rope; transformers 5.19 configuration_mimo_v2_flash.py"),
))  # fmt: skip
MIXED_QUANT_CONFIG_CLASSES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "no read of quantized_layers in _nemotron_h_overrides (arg_groups/overrides.py:727-789 at "
                         "0.5.15, :1176 on at 0.5.17; nemotron_h_hook.py at 0.5.14); before 0.5.14 not checked"),
    Era("0.5.18", frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"}),
        "arg_groups/overrides.py:1262-1267 at 0.5.18, model_overrides/nemotron_h.py:51-57 at 0.5.19: "
        "hf_config.quantization_config.get('quantized_layers') for ModelConfig's modelopt_mixed"),
    Era("0.5.20", frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", "NemotronH_Omni_Reasoning_V3"}),
        "arg_groups/model_overrides/nemotron_h.py _nemotron_h_overrides (:61-67 at 0.5.20, 0.5.23 alike)"),
))  # fmt: skip
DICT_VISION_CONFIG_CLASSES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), _NOT_CHECKED),
    Era("0.5.23", frozenset({"Mistral3ForConditionalGeneration"}), "models/mistral.py: pad_image_border"),
))  # fmt: skip
CLIP_TOWER_CLASSES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), _NOT_CHECKED),
    Era("0.5.23", frozenset({"LlavaForConditionalGeneration"}),
        "models/llava.py _get_sgl_model_cls -> models/transformers.py (vocab from get_input_embeddings)"),
))  # fmt: skip
CLIP_TOWER = "CLIPVisionConfig"
HETEROGENEOUS_TEXT_CLASSES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), _NOT_CHECKED),
    Era("0.5.23", frozenset({"Gemma4ForCausalLM"}), "utils/hf_transformers/config.py HfModelConfigParser.parse"),
))  # fmt: skip
MOE_ONLY_CLASSES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), _NOT_CHECKED),
    Era("0.5.23", frozenset({"Cohere2VisionForConditionalGeneration"}),
        "models/cohere2_vision.py builds Cohere2MoeForCausalLM (cohere2_moe.py reads config.num_experts)"),
))  # fmt: skip

# classes no config lets SGLang build (its own code fails), → where
BROKEN_CLASSES_ERAS: Eras[dict[str, str]] = Eras((
    Era("", {}, _NOT_CHECKED),
    Era("0.5.23", {"InternS1ProForConditionalGeneration": "models/qwen2_moe.py's layer builder passes start_layer=, "
                   "which models/interns1pro.py's InternS1ProTextDecoderLayer does not take"},
        "models/qwen2_moe.py Qwen2MoeModel (make_pp_layers) -> models/interns1pro.py InternS1ProTextDecoderLayer"),
))  # fmt: skip
# (class, model_type) pairs whose config class (transformers') lacks the fields SGLang's model reads from its own
FOREIGN_CONFIG_CLASS_ERAS: Eras[dict[tuple[str, str], str]] = Eras((
    Era("", {}, _NOT_CHECKED),
    Era("0.5.23", {("MuseGlimmerForCausalLM", "muse_glimmer_text"): "output_soft_cap_temp"},
        "models/muse_glimmer.py MuseGlimmerForCausalLM reads configs/muse_glimmer.py MuseGlimmerConfig's fields"),
))  # fmt: skip

# classes whose model asserts that layer_group_size divides num_hidden_layers (their layer rule puts full attention
# on each group's last layer, so the last layer is full exactly when the groups are whole)
WHOLE_GROUP_CLASSES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), _NOT_CHECKED),
    Era("0.5.23", frozenset({"BailingMoeV2_5ForCausalLM"}),
        "models/bailing_moe_linear.py BailingMoeV2_5Model.__init__: assert num_layers % layer_group_size == 0"),
))  # fmt: skip

# the model types whose config class SGLang loads is a transformers `@strict` one (architectures/strict_fields)
STRICT_CONFIG_TYPES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "not checked before 0.5.23 (0.5.6.post2 pins transformers 4.57.1: no strict typing)"),
    Era("0.5.23", frozenset({"dbrx", "deepseek_v4"}),
        "pins transformers 5.19.0: models/dbrx/configuration_dbrx.py; deepseek_v4 through DeepseekV3Config "
        "(utils/hf_transformers/common.py _DeepseekV4ConfigAlias)"),
))  # fmt: skip

# LongCat-Flash: LongcatFlashDecoderLayer reads rope_theta from config.rope_parameters, which SGLang's own
# LongcatFlashConfig sets from rope_scaling (transformers 5.19's rope_scaling setter): None unless rope_scaling is
# stated with a rope_theta ("argument of type 'NoneType' is not iterable", or a KeyError)
# Hunyuan-V3: HYV3MoEFused reads config.route_norm, which transformers 5.19's HYV3Config does not define
UNDEFAULTED_FIELDS_ERAS: Eras[dict[str, tuple[str, ...]]] = Eras((
    Era("", {}, _NOT_CHECKED),
    Era("0.5.23", {"LongcatFlashForCausalLM": ("rope_scaling.rope_theta",), "HYV3ForCausalLM": ("route_norm",),
                   "Mamba2ForCausalLM": ("intermediate_size",)},
        "models/longcat_flash.py LongcatFlashDecoderLayer (configs/longcat_flash.py sets self.rope_scaling); "
        "models/hunyuan_v3.py HYV3MoEFused; "
        "configs/mamba2.py Mamba2Config.mamba2_cache_params and models/mamba2.py read intermediate_size, which "
        "transformers' Mamba2Config does not set (registry sweep: the default's AttributeError)"),
))  # fmt: skip

# the block words SGLang's own NemotronHConfig accepts in layers_block_type
BLOCK_WORDS_ERAS: Eras[frozenset[str] | None] = Eras((
    Era("", None, _NOT_CHECKED),
    Era("0.5.23", frozenset({"mamba", "attention", "mlp", "moe"}),
        "configs/nemotron_h.py NemotronHConfig._validate_layers_block_type"),
))  # fmt: skip


def check_config(model: ModelSpec, version: ResolvedVersion) -> None:
    """Raise InputError where SGLang `version` cannot build the model from this config (see the module docstring)."""
    label, arch, stated = version.label, model.architecture, model.config_model_type or model.model_type
    if stated in UNKNOWN_MODEL_TYPES_ERAS.at(version) and not model.auto_map_models:
        raise InputError(
            f"SGLang {label} cannot read model_type {stated!r}: neither transformers 5.19 nor SGLang's config registry "
            "knows it and the config has no auto_map ('Transformers does not recognize this architecture')",
            field="model_type",
            source=model.source,
        )
    refuse_strict_types(model, STRICT_CONFIG_TYPES_ERAS.at(version), f"SGLang {label} (transformers 5.19)")
    broken = BROKEN_CLASSES_ERAS.at(version).get(arch)
    if broken is not None:
        raise InputError(f"SGLang {label} cannot build {arch} from any config: {broken}", field="architectures",
                         source=model.source)  # fmt: skip
    unheld = FOREIGN_CONFIG_CLASS_ERAS.at(version).get((arch, stated))
    if unheld is not None:
        raise InputError(
            f"SGLang {label} cannot build {arch} from model_type {stated!r}: its model reads fields of SGLang's "
            f"own config class ({unheld} first), which transformers 5.19's config class does not hold",
            field="model_type",
            source=model.source,
        )
    if stated in ROPE_DICT_TYPES_ERAS.at(version):
        raise InputError(
            f"SGLang {label} cannot build {arch}: it hands config.rope_scaling to get_rope, and transformers 5.19's "
            f"config class of model_type {stated!r} holds one rope dict per layer type ('unhashable type: dict')",
            field="rope_parameters",
            source=model.source,
        )
    missing = [name for name in UNDEFAULTED_FIELDS_ERAS.at(version).get(arch, ()) if name in model.unstated_fields]
    if missing:
        raise InputError(
            f"SGLang {label} cannot build {arch} without {', '.join(missing)}: its model reads it and its config class "
            "leaves it unset (LongCat-Flash: rope_parameters comes from rope_scaling, None where absent)",
            field=missing[0],
            source=model.source,
        )
    quant = model.quant
    mixed_from_file = quant.scheme == "modelopt" and bool(quant.mixed) and quant.source != model.source
    if mixed_from_file and arch in MIXED_QUANT_CONFIG_CLASSES_ERAS.at(version):
        raise InputError(
            f"SGLang {label}'s {arch} overrides read config.json's quantization_config['quantized_layers'] for a "
            "MIXED_PRECISION ModelOpt checkpoint; this config.json has none (its layers are in "
            "hf_quant_config.json): 'object has no attribute quantization_config'",
            field="quantization_config",
            source=model.source,
        )
    if model.text_config_of_own_type and arch in DICT_VISION_CONFIG_CLASSES_ERAS.at(version):
        raise InputError(
            f"SGLang {label} cannot build {arch}: model_type {stated!r} is the text model's own config class, which "
            "leaves vision_config a dict, and the model sets pad_image_border on it",
            field="model_type",
            source=model.source,
        )
    tower = model.tower
    if tower is not None and tower.config_class == CLIP_TOWER and arch in CLIP_TOWER_CLASSES_ERAS.at(version):
        raise InputError(
            f"SGLang {label} cannot build {arch} with a CLIP tower: SGLang registers no CLIPVisionModel, and its "
            "Transformers backend reads the tower's input embeddings as a vocabulary (CLIP's is a patch Conv2d)",
            field="vision_config.model_type",
            source=model.source,
        )
    if model.moe is None and arch in MOE_ONLY_CLASSES_ERAS.at(version):
        raise InputError(
            f"SGLang {label} cannot build {arch} over a dense text config: it always builds Cohere2MoeForCausalLM, "
            "whose MoE block reads config.num_experts ('object has no attribute num_experts')",
            field="num_experts",
            source=model.source,
        )
    words = BLOCK_WORDS_ERAS.at(version)
    unread = sorted(set(model.block_words) - words) if words is not None else []
    if words is not None and unread:
        raise InputError(
            f"SGLang {label}'s NemotronHConfig reads layers_block_type words {', '.join(sorted(words))} only; this "
            f"config states {', '.join(unread)} (transformers 5.x's names): 'contains invalid types'",
            field="layers_block_type",
            source=model.source,
        )
    if arch in WHOLE_GROUP_CLASSES_ERAS.at(version) and model.layer_attention[-1:] != (LayerKind.FULL,):
        raise InputError(
            f"SGLang {label} cannot build {arch} with {model.num_layers} layers: its model asserts num_layers % "
            "layer_group_size == 0 (the layers past the last group would have no full-attention layer)",
            field="layer_group_size",
            source=model.source,
        )
    if arch in HETEROGENEOUS_TEXT_CLASSES_ERAS.at(version):
        raise InputError(
            f"SGLang {label} cannot read {arch}'s config: its parser asks hasattr(config, 'head_dim') of transformers "
            "5.19's heterogeneous Gemma4TextConfig, which raises ('head_dim' is a per-layer attribute)",
            field="architectures",
            source=model.source,
        )
