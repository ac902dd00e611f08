"""Mistral's `params.json` (a Mistral-format checkpoint, served with `--config-format mistral`) read as the
`config.json` vLLM makes of it, then into one `ModelSpec` through the same door as any config.

The mapping is vLLM 0.33.0's (vllm/transformers_utils/configs/mistral.py `adapt_config_dict`; the parser that
calls it, transformers_utils/config.py `MistralConfigParser`, fills `max_position_embeddings` with 128,000 where
the file names none), written once below as data: renamed fields, fields with vLLM's defaults, the MoE block of
Mistral-Large-3 (DeepSeek-V3's layout, class MistralLarge3ForCausalLM), a list `sliding_window` as `layer_types`,
YaRN as `rope_parameters`, `quantization` as `quantization_config`, and a `vision_encoder` section as the
Pixtral wrapper (PixtralForConditionalGeneration) over the text config, and `multimodal.whisper_model_args` as
Voxtral (VoxtralForConditionalGeneration: the WhisperConfig `_remap_mistral_audio_args` makes, towers_voxtral). A
field kvtop does not know, or one whose value changes the layout in a way no entry reads, is refused naming it,
never dropped. Every model read so
carries `config_format` (said as a note by plan and explain). A key the model needs is required: vLLM 0.33.0's config
from a params.json is a bare PreTrainedConfig, so no class default stands in for a missing one (an error naming
the file's key); a missing `n_kv_heads` is `n_heads` (llama.py LlamaDecoderLayer's getattr), a latent model's
missing `q_lora_rank` no query compression (deepseek_v2.py's hasattr), as vLLM reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config

SOURCE = "vLLM 0.33.0 vllm/transformers_utils/configs/mistral.py adapt_config_dict"
NOTE = "read from Mistral's params.json the way vLLM 0.33.0's adapt_config_dict maps it"
PARSER_POSITIONS = (
    128_000  # MistralConfigParser / adapt_config_dict: max_position_embeddings where none is given
)

# _remap_general_mistral_args: Mistral key -> HF key
RENAMED: Mapping[str, str] = {
    "dim": "hidden_size",
    "norm_eps": "rms_norm_eps",
    "n_kv_heads": "num_key_value_heads",
    "n_layers": "num_hidden_layers",
    "n_heads": "num_attention_heads",
    "hidden_dim": "intermediate_size",
}
# _remap_general_mistral_args: HF key -> (Mistral key, vLLM's value where the file has none)
DEFAULTED: Mapping[str, tuple[str, Any]] = {
    "hidden_act": ("activation", "silu"),
    "tie_word_embeddings": ("tied_embeddings", False),
    "max_position_embeddings": ("max_position_embeddings", PARSER_POSITIONS),
}
# fields passed on under their own name (the HF name is Mistral's)
KEPT = (
    "head_dim", "vocab_size", "rope_theta", "dtype", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim", "quantization_config", "llama_4_scaling",
)  # fmt: skip
# fields that change neither weights nor KV (parallel hints, the tokenizer's length, flags of the causal mask)
IGNORED = ("model_parallel", "max_seq_len", "model_max_length", "lora", "causal", "model_type")
# _remap_moe_args (Mistral-Large-3: a MoE with shared experts): Mistral key -> HF key, and the fixed fields
MOE_RENAMED: Mapping[str, str] = {
    "route_every_n": "moe_layer_freq",
    "first_k_dense_replace": "first_k_dense_replace",
    "num_experts_per_tok": "num_experts_per_tok",
    "num_experts": "n_routed_experts",
    "expert_hidden_dim": "moe_intermediate_size",
    "routed_scale": "routed_scaling_factor",
    "num_shared_experts": "n_shared_experts",
    "num_expert_groups": "n_group",
    "num_expert_groups_per_tok": "topk_group",
}
MOE_IGNORED = ("expert_parallel", "expert_model_parallel", "renorm_strategy", "use_load_balancing_bias")
MOE_FIXED: Mapping[str, Any] = {"topk_method": None, "norm_topk_prob": True, "scoring_func": "softmax"}
# _remap_mistral_mla_args: a latent-attention model without `moe` is built as Large-3's layout, every layer dense
DENSE_MLA_MOE: Mapping[str, Any] = {"num_experts": 1, "route_every_n": 1, "num_shared_experts": 1,
                                    "num_experts_per_tok": 1, "routed_scale": 1.0, "num_expert_groups": 1,
                                    "num_expert_groups_per_tok": 1}  # fmt: skip
# _remap_mistral_yarn_args: Mistral key -> rope_parameters key
YARN_RENAMED: Mapping[str, str] = {
    "factor": "factor",
    "original_max_position_embeddings": "original_max_position_embeddings",
    "beta": "beta_fast",
    "alpha": "beta_slow",
}
# _remap_mistral_vision_args: the vision encoder's fields (pixtral.py VisionEncoderArgs) kvtop's tower reads
VISION_FIELDS = (
    "hidden_size", "num_channels", "image_size", "patch_size", "intermediate_size", "num_hidden_layers",
    "num_attention_heads", "adapter_bias", "spatial_merge_size", "add_pre_mm_projector_layer_norm",
    "mm_projector_id",
)  # fmt: skip
VISION_IGNORED = (
    "rope_theta",
    "image_token_id",
    "image_break_token_id",
    "image_end_token_id",
    "max_image_size",
)
# _remap_mistral_audio_args (Voxtral): multimodal.whisper_model_args.encoder_args key -> the WhisperConfig key vLLM
# builds (audio_encoding_args.num_mel_bins and downsample_args.downsample_factor beside); keys that size nothing kvtop
# counts (the encoder's vocabulary and head width, its biases: whisper.py builds every projection biased); `causal`
# (VoxtralRealtimeGeneration) and any other key refused
AUDIO_RENAMED: Mapping[str, str] = {"dim": "d_model", "n_layers": "encoder_layers", "hidden_dim": "encoder_ffn_dim",
                                    "n_heads": "encoder_attention_heads", "max_source_positions": "max_source_positions"}  # fmt: skip
AUDIO_IGNORED = ("audio_encoding_args", "head_dim", "vocab_size", "n_kv_heads", "use_biases", "pos_embed", "causal")


# the names kvtop's config door and tower read a params.json field under -> the file's own key: the inverse of the
# maps above, and the sections vLLM's mapping moves (text_config: the text fields of a Pixtral wrapper)
FILE_KEYS: Mapping[str, str] = {
    **{hf: key for key, hf in RENAMED.items()},
    **{hf: key for hf, (key, _) in DEFAULTED.items()},
    **{hf: f"moe.{key}" for key, hf in MOE_RENAMED.items()},
    **{f"rope_parameters.{hf}": f"yarn.{key}" for key, hf in YARN_RENAMED.items()},
    "rope_parameters": "yarn",
    "quantization_config": "quantization",
    "layer_types": "sliding_window",
}
SECTIONS: Mapping[str, str] = {"text_config.": "", "vision_config.": "vision_encoder.", "params.json ": ""}
# the vision tower's names for VisionEncoderArgs fields (towers_fields.py aliases) -> the file's
VISION_KEYS: Mapping[str, str] = {"depth": "num_hidden_layers", "in_channels": "num_channels"}
FILE_HEADS = (
    *RENAMED,
    *(key for key, _ in DEFAULTED.values()),
    *KEPT,
    "sliding_window",
    "moe",
    "yarn",
    "quantization",
)


def file_field(field: str) -> str | None:
    """The params.json key (`params.json n_layers`) behind a field kvtop's door named after vLLM's mapping
    (`num_hidden_layers`), or None where the field is no key of the file (one vLLM's mapping fixes)."""
    for prefix, section in SECTIONS.items():
        if field.startswith(prefix):
            field = section + field.removeprefix(prefix)
    if field.startswith("vision_encoder."):
        key = field.removeprefix("vision_encoder.")
        return f"params.json vision_encoder.{VISION_KEYS.get(key, key)}"
    key = FILE_KEYS.get(field, field)
    return f"params.json {key}" if key.split(".")[0] in FILE_HEADS else None


def _refuse(field: str, why: str, source: str) -> UnsupportedModelError:
    return UnsupportedModelError(f"{why} ({NOTE})", field=f"params.json {field}", source=source)


def _object(value: Any, field: str, source: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError("must be an object", field=f"params.json {field}", source=source)
    return dict(value)


def _check_known(section: Mapping[str, Any], known: tuple[str, ...], prefix: str, source: str) -> None:
    for key in section:
        if key not in known:
            raise _refuse(prefix + key, "a params.json field kvtop does not know: it may change the weights or "
                          "the KV layout, so it is not read silently", source)  # fmt: skip


def _sliding(text: dict[str, Any], source: str) -> None:
    """_remap_mistral_sliding_window: a list (None = full) repeated over the layers as `layer_types`; an int
    windows every layer; none is no window (stated, so no class default applies)."""
    window = text.pop("sliding_window", None)
    if window is None:
        text["sliding_window"] = None
        return
    layers = text.get("num_hidden_layers")
    if isinstance(window, list) and window and isinstance(layers, int):
        sizes = {w for w in window if w is not None}
        if len(sizes) > 1:
            raise _refuse("sliding_window", f"{len(sizes)} window sizes (vLLM asserts one)", source)
        text["layer_types"] = ["full_attention" if w is None else "sliding_attention"
                               for w in window * (layers // len(window))]  # fmt: skip
        text["sliding_window"] = next(iter(sizes), None)
    elif isinstance(window, int) and not isinstance(window, bool):
        text["sliding_window"] = window
        text["layer_types"] = ["sliding_attention"] * layers if isinstance(layers, int) else None
    else:
        raise InputError("must be an integer or a list", field="params.json sliding_window", source=source)


def _yarn(text: dict[str, Any], yarn: dict[str, Any], source: str) -> None:
    rope: dict[str, Any] = {"rope_type": "yarn", "mscale_all_dim": 1}
    if text.get("rope_theta") is not None:
        rope["rope_theta"] = text["rope_theta"]
    _check_known(yarn, (*YARN_RENAMED, "apply_scale"), "yarn.", source)
    rope.update({new: yarn[old] for old, new in YARN_RENAMED.items() if old in yarn})
    if yarn.get("apply_scale", True) is False:
        rope["attention_factor"] = 1.0
    text["rope_parameters"] = rope


def _quantization(quant: dict[str, Any], source: str) -> dict[str, Any]:
    """_remap_mistral_quantization_args: fp8_e4m3 weights as the fp8 method; compressed-tensors passed on."""
    if quant.get("qformat_weight") == "fp8_e4m3":
        scheme = quant.get("qscheme_act")
        if scheme not in ("NO_SCALES", "TENSOR", None):
            raise _refuse("quantization.qscheme_act", f"{scheme!r} (vLLM takes NO_SCALES or TENSOR)", source)
        return {"quant_method": "fp8", "activation_scheme": "dynamic" if scheme == "NO_SCALES" else "static"}
    if str(quant.get("quant_method", "")).lower().replace("_", "-") == "compressed-tensors":
        return {**quant, "quant_method": "compressed-tensors"}
    raise _refuse(
        "quantization", "a quantization vLLM does not map (it raises 'unknown quantization')", source
    )


def _moe(text: dict[str, Any], moe: dict[str, Any], source: str) -> None:
    """Mistral-Large-3's MoE (shared experts) as DeepSeek-V3's fields; a MoE without shared experts is vLLM's
    Mixtral path, which passes `moe` on unread (MixtralForCausalLM then reads no expert count): refused."""
    if not (moe.get("num_shared_experts") or 0) > 0:
        raise _refuse("moe.num_shared_experts", "a MoE without shared experts (vLLM builds MixtralForCausalLM "
                      "from a params.json `moe` block it does not rename): not modelled", source)  # fmt: skip
    _check_known(moe, (*MOE_RENAMED, *MOE_IGNORED), "moe.", source)
    if moe.get("route_every_n", 1) != 1:
        raise _refuse("moe.route_every_n", f"{moe['route_every_n']} (an expert layer every n: DeepSeek-V3's "
                      "layout, which kvtop reads, has one every layer after the dense ones)", source)  # fmt: skip
    text.update({new: moe[old] for old, new in MOE_RENAMED.items() if old in moe})
    text.update(MOE_FIXED)
    text["model_type"], text["architectures"] = "deepseek_v3", ["MistralLarge3ForCausalLM"]


def _vision(params: dict[str, Any], source: str) -> dict[str, Any] | None:
    section = params.pop("vision_encoder", None)
    multimodal = params.pop("multimodal", None)
    if multimodal is not None:
        multimodal = _object(multimodal, "multimodal", source)
        _check_known(multimodal, ("vision_encoder_args", "whisper_model_args"), "multimodal.", source)
        section = multimodal.get("vision_encoder_args") or section
    if section is None:
        return None
    vision = _object(section, "vision_encoder", source)
    _check_known(vision, (*VISION_FIELDS, *VISION_IGNORED), "vision_encoder.", source)
    return {"model_type": "pixtral_mistral_format", **{k: vision[k] for k in VISION_FIELDS if k in vision}}


def _audio(params: dict[str, Any], source: str) -> dict[str, Any] | None:
    """Voxtral's `multimodal.whisper_model_args` as the audio_config vLLM 0.33.0 builds (AUDIO_RENAMED), or None."""
    multimodal = params.get("multimodal")
    whisper = multimodal.pop("whisper_model_args", None) if isinstance(multimodal, dict) else None
    if not whisper:
        return None
    whisper = _object(whisper, "multimodal.whisper_model_args", source)
    where = "multimodal.whisper_model_args."
    encoder = _object(whisper.get("encoder_args"), f"{where}encoder_args", source)
    if encoder.get("causal"):
        raise _refuse(f"{where}encoder_args.causal", "Voxtral-Realtime's causal Whisper encoder "
                      "(VoxtralRealtimeGeneration): not modelled", source)  # fmt: skip
    _check_known(encoder, (*AUDIO_RENAMED, *AUDIO_IGNORED), f"{where}encoder_args.", source)
    encoding = _object(encoder.get("audio_encoding_args"), f"{where}encoder_args.audio_encoding_args", source)
    downsample = _object(whisper.get("downsample_args"), f"{where}downsample_args", source)
    audio = {hf: encoder[key] for key, hf in AUDIO_RENAMED.items() if key in encoder}
    audio["num_mel_bins"] = encoding.get("num_mel_bins")
    audio["downsample_factor"] = downsample.get("downsample_factor")
    required = {**{hf: f"encoder_args.{key}" for key, hf in AUDIO_RENAMED.items() if key != "max_source_positions"},
                "num_mel_bins": "encoder_args.audio_encoding_args.num_mel_bins",
                "downsample_factor": "downsample_args.downsample_factor"}  # fmt: skip
    for hf, key in required.items():
        if audio.get(hf) is None:  # vLLM's _remap_mistral_audio_args indexes it: KeyError
            raise InputError("missing (vLLM's _remap_mistral_audio_args reads it)", field=f"params.json {where}{key}",
                             source=source)  # fmt: skip
    return {"model_type": "whisper", **audio}


def config_from_params(params: Mapping[str, Any], *, source: str) -> dict[str, Any]:
    """The config.json vLLM 0.33.0 makes of a params.json (see the module docstring), as a dict kvtop's door reads."""
    rest = dict(params)
    if isinstance(rest.get("multimodal"), dict):
        rest["multimodal"] = dict(rest["multimodal"])
    audio = _audio(rest, source)
    vision = _vision(rest, source)
    if rest.get("model_type") == "mamba":
        raise _refuse(
            "model_type", "'mamba' (vLLM builds Mamba2ForCausalLM from params.json): not modelled", source
        )
    if rest.get("use_biases"):
        raise _refuse(
            "use_biases", "biased projections (Voxtral-Realtime's decoder): no entry reads them", source
        )
    rest.pop("use_biases", None)
    for key in ("ada_rms_norm_t_cond", "ada_rms_norm_t_cond_dim"):
        if rest.get(key):
            raise _refuse(key, "adaptive RMSNorm conditioning (Voxtral-Realtime): no entry reads it", source)
        rest.pop(key, None)
    moe = rest.pop("moe", None)
    yarn = rest.pop("yarn", None)
    quant = rest.pop("quantization", None)
    _check_known(
        rest, (*RENAMED, *(m for m, _ in DEFAULTED.values()), *KEPT, *IGNORED, "sliding_window"), "", source
    )
    text: dict[str, Any] = {RENAMED.get(k, k): v for k, v in rest.items() if k not in IGNORED}
    if "num_key_value_heads" not in text and "num_attention_heads" in text:  # llama.py LlamaDecoderLayer's getattr
        text["num_key_value_heads"] = text["num_attention_heads"]
    for hf_key, (key, default) in DEFAULTED.items():
        text.pop(key, None)
        text[hf_key] = rest.get(key, default)
    text["model_type"], text["architectures"] = "mistral", ["MistralForCausalLM"]
    _sliding(text, source)
    if quant:
        text["quantization_config"] = _quantization(_object(quant, "quantization", source), source)
    if text.get("qk_nope_head_dim") and "q_lora_rank" not in text:  # deepseek_v2.py: hasattr(config, "q_lora_rank")
        text["q_lora_rank"] = None
    if text.get("qk_nope_head_dim") and moe is None:
        moe = {**DENSE_MLA_MOE, "first_k_dense_replace": text.get("num_hidden_layers"),
               "expert_hidden_dim": text.get("intermediate_size")}  # fmt: skip
    if moe is not None:
        _moe(text, _object(moe, "moe", source), source)
    if yarn:
        _yarn(text, _object(yarn, "yarn", source), source)
    if text.get("llama_4_scaling") is not None:
        scaling = _object(text["llama_4_scaling"], "llama_4_scaling", source)
        if not {"original_max_position_embeddings", "beta"} <= scaling.keys():
            raise InputError("must name original_max_position_embeddings and beta (vLLM asserts them)",
                             field="params.json llama_4_scaling", source=source)  # fmt: skip
    if audio is not None:  # Voxtral: vLLM's VoxtralForConditionalGeneration over the text config (towers_voxtral)
        return {"model_type": "voxtral", "architectures": ["VoxtralForConditionalGeneration"], "text_config": text,
                "audio_config": audio}  # fmt: skip
    if vision is None:
        return text
    outer: dict[str, Any] = {"model_type": "pixtral", "architectures": ["PixtralForConditionalGeneration"],
                             "text_config": text, "vision_config": vision}  # fmt: skip
    if "quantization_config" in text:
        outer["quantization_config"] = text["quantization_config"]
    return outer


def model_from_params(
    params: dict[str, Any], *, source: str, name: str | None = None, family: str | None = None
) -> ModelSpec:
    """A params.json read into a ModelSpec: vLLM's mapping, then kvtop's config door; the model says how."""
    config = config_from_params(params, source=source)
    try:
        spec = model_from_config(config, source=source, name=name, family=family)
    except InputError as err:  # named after vLLM's mapping (num_hidden_layers): say the file's key (n_layers)
        key = file_field(err.field) if err.field else None
        if key is None or key == err.field:
            raise
        raise type(err)(err.detail, field=key, source=err.source) from err
    _refuse_class_defaults(spec, source)
    return spec.model_copy(update={"config_format": NOTE})


def _refuse_class_defaults(spec: ModelSpec, source: str) -> None:
    """A key the file leaves out that kvtop's door would fill with a config class's default: vLLM reads params.json
    into a bare PreTrainedConfig (adapt_config_dict → PreTrainedConfig.from_dict), which has no class defaults,
    so its model class fails on the missing attribute; the error names the file's key (Pixtral's `n_layers`,
    Large-3's `moe.expert_hidden_dim`), never the class's value silently."""
    for default in spec.defaults_used:
        key = file_field(default.field)
        if key is not None:
            raise InputError(
                f"missing (vLLM reads params.json with no config class's defaults; {default.what} "
                f"{default.value!r} is not read in its place)",
                field=key,
                source=source,
            )
