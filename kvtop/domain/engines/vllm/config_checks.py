"""Configs vLLM refuses while it reads them, before any weight or KV is sized (docs/engines/vllm.md §3.6).

- A RoPE type its `get_rope` has no class for (model_executor/layers/rotary_embedding/__init__.py: "Unknown RoPE
  scaling type X"), after `patch_legacy_rope_type` (transformers_utils/config.py) renames the legacy `su`,
  `mrope` and `telechat3-yarn`. MLC's GPT-J preset adds `rope_scaling: {rope_type: gptj}`: refused.
- A nested `text_config` the top-level config class does not build (its model_type is the text model's own, so
  the section stays a dict): `get_hf_text_config` raises "The text_config extracted from the model config does
  not have `num_attention_heads` attribute." MLC's ministral3 preset says `model_type` ministral3 at the top
  where the Hub's says mistral3: refused.
- Gemma-4 Unified without a `vision_config` (v0.33.0 model_executor/models/gemma4_unified.py: its encoder-free
  vision embedder is built unconditionally: "Gemma4 Unified requires a vision configuration").
- A field its transformers 5.x config class types otherwise than config.json states it (DBRX's
  ffn_config.moe_normalize_expert_weights: 1, typed float; architectures/strict_fields.py): v0.33.0 pins transformers 5.20.2,
  whose `@strict` DbrxFFNConfig raises StrictDataclassFieldValidationError as the config loads; v0.13.0's 4.57.6
  takes it.
- HunYuan MoE (HunYuanMoEV1ForCausalLM) from v0.33.0: the registry hands it to the Transformers backend
  (registry.py `_TRANSFORMERS_SUPPORTED_MODELS`: TransformersMoEForCausalLM), which builds transformers'
  HunYuanMoEV1 modules — experts and a shared MLP on every layer whatever `num_experts`, an fp32 gate, q/k norms
  always (models/hunyuan_v1_moe/modeling_hunyuan_v1_moe.py) — not the hunyuan_v1_moe entry's reading (SGLang's
  models/hunyuan.py, and v0.13.0's own hunyuan_v1.py, read alike): refused as not modelled, not planned.
- Zaya (ZayaForCausalLM) on v0.33.0: no class of vLLM's own; its Transformers backend would build transformers
  5.20.2's Zaya layers, not SGLang's CCA layers and ZayaBlocks the zaya entry reads (BACKEND_NOT_MODELLED_ERAS).
- A Nemotron-H config that gives its layers as `layers_block_type` only (no `hybrid_override_pattern`) on v0.13.0:
  its own NemotronHConfig (transformers_utils/configs/nemotron_h.py) reads only the pattern string and falls back
  to its default pattern, another model than the list; v0.33.0 loads transformers 5.x's class, which reads the list.
- Ling-3 (BailingMoeV3ForCausalLM) on v0.33.0: vLLM reads its bailing_hybrid config through transformers 5.20.2's
  @strict BailingHybridConfig, which refuses an integer kda_lower_bound (Ling-3.0-tiny's -5: "expected float, got
  int") and defines no use_bias, which models/bailing_moe_v3.py BailingMoeV3MLP reads (AttributeError): the registry
  sweep's rows of recon--inclusionAI--Ling-3.0-tiny and its -float-bound variant. With low-rank KDA gates
  (no_kda_lora false, the config classes' default) BailingMoeV3KimiDeltaAttention.__init__ raises "BailingMoeV3 KDA
  currently expects no_kda_lora=True" (models/bailing_moe_v3.py:686-687): the -kda-lora variant's rows.
- Hunyuan-V3 (HYV3ForCausalLM) on v0.33.0 without route_norm, first_k_dense_replace or expert_hidden_dim:
  models/hy_v3.py reads them off transformers 5.20.2's HYV3Config, which defines none ("first_k_dense_replace not
  exist", or AttributeError).
- LongCat-Flash (LongcatFlashForCausalLM) on v0.33.0 without mla_scale_q_lora, mla_scale_kv_lora or zero_expert_type:
  models/longcat_flash.py reads them off transformers 5.20.2's LongcatFlashConfig, which defines none of them
  (scale_mla_lora_norms_on_load: AttributeError; LongcatMoe: assert config.zero_expert_type is not None).
- A model type neither transformers 5.20.2's auto mapping nor vLLM's own config registry
  (transformers_utils/config.py `_CONFIG_REGISTRY`) knows, with no `auto_map` (no configuration code ships to
  trust): v0.33.0's get_config hands it to AutoConfig, which raises "The checkpoint you are trying to load has model
  type `deepseek_ref` but Transformers does not recognize this architecture" (sgl-project's DeepSeek-V4 FP8 configs;
  the registry names `deepseek_v4`, not it; IFM/K2-Horizon-375B-A23B's `k2_horizon`, whose model vLLM registers
  without a config class). Only the types seen in real configs are listed.
- Step-3.7 (Step3p7ForConditionalGeneration) on v0.33.0, whatever the config: models/step3p7.py builds step_vl.py's
  PerceptionEncoder, whose __init__ (step_vl.py:361-364) reads the vision config's output_dim or width, heads and
  layers; transformers 5.20.2's Step3p7VisionConfig renames width, heads and layers on load (__post_init__ pops them
  into hidden_size, num_attention_heads, num_hidden_layers) and has no output_dim: AttributeError.
- Voxtral (VoxtralForConditionalGeneration) from a config.json, on v0.13.0 and v0.33.0: models/voxtral.py
  __init__ reads `audio_config.downsample_factor`, which only vLLM's Mistral-format parser writes (from params.json,
  `--config-format mistral`); transformers' VoxtralEncoderConfig (4.57.6, 5.20.2) has no such field: AttributeError.
"""

