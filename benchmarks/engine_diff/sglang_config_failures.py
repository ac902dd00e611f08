"""engine-failures (SGLang runner): the failures of SGLang's own code on what a config.json holds, which every
launch of it meets on any device, told from a harness gap (the matching is engine_failures.py's).

The runner counts an AttributeError or TypeError raised in SGLang's code as a harness error (a stand-in may be the
cause). The ones listed here were each read in SGLang 0.5.23's source (its pinned transformers 5.19.0): the value
that fails comes from the config the engine parsed (transformers' config class, SGLang's config registry), never
from a stand-in, so the launch's answer is a refusal with its reason. Each entry names the innermost SGLang file
(under sglang/srt/) of the traceback, an SGLang function on it and the start of the exception's first line.

Two more readings of a config the harness holds as a bare config.json (no checkpoint code):
  - a model type neither transformers nor SGLang's config registry knows, in a config.json without `auto_map`:
    no configuration code ships with the checkpoint, so `--trust-remote-code` has nothing to run: a refusal;
  - the Transformers backend's "loading the custom model from auto_map failed": the checkpoint's modeling code
    is absent from the config folder (a hub checkout has it): a harness limit, not the engine's answer, unless
    that published class is one the backend refuses when it is there (REMOTE_CODE_WITHOUT_BACKEND: InternLM v1).

Imported inside the engine's venv (standard library only).
"""

from __future__ import annotations

import json
import os

if __package__:  # imported as benchmarks.engine_diff.… (kvtop's tests)
    from .engine_failures import Failure, first_line, known_failure
else:  # by name beside the runner, inside the engine's venv
    from engine_failures import Failure, first_line, known_failure

SGLANG_SOURCE = "/site-packages/sglang/srt/"

