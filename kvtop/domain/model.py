"""ModelSpec: the architecture facts kvtop needs, normalised from any config family.

`model_from_config` reads a Hugging Face `config.json` (as a dict) and returns one frozen
`ModelSpec`, as transformers would: every field kvtop reads is validated at the door
(`config_schema`), a field the file leaves out takes the class default of its `model_type`
(`model_defaults`), and the family's reader (`model_families`) turns fields into facts. A bad
field is an `InputError` naming it and the file; an architecture kvtop does not model is an
`UnsupportedModelError` that names the nearest modelled family and `--model-family`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict

from kvtop.domain.config_schema import OuterConfig, TextConfig, VisionConfig, validated
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.model_defaults import FAMILIES, Family, modelled_types, nearest_family, text_model_type
from kvtop.domain.quant import NO_QUANT, QuantSpec, quant_from_config


class AttentionKind(str, Enum):
    MHA = "MHA"
    GQA = "GQA"
    MQA = "MQA"
    MLA = "MLA"
    DSA = "DSA"  # MLA plus a sparse-attention indexer key cache (DeepSeek-V3.2)


class LayerKind(str, Enum):
    FULL = "full"  # full attention: KV for every token
    SLIDING = "sliding"  # sliding-window (or chunked) attention: its own, smaller pool
    LINEAR = "linear"  # linear attention / Mamba: a fixed state per request, no KV
    NONE = "none"  # an MLP-only block (Nemotron-H '-'/'E' layers): neither KV nor state


class MlpKind(str, Enum):
    DENSE = "dense"
    MOE = "moe"
    NONE = "none"


class MlaSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    kv_lora_rank: int
    q_lora_rank: int | None
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int


class MoeSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    num_routed_experts: int
    experts_per_token: int
    expert_intermediate_size: int
    shared_intermediate_size: int  # all shared experts together; 0 if none
    shared_expert_gate: bool = False  # Qwen-style sigmoid gate on the shared expert
    expert_bias: bool = False  # gpt-oss experts carry biases


class StateSpec(BaseModel):
    """Per-layer recurrent state of a linear-attention / Mamba2 layer (whole model, before TP)."""

    model_config = ConfigDict(frozen=True)
    conv_dim: int  # channels of the causal conv
    conv_kernel: int
    num_heads: int
    head_dim: int
    state_size: int
    n_groups: int
    inner_size: int  # value width (heads × head_dim)
    ssm_dtype_bytes: int = 4
    ssm_dtype_stated: bool = False  # the config names it (NemotronH's mamba_ssm_cache_dtype); else a default


class VisionSpec(BaseModel):
    """The vision tower's size as SGLang's VLM rule reads it (`vision_config`, docs/engines/sglang.md §5)."""

    model_config = ConfigDict(frozen=True)
    num_layers: int = 24  # SGLang's default when `vision_config` does not say
    hidden_size: int = 1024


class ModelSpec(BaseModel):
    """One model's geometry, whatever family its config came from."""

    model_config = ConfigDict(frozen=True)

    name: str
    source: str
    architecture: str
    model_type: str
    dtype_bytes: int
    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    attention_kind: AttentionKind
    attention_bias: bool = False
    qk_norm: bool = False
    attention_sinks: bool = False
    vocab_size: int
    tie_word_embeddings: bool
    intermediate_size: int
    mlp_gated: bool = True
    moe: MoeSpec | None = None
    layer_attention: tuple[LayerKind, ...]
    layer_mlp: tuple[MlpKind, ...]
    sliding_window: int | None = None
    # the config's `sliding_window` where the family gives no window pattern and no `layer_types` (Mistral,
    # Phi-3): kvtop reads those layers as full attention; vLLM windows every layer with it (vllm.md §3.4)
    config_sliding_window: int | None = None
    mla: MlaSpec | None = None
    dsa_index_head_dim: int | None = None
    dsa_index_heads: int | None = None
    state: StateSpec | None = None
    mtp_layers: int = 0
    max_position_embeddings: int
    quant: QuantSpec = NO_QUANT
    multimodal: bool = False
    vision: VisionSpec | None = None  # None: no `vision_config` (SGLang then skips its VLM fraction rule)
    not_modelled: tuple[str, ...] = ()  # parts whose bytes kvtop leaves out, said aloud
    checkpoint_bytes: int | None = None  # all tensors of the checkpoint, from safetensors headers
    config_model_type: str = ""  # what config.json calls it, when read as another family (--model-family)
    defaults_used: tuple[str, ...] = ()  # fields the file left out, as `name=class default`

    def layers_of(self, kind: LayerKind) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self.layer_attention) if k is kind)

    @property
    def is_mla(self) -> bool:
        return self.mla is not None


_DTYPE_BYTES = {
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "float32": 4,
    "fp32": 4,
    "float": 4,
    "fp8": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}