from __future__ import annotations

from kvtop.domain.architectures.strict_fields import refuse_strict_types
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.model import ModelSpec, StateKind

# get_rope's RoPE types (and the legacy names patch_legacy_rope_type / patch_rope_parameters_dict rename), read at
# v0.13.0 and v0.33.0 (rotary_embedding/__init__.py; transformers_utils/config.py); a release between takes the
# list read before it
_V0_13_ROPE = ("default", "llama3", "mllama4", "linear", "ntk", "dynamic", "xdrope", "yarn", "deepseek_yarn",
               "deepseek_llama_scaling", "longrope", "su", "mrope")  # fmt: skip
_V0_33_ROPE = ("default", "bailing_mrope", "proportional", "llama3", "mllama4", "linear", "ntk", "dynamic", "yarn",
               "deepseek_yarn", "deepseek_llama_scaling", "longrope", "openpangu", "su", "mrope", "telechat3-yarn")  # fmt: skip
ROPE_TYPES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "before v0.13.0 not read: no type refused"),
    Era("0.13.0", frozenset(_V0_13_ROPE), "v0.13.0 get_rope; patch_rope_parameters_dict (su, mrope)"),
    Era("0.33.0", frozenset(_V0_33_ROPE), "v0.33.0 get_rope; patch_legacy_rope_type (su, mrope, telechat3-yarn)"),
))  # fmt: skip
# get_hf_text_config's check of the text section, read at v0.13.0 and v0.33.0 (transformers_utils/config.py)
TEXT_CONFIG_CHECKED_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.13.0 not read"),
    Era("0.13.0", True, "transformers_utils/config.py get_hf_text_config: hasattr(text_config, num_attention_heads)"),
))  # fmt: skip
# gemma4_unified.py Gemma4UnifiedForConditionalGeneration.__init__, read at v0.33.0 (not before: no such class read)
VISION_REQUIRED_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "before v0.33.0 not read"),
    Era("0.33.0", frozenset({"Gemma4UnifiedForConditionalGeneration"}), "v0.33.0 gemma4_unified.py"),
))  # fmt: skip
# A looped model (ModelSpec.kv_passes > 1: Nanbeige-4.2's num_loops) has no class of vLLM's own: v0.33.0's registry
# hands NanbeigeForCausalLM to the Transformers backend (registry.py _TRANSFORMERS_SUPPORTED_MODELS), which creates
# one Attention per num_hidden_layers (models/transformers/base.py _create_attention_instances), so every pass
# would write the same layer's KV; with no meta build of it (custom code) kvtop does not plan it on vLLM.
LOOPED_NOT_MODELLED = (
    "a looped transformer on vLLM: its Transformers backend keeps one KV per num_hidden_layers layer, which each "
    "pass over the weight-tied layers would share (models/transformers/base.py); not planned without a build of it"
)
# looped classes vLLM builds itself, an Attention per loop (kv.py reads the passes): v0.33.0 iquest_loopcoder.py
# LoopCoderAttention (loop 0 full, the others windowed to loop_window_size); v0.13.0 has no such file
LOOPED_CLASSES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "before v0.33.0 read: no looped class of vLLM's own"),
    Era("0.33.0", frozenset({"IQuestLoopCoderForCausalLM"}), "v0.33.0 models/iquest_loopcoder.py"),
))  # fmt: skip
# the model types whose config class vLLM loads is a transformers `@strict` one (architectures/strict_fields): v0.33.0
# pins transformers 5.20.2 (DbrxConfig; its deepseek_v4 is transformers' DeepseekV4Config, without kv_lora_rank),
# v0.13.0 4.57.6 (no strict validation); a release between takes v0.13.0's reading
STRICT_CONFIG_TYPES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "before v0.33.0 read: transformers 4.x (v0.13.0 pins 4.57.6) does not check field types"),
    Era("0.33.0", frozenset({"dbrx", "bailing_moe_v3"}),
        "v0.33.0 pins transformers 5.20.2: models/dbrx/configuration_dbrx.py, models/bailing_hybrid/"
        "configuration_bailing_hybrid.py @strict (Ling-3's bailing_hybrid config: kvtop's bailing_moe_v3)"),
))  # fmt: skip
# classes v0.33.0 builds through its Transformers backend with modules the family's entry does not read
# (ZayaForCausalLM: transformers 5.20.2's models/zaya, "hybrid" layers each of attention and experts, not SGLang's
# legacy CCA / ZayaBlock alternation the zaya entry reads; its @strict ZayaConfig also refuses the legacy config's
# rope_scaling false: the registry sweep's rows of Zyphra--ZAYA1-8B-legacy, StrictDataclassFieldValidationError)
BACKEND_NOT_MODELLED_ERAS: Eras[dict[str, str]] = Eras((
    Era("", {}, "v0.13.0 hunyuan_v1.py builds HunYuanMoEV1 as SGLang does (read, not meta-built); no Zaya class"),
    Era("0.29.0", {"HunYuanMoEV1ForCausalLM": "experts and a shared MLP on every layer whatever num_experts, an fp32 "
                   "gate, q/k norms"},
        "first in v0.29.0: registry.py:688 _TRANSFORMERS_SUPPORTED_MODELS maps HunYuanMoEV1ForCausalLM to "
        "TransformersMoEForCausalLM (v0.28.0 registry.py:129: hunyuan_v1)"),
    Era("0.33.0", {"HunYuanMoEV1ForCausalLM": "experts and a shared MLP on every layer whatever num_experts, an fp32 "
                   "gate, q/k norms", "ZayaForCausalLM": "transformers' own Zaya layers, not SGLang's CCA layers and "
                   "ZayaBlocks"},
        "v0.33.0 registry.py:756 (TransformersMoEForCausalLM); Zaya is in no release's registry: the Transformers "
        "backend builds it from transformers' models/zaya (in 5.16.1, v0.32.0's and v0.33.0's floor), read at "
        "v0.33.0 only"),
))  # fmt: skip
# whether the release's NemotronHConfig reads `layers_block_type` (else only hybrid_override_pattern)
BLOCK_LIST_READ_ERAS: Eras[bool] = Eras((
    Era("", True, "before v0.13.0 not read"),
    Era("0.13.0", False, "v0.13.0 transformers_utils/configs/nemotron_h.py: hybrid_override_pattern only"),
    Era("0.32.0", True, "v0.33.0 loads transformers 5.20.2's NemotronHConfig (layers_block_type); first in v0.32.0, "
        "which drops transformers_utils/configs/nemotron_h.py and requires transformers>=5.16.1, whose NemotronHConfig "
        "reads the list in 5.20's words (mlp, linear_attention, full_attention, moe; the 5.16.1 wheel). v0.24.0-v0.31.0 "
        "require >=5.5.3 / >=5.10.4, whose lists take other words (5.5.3: mamba, attention, moe): read as not"),
))  # fmt: skip
# fields a class reads that its config class does not define, by class (ModelSpec.unstated_fields names the unstated)
UNDEFAULTED_FIELDS_ERAS: Eras[dict[str, tuple[str, ...]]] = Eras((
    Era("", {}, "before v0.33.0 not read: none refused"),
    Era("0.33.0", {"LongcatFlashForCausalLM": ("mla_scale_q_lora", "mla_scale_kv_lora", "zero_expert_type"),
                   "HYV3ForCausalLM": ("route_norm", "first_k_dense_replace", "expert_hidden_dim"),
                   "BailingMoeV3ForCausalLM": ("use_bias",)},
        "v0.33.0 models/longcat_flash.py, models/hy_v3.py, models/bailing_moe_v3.py (BailingMoeV3MLP: config.use_bias) "
        "over transformers 5.20.2's config classes (no such fields)"),
))  # fmt: skip
# model types v0.33.0's AutoConfig (transformers 5.20.2) and its _CONFIG_REGISTRY both lack, seen in real configs
UNKNOWN_MODEL_TYPES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "before v0.33.0 not read"),
    # k2_horizon: IFM/K2-Horizon-375B-A23B's config.json (no auto_map); vLLM 0.33.0 registers the model
    # (models/k2_horizon.py) but no config class, nor does transformers 5.20.2 (registry sweep: TP 1 and 2 refused)
    Era("0.33.0", frozenset({"deepseek_ref", "k2_horizon"}),
        "v0.33.0 transformers_utils/config.py get_config: _CONFIG_REGISTRY (deepseek_v4, not deepseek_ref; no "
        "k2_horizon), else AutoConfig.from_pretrained"),
))  # fmt: skip
# classes no config lets vLLM build (its own code fails on what transformers' config class holds), → why
BROKEN_CLASSES_ERAS: Eras[dict[str, str]] = Eras((
    Era("", {}, "before v0.33.0 not read"),
    Era("0.33.0", {"Step3p7ForConditionalGeneration": (
        "step_vl.py:361-364 (PerceptionEncoder.__init__) reads the vision config's output_dim or width, heads and "
        "layers, which transformers 5.20.2's Step3p7VisionConfig renames on load (hidden_size, num_attention_heads, "
        "num_hidden_layers) and does not define (output_dim): AttributeError")},
        "v0.33.0 models/step3p7.py -> models/step_vl.py PerceptionEncoder; transformers 5.20.2 "
        "configuration_step3p7.py Step3p7VisionConfig.__post_init__"),
))  # fmt: skip
# classes vLLM builds from a Mistral-format params.json only: a config.json of them fails in its own code, → why
PARAMS_JSON_ONLY_ERAS: Eras[dict[str, str]] = Eras((
    Era("", {}, "before v0.13.0 not read"),
    Era("0.13.0", {"VoxtralForConditionalGeneration": (
        "voxtral.py VoxtralForConditionalGeneration.__init__ reads audio_config.downsample_factor, which only its "
        "Mistral-format parser writes (params.json's whisper_model_args; --config-format mistral) and transformers' "
        "VoxtralEncoderConfig does not define: AttributeError")},
        "v0.13.0 voxtral.py:354 (transformers 4.57.6), v0.33.0 voxtral.py:327 (transformers 5.20.2); "
        "transformers_utils/configs/mistral.py _remap_mistral_audio_args"),
))  # fmt: skip
# classes whose KDA vLLM builds only with full-rank gates (no_kda_lora): low-rank (f_a / f_b, g_a / g_b) refused
FULL_RANK_KDA_ONLY_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "before v0.28.0 no Ling-3 class (v0.27.1 registry.py has no BailingMoeV3ForCausalLM)"),
    Era("0.28.0", frozenset({"BailingMoeV3ForCausalLM"}),
        "first in v0.28.0: models/bailing_moe_v3.py:644-645 (BailingMoeV3KimiDeltaAttention.__init__: 'expects "
        "no_kda_lora=True'), registry.py:82"),
    Era("0.30.0", frozenset({"BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration"}),
        "first in v0.30.0: registry.py:353 BailingMoeV3VLForConditionalGeneration (bailing_moe_v3_vl.py builds "
        "BailingMoeV3ForCausalLM over text_config); v0.33.0 bailing_moe_v3.py:686-687"),
))  # fmt: skip
TEXT_CONFIG_WORDS = (
    "The text_config extracted from the model config does not have `num_attention_heads` attribute."
)