# (innermost file under sglang/srt/, a function of SGLang's on the traceback, the exception's first line) -> what
# SGLang reads and why it fails there (0.5.23)
ENGINE_FAILURES: dict[Failure, str] = {
    ("models/granitemoehybrid.py", "__init__", "'PPMissingLayer' object has no attribute 'weight'"): (
        "GraniteMoeHybridForCausalLM ties lm_head.weight to model.embed_tokens.weight (config.tie_word_embeddings); "
        "under PP a stage other than the first holds embed_tokens as a PPMissingLayer"
    ),
    ("models/gemma2.py", "__init__", "'Gemma2Config' object has no attribute 'hidden_act'"): (
        "Gemma2DecoderLayer reads config.hidden_act; transformers 5.19's Gemma2Config holds hidden_activation only "
        "and the config.json names no hidden_act"
    ),
    ("models/cohere2_moe.py", "__init__", "'Cohere2Config' object has no attribute 'num_experts'"): (
        "Cohere2VisionForConditionalGeneration always builds Cohere2MoeForCausalLM, whose MoE block reads "
        "config.num_experts; a dense Cohere2 text config has none"
    ),
    ("models/step3_vl.py", "__init__", "'Step3TextConfig' object has no attribute 'pad_token_id'"): (
        "Step3TextModel reads config.pad_token_id, which transformers 5's PreTrainedConfig no longer defines and "
        "this text_config does not state"
    ),
    ("models/exaone4.py", "__init__", "object of type 'int' has no len()"): (
        "Exaone4Attention takes len(config.sliding_window_pattern) (a pattern string such as 'LLLG'); "
        "this config holds an int"
    ),
    ("models/exaone_moe.py", "stage_facts", "'ExaoneMoeConfig' object has no attribute 'is_moe_layer'"): (
        "ExaoneMoe's stage_facts reads config.is_moe_layer, which this config does not hold"
    ),
    (
        "utils/hf_transformers/config.py",
        "parse",
        "'head_dim' is a per-layer attribute and may vary across layers.",
    ): (
        "get_config's HfModelConfigParser.parse asks hasattr(config, 'head_dim') of a heterogeneous config: "
        "transformers 5.19 raises AmbiguousGlobalPerLayerAttributeError, which hasattr does not catch"
    ),
    (
        "configs/qwen3_next.py",
        "layers_block_type",
        "'Qwen3_5TextConfig' object has no attribute 'full_attention_interval'",
    ): (
        "Qwen3NextConfig.layers_block_type reads config.full_attention_interval; this config gives layer_types only"
    ),
    (
        "configs/qwen3_next.py",
        "layers_block_type",
        "'Qwen3_5MoeTextConfig' object has no attribute 'full_attention_interval'",
    ): (
        "Qwen3NextConfig.layers_block_type reads config.full_attention_interval; this config gives layer_types only"
    ),
    ("configs/model_config.py", "get_hybrid_layer_ids", "'NoneType' object is not subscriptable"): (
        "get_hybrid_layer_ids indexes the config's hybrid_layer_pattern (MiMo-V2), which this config does not hold"
    ),
    ("layers/rotary_embedding/factory.py", "get_rope", "unhashable type: 'dict'"): (
        "MiMoV2 passes config.rope_scaling to get_rope; transformers 5.19's MiMoV2FlashConfig gives one rope dict "
        "per layer type ({'full_attention': {...}, 'sliding_attention': {...}}), which get_rope's cache key cannot hash"
    ),
    (
        "arg_groups/model_overrides/nemotron_h.py",
        "_nemotron_h_overrides",
        "'NemotronHConfig' object has no attribute 'quantization_config'",
    ): (
        "the NemotronH overrides read hf_config.quantization_config['quantized_layers'] for a MIXED_PRECISION "
        "ModelOpt checkpoint (hf_quant_config.json); the config.json holds no quantization_config"
    ),
    ("utils/hf_transformers/config.py", "parse", "Validation error for field 'kv_lora_rank':"): (
        "HfModelConfigParser.parse reloads a deepseek_v4 config with _CONFIG_REGISTRY's _DeepseekV4ConfigAlias "
        "(utils/hf_transformers/common.py), a transformers 5.19 DeepseekV3Config whose strict field kv_lora_rank is "
        "an int; this config states it null (StrictDataclassFieldValidationError)"
    ),
    ("models/mistral.py", "__init__", "'dict' object has no attribute 'pad_image_border'"): (
        "Mistral3ForConditionalGeneration sets config.vision_config.pad_image_border; a top-level model type "
        "'ministral3' (a text config class) leaves vision_config a plain dict"
    ),
    ("models/longcat_flash.py", "__init__", "argument of type 'NoneType' is not iterable"): (
        "LongcatFlashDecoderLayer tests `'rope_theta' in config.rope_parameters`; SGLang's own LongcatFlashConfig "
        "(configs/longcat_flash.py) sets rope_parameters only through transformers 5.19's rope_scaling setter, so it "
        "is None where rope_scaling states no rope_theta"
    ),
    ("models/hunyuan_v3.py", "__init__", "'HYV3Config' object has no attribute 'route_norm'"): (
        "HYV3MoEFused reads config.route_norm, which transformers 5.19's HYV3Config does not define and this "
        "config does not state"
    ),
    ("models/transformers.py", "__init__", "'Conv2d' object has no attribute 'num_embeddings'"): (
        "LlavaForConditionalGeneration builds its CLIP vision tower with the Transformers backend (SGLang's registry "
        "has no CLIPVisionModel), which reads get_input_embeddings().num_embeddings: CLIP's is its patch Conv2d"
    ),
    (
        "models/qwen2_moe.py",
        "<lambda>",
        "InternS1ProTextDecoderLayer.__init__() got an unexpected keyword argument 'start_layer'",
    ): (
        "Qwen2MoeModel's layer builder (make_pp_layers' lambda) passes start_layer= to the decoder layer class; "
        "models/interns1pro.py's InternS1ProTextDecoderLayer.__init__ takes no start_layer, so every "
        "InternS1ProForConditionalGeneration build fails, whatever the config"
    ),
    ("models/muse_glimmer.py", "__init__", "'MuseGlimmerTextConfig' object has no attribute 'output_soft_cap_temp'"): (
        "MuseGlimmerForCausalLM reads fields of SGLang's own MuseGlimmerConfig (configs/muse_glimmer.py: "
        "output_soft_cap_temp, rope_theta, no_rope_layers, use_qk_norm …), which it builds from a GGUF file "
        "(from_gguf) or the composite muse_glimmer form (from_dict); a muse_glimmer_text config is transformers "
        "5.19's MuseGlimmerTextConfig, which holds none of them (rope_theta only inside rope_parameters)"
    ),
    ("models/ernie45_vl.py", "__init__", "'Ernie4_5_VLMoeVisionConfig' object has no attribute 'in_chans'"): (
        "ernie45_vl.py:379 (Ernie4_5_VisionTransformer) reads the vision config of ERNIE-4.5-VL's own configuration "
        "code (in_chans, embed_dim, mlp_ratio); transformers 5.19's converted Ernie4_5_VLMoeConfig (model_type "
        "ernie4_5_vl_moe) names them in_channels, hidden_size and intermediate_size, so no config.json in the "
        "transformers format builds"
    ),
    ("models/mamba2.py", "__init__", "'Mamba2Config' object has no attribute 'intermediate_size'"): (
        "Mamba2DecoderLayer (models/mamba2.py:72) and configs/mamba2.py Mamba2Config.mamba2_cache_params read "
        "config.intermediate_size; SGLang's Mamba2Config subclasses transformers 5.19's, which defines expand and "
        "never sets intermediate_size, so a config.json that does not state it builds on no device"
    ),
    ("utils/hf_transformers/common.py", "get_context_length", "unsupported operand type(s) for *: 'NoneType'"): (
        "get_context_length multiplies the positions by rope_scaling.get('factor', 1); a rope_scaling that states "
        "'factor': null (Ming-flash-omni's video_rope) gives None, not the default 1"
    ),
}