def model_from_config(
    config: dict[str, Any],
    *,
    source: str = "config.json",
    name: str | None = None,
    hf_quant_config: dict[str, Any] | None = None,
    hf_source: str = "hf_quant_config.json",
    family: str | None = None,
) -> ModelSpec:
    """Normalise a Hugging Face `config.json` into a ModelSpec (see module docstring).

    `family` forces the modelled family to read the config as (`--model-family`); the config's
    own class defaults then do not apply, so every field that family reads must be in the file.
    """
    # the per-family readers import this module, so they are imported when first used
    from kvtop.domain.model_families import Fields, build_spec

    outer = validated(OuterConfig, config, source=source)
    nested_key = next((key for key in ("text_config", "llm_config") if config.get(key) is not None), None)
    prefix = f"{nested_key}." if nested_key else ""
    text = validated(TextConfig, outer.text_config if nested_key else config, source=source, prefix=prefix)
    architecture = outer.architectures[0] if outer.architectures else outer.model_type or "?"
    stated_type = text_model_type(outer.model_type or "", text.model_type)
    chosen = _family(stated_type, architecture, text, family, source)
    stated = frozenset(text.model_fields_set)
    tie = text.tie_word_embeddings if "tie_word_embeddings" in stated else outer.tie_word_embeddings
    absent = {} if family is not None else {k: v for k, v in chosen.defaults.items() if k not in stated}
    text = text.model_copy(update=absent)
    quant_cfg, quant_prefix = outer.quantization_config, "quantization_config."
    if quant_cfg is None and outer.text_config is not None:
        quant_cfg, quant_prefix = (
            outer.text_config.get("quantization_config"),
            f"{prefix}quantization_config.",
        )
    quant = quant_from_config(
        quant_cfg, hf_quant_config, source=source, prefix=quant_prefix, hf_source=hf_source
    )
    spec = build_spec(
        Fields(text, source=source, prefix=prefix, family=chosen, defaulted=frozenset(absent)),
        architecture=architecture,
        name=name or outer.name_or_path or architecture,
        dtype_bytes=_dtype_bytes(outer, text, prefix, source),
        quant=quant,
        multimodal=outer.vision_config is not None,
        vision=_vision_from_config(outer.vision_config, source),
        tie_word_embeddings=tie,
        config_model_type=stated_type,
    )
    if family is None or family == stated_type:
        return spec
    forced = f"model_type {stated_type!r} read as {family} (--model-family): what it does not read is omitted"
    return spec.model_copy(update={"not_modelled": (*spec.not_modelled, forced)})


def _family(stated_type: str, architecture: str, text: TextConfig, forced: str | None, source: str) -> Family:
    """The Family to read with: the forced one, else the config's own; an unknown one names the nearest."""
    if forced is not None:
        if forced not in FAMILIES:
            raise InputError(
                f"unknown family {forced!r}; families: {', '.join(sorted(FAMILIES))}", field="--model-family"
            )
        return FAMILIES[forced]
    if stated_type in FAMILIES:
        return FAMILIES[stated_type]
    nearest, why = nearest_family(stated_type, frozenset(text.model_fields_set), architecture)
    what = f"model_type {stated_type!r}" if stated_type else "no model_type"
    raise UnsupportedModelError(
        f"architecture {architecture!r} ({what}) is not modelled by kvtop; nearest: "
        f"{nearest} ({why}); to read it as {nearest}, pass --model-family {nearest} (every field {nearest} "
        f"reads must then be in the file). Modelled: {', '.join(modelled_types())}",
        field="model_type",
        source=source,
    )


def _dtype_bytes(outer: OuterConfig, text: TextConfig, prefix: str, source: str) -> int:
    """Bytes per element of the checkpoint dtype (bfloat16 when the config does not say)."""
    stated = (
        ("torch_dtype", outer.torch_dtype),
        ("dtype", outer.dtype),
        (prefix + "torch_dtype", text.torch_dtype),
        (prefix + "dtype", text.dtype),
    )
    field, dtype = next(((k, v) for k, v in stated if v is not None), ("torch_dtype", "bfloat16"))
    if dtype not in _DTYPE_BYTES:
        known = ", ".join(sorted(_DTYPE_BYTES))
        raise InputError(f"unknown dtype {dtype!r} (known: {known})", field=field, source=source)
    return _DTYPE_BYTES[dtype]


def _vision_from_config(vision: dict[str, Any] | None, source: str) -> VisionSpec | None:
    """`vision_config`'s layer count and width; SGLang's defaults (24, 1024) stand in for absent ones."""
    if vision is None:
        return None
    tower = validated(VisionConfig, vision, source=source, prefix="vision_config.")
    sizes = {"num_layers": tower.num_hidden_layers, "hidden_size": tower.hidden_size}
    return VisionSpec(**{k: v for k, v in sizes.items() if v is not None})


__all__ = [
    "AttentionKind", "LayerKind", "MlaSpec", "MlpKind", "ModelSpec", "MoeSpec", "StateSpec", "VisionSpec",
    "model_from_config",
]  # fmt: skip