def check_config(model: ModelSpec, version: ResolvedVersion) -> None:
    """Raise InputError where vLLM `version` refuses the config as it reads it."""
    stated = model.config_model_type or model.model_type
    if stated in era_for(UNKNOWN_MODEL_TYPES_ERAS, version).value and not model.auto_map_models:
        raise InputError(
            f"vLLM {version.label} cannot read model_type {stated!r}: neither transformers 5.20 nor vLLM's config "
            "registry knows it and the config has no auto_map ('Transformers does not recognize this architecture')",
            field="model_type",
            source=model.source,
        )
    broken = era_for(BROKEN_CLASSES_ERAS, version).value.get(model.architecture)
    if broken is not None:
        raise InputError(f"vLLM {version.label} cannot build {model.architecture} from any config: {broken}",
                         field="architectures", source=model.source)  # fmt: skip
    params_only = era_for(PARAMS_JSON_ONLY_ERAS, version).value.get(model.architecture)
    if params_only is not None and not model.config_format:
        raise InputError(f"vLLM {version.label} cannot build {model.architecture} from a config.json: {params_only}",
                         field="architectures", source=model.source)  # fmt: skip
    known = era_for(ROPE_TYPES_ERAS, version).value
    if known and model.rope_type and model.rope_type not in known:
        raise InputError(
            f"vLLM {version.label} has no RoPE class for rope_type {model.rope_type!r} ('Unknown RoPE scaling type "
            f"{model.rope_type}'): get_rope takes {', '.join(sorted(known))}",
            field="rope_scaling.rope_type",
            source=model.source,
        )
    if model.text_config_of_own_type and era_for(TEXT_CONFIG_CHECKED_ERAS, version).value:
        raise InputError(
            f"vLLM {version.label} refuses it: model_type {model.config_model_type or model.model_type!r} is the "
            f"text model's own config class, which leaves the nested text_config a plain dict ('{TEXT_CONFIG_WORDS}')",
            field="model_type",
            source=model.source,
        )
    refuse_strict_types(model, era_for(STRICT_CONFIG_TYPES_ERAS, version).value, f"vLLM {version.label} (transformers 5.20)")
    if model.kv_passes > 1 and model.architecture not in era_for(LOOPED_CLASSES_ERAS, version).value:
        raise UnsupportedModelError(f"{model.kv_passes} passes ({LOOPED_NOT_MODELLED}) are not modelled",
                                    field="num_loops", source=model.source)  # fmt: skip
    if model.block_words and not era_for(BLOCK_LIST_READ_ERAS, version).value:
        raise InputError(
            f"vLLM {version.label}'s NemotronHConfig reads only hybrid_override_pattern (its default pattern where the "
            "config states none), not layers_block_type: it would build another model than this list",
            field="layers_block_type",
            source=model.source,
        )
    undefaulted = era_for(UNDEFAULTED_FIELDS_ERAS, version).value.get(model.architecture, ())
    missing = [name for name in undefaulted if name in model.unstated_fields]
    if missing:
        raise InputError(
            f"vLLM {version.label} cannot build {model.architecture} without {', '.join(missing)}: its model reads "
            "them off transformers' config class, which defines none (AttributeError, an assert or a ValueError)",
            field=missing[0],
            source=model.source,
        )
    state = model.state
    low_rank_kda = state is not None and state.kind is StateKind.KIMI_DELTA and not state.full_rank_forget
    if low_rank_kda and model.architecture in era_for(FULL_RANK_KDA_ONLY_ERAS, version).value:
        raise InputError(f"vLLM {version.label} refuses {model.architecture}'s low-rank KDA gates (no_kda_lora false): "
                         "'BailingMoeV3 KDA currently expects no_kda_lora=True'", field="no_kda_lora",
                         source=model.source)  # fmt: skip
    backend = era_for(BACKEND_NOT_MODELLED_ERAS, version).value.get(model.architecture)
    if backend is not None:
        raise UnsupportedModelError(
            f"vLLM {version.label} builds {model.architecture} with its Transformers backend from transformers' modules "
            f"({backend}), which kvtop's entry (SGLang's class) does not read: not modelled on this release",
            field="architectures",
            source=model.source,
        )
    if model.vision is None and model.architecture in era_for(VISION_REQUIRED_ERAS, version).value:
        raise InputError(
            f"vLLM {version.label} refuses {model.architecture} without a vision_config ('Gemma4 Unified requires a "
            "vision configuration': gemma4_unified.py builds its vision embedder unconditionally)",
            field="vision_config",
            source=model.source,
        )