# Failures of SGLang's code on what the harness gives it and a real launch would not (a registry default whose config
# class is not the one a launch of the class loads; a checkpoint file beyond config.json): the harness's gap, not the
# engine's answer, so the row stays a harness error with the reason named. Same keys as ENGINE_FAILURES.
HARNESS_CONFIG_LIMITS: dict[Failure, str] = {
    ("models/internvl.py", "__init__", "'InternVLVisionConfig' object has no attribute 'dropout'"): (
        "not the launch's config: the registry default is transformers' InternVLConfig (class_configs.json), whose InternVLVisionConfig has "
        "no dropout; SGLang 0.5.23's interns1.py builds InternVisionModel (models/internvl.py:89 InternAttention "
        "reads config.dropout, 247 InternVisionEncoderLayer) from the vision config of the checkpoint's own "
        "InternS1Config, which a real launch loads with --trust-remote-code (internlm/Intern-S1's user guide: "
        "sglang.launch_server --trust-remote-code) and the config folder lacks"
    ),
    ("models/mimo_audio.py", "_load_mimo_audio_tokenizer", "[Errno 2] No such file or directory:"): (
        "a checkpoint folder the config folder lacks: build_audio_encoder loads the checkpoint's audio tokenizer "
        "(<model>/audio_tokenizer/config.json, then its model.safetensors read with load_file) as a submodule of "
        "the model; no stand-in: its published config.json is not at hand, SGLang reads real weights from the file, "
        "and kvtop names that tokenizer not modelled (towers_mimo.py)"
    ),
}

# The checkpoint's own modeling classes (auto_map AutoModel / AutoModelForCausalLM) that the Transformers backend
# refuses once that code is there: srt/models/transformers.py TransformersForCausalLM.__init__ resolves the class
# (_resolve_attention_backend_model_cls) and raises "does not support custom attention backends" where its
# `_supports_attention_backend` is False, transformers 5.19.0's PreTrainedModel default. Each read in the published
# modeling file: class -> where it was read.
REMOTE_CODE_WITHOUT_BACKEND: dict[str, str] = {
    "modeling_internlm.InternLMForCausalLM": (
        "internlm/internlm-20b modeling_internlm.py: InternLMPreTrainedModel(PreTrainedModel) sets no "
        "_supports_attention_backend"
    ),
}

UNKNOWN_MODEL_TYPE = "Transformers does not recognize this architecture"
MODELING_CODE_MISSING = "loading the custom model from auto_map failed"


def _has_auto_map(folder: str) -> bool:
    try:
        with open(os.path.join(folder, "config.json")) as fh:
            return "auto_map" in json.load(fh)
    except (OSError, ValueError):
        return True  # unreadable: do not claim the checkpoint has no code


def _refused_remote_model(folder: str) -> str | None:
    """Where the config's auto_map model class is one REMOTE_CODE_WITHOUT_BACKEND lists, the published reading."""
    try:
        with open(os.path.join(folder, "config.json")) as fh:
            auto_map = json.load(fh).get("auto_map") or {}
    except (OSError, ValueError):
        return None
    for key in ("AutoModel", "AutoModelForCausalLM"):  # the order _resolve_attention_backend_model_cls tries
        if auto_map.get(key) in REMOTE_CODE_WITHOUT_BACKEND:
            return f"{auto_map[key]}, {REMOTE_CODE_WITHOUT_BACKEND[auto_map[key]]}"
    return None


CANNOT = "SGLang cannot build this config on any device:"
# a Mistral-format folder (params.json, no config.json) whose path names none of the models SGLang 0.5.23 reads
# params.json for (utils/hf_transformers/mistral_utils.py is_mistral_model): get_config reads config.json
NO_HF_CONFIG = "Unrecognized model in"
PARAMS_JSON_UNREAD = ("SGLang reads a params.json only where the model path names mistral-large-3, mistral-small-4 or "
                      "leanstral (utils/hf_transformers/mistral_utils.py is_mistral_model); elsewhere config.json, "
                      "which a Mistral-format checkpoint lacks")  # fmt: skip


def _mistral_format_only(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "params.json")) and not os.path.exists(
        os.path.join(folder, "config.json")
    )


def classify(exc: BaseException, case: dict[str, str]) -> tuple[str, str] | None:
    """(status, message) for a failure this module knows, else None (the runner's own classification)."""
    text, first = str(exc).strip(), first_line(exc)
    why = known_failure(exc, SGLANG_SOURCE, ENGINE_FAILURES)
    if why is not None:
        return "refused", f"{CANNOT} {why}"
    limit = known_failure(exc, SGLANG_SOURCE, HARNESS_CONFIG_LIMITS)
    if limit is not None:
        return "harness-error", limit
    if UNKNOWN_MODEL_TYPE in first and not _has_auto_map(case["dir"]):
        return "refused", (
            "neither transformers nor SGLang's config registry knows the model type and the config.json has no "
            f"auto_map (no configuration code to trust): {first}"
        )
    if NO_HF_CONFIG in first and _mistral_format_only(case["dir"]):
        return "refused", f"{PARAMS_JSON_UNREAD}: {first}"
    refused_code = _refused_remote_model(case["dir"])
    if MODELING_CODE_MISSING in text and refused_code:
        return "refused", (
            f"{CANNOT} _supports_attention_backend=False: its Transformers backend refuses the checkpoint's own "
            f"modeling class ({refused_code})"
        )
    if MODELING_CODE_MISSING in text:
        return "harness-error", f"the config folder holds no modeling code (a hub checkout has it): {first}"
    return None
