"""ModelSpec: the architecture facts kvtop needs, normalised from any config family.

`model_from_config` reads a Hugging Face `config.json` (as a dict) and returns one frozen
`ModelSpec`. Every fact is read from a named field; a missing field is an `InputError` naming
it and the file, an architecture kvtop does not model is an `UnsupportedModelError`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict

from kvtop.domain.errors import InputError, UnsupportedModelError
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

    def layers_of(self, kind: LayerKind) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self.layer_attention) if k is kind)

    @property
    def is_mla(self) -> bool:
        return self.mla is not None


def _need(cfg: dict[str, Any], source: str, *names: str) -> Any:
    """The first present field of `names`; a clear error naming it when none is."""
    for name in names:
        if name in cfg and cfg[name] is not None:
            return cfg[name]
    raise InputError("missing field (needed for the ledger)", field=" / ".join(names), source=source)


def _positive_int(cfg: dict[str, Any], source: str, *names: str) -> int:
    value = _need(cfg, source, *names)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"must be a positive integer (got {value!r})", field=names[0], source=source)
    return value


def _optional_int(cfg: dict[str, Any], source: str, name: str, default: int = 0) -> int:
    value = cfg.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"must be a non-negative integer (got {value!r})", field=name, source=source)
    return value


_DTYPE_BYTES = {
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "float32": 4,
    "float": 4,
    "fp8": 1,
    "float8_e4m3fn": 1,
}

# Families kvtop models, by `model_type` of the text config.
_DENSE = {
    "llama",
    "qwen2",
    "qwen3",
    "mistral",
    "phi3",
    "gemma",
    "gemma2",
    "gemma3_text",
    "gemma3",
    "granite",
    "olmo2",
    "internlm2",
}
_MOE = {"mixtral", "qwen2_moe", "qwen3_moe", "llama4_text", "llama4", "gpt_oss"}
_MLA = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2"}
_HYBRID = {"qwen3_next", "nemotron_h"}
SUPPORTED_MODEL_TYPES = tuple(sorted(_DENSE | _MOE | _MLA | _HYBRID))


def model_from_config(
    config: dict[str, Any],
    *,
    source: str = "config.json",
    name: str | None = None,
    hf_quant_config: dict[str, Any] | None = None,
) -> ModelSpec:
    """Normalise a Hugging Face `config.json` into a ModelSpec (see module docstring)."""
    if not isinstance(config, dict):
        raise InputError("a config must be a JSON object", source=source)
    text = config.get("text_config") or config
    if not isinstance(text, dict):
        raise InputError("must be an object", field="text_config", source=source)
    architectures = config.get("architectures") or []
    architecture = str(architectures[0]) if architectures else str(config.get("model_type", "?"))
    model_type = str(text.get("model_type") or config.get("model_type") or "")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise UnsupportedModelError(
            f"architecture {architecture!r} (model_type {model_type!r}) is not modelled by kvtop; "
            f"modelled: {', '.join(SUPPORTED_MODEL_TYPES)}",
            field="model_type",
            source=source,
        )
    from kvtop.domain.model_families import build_spec  # the per-family readers

    quant_cfg = config.get("quantization_config") or text.get("quantization_config")
    quant = quant_from_config(quant_cfg, hf_quant_config, source=source)
    dtype_name = str(
        config.get("torch_dtype") or config.get("dtype") or text.get("torch_dtype") or "bfloat16"
    )
    dtype_bytes = _DTYPE_BYTES.get(dtype_name, 2)
    tie = text.get("tie_word_embeddings", config.get("tie_word_embeddings"))
    return build_spec(
        text,
        model_type=model_type,
        architecture=architecture,
        source=source,
        name=name or str(config.get("_name_or_path") or architecture),
        dtype_bytes=dtype_bytes,
        quant=quant,
        multimodal="vision_config" in config,
        vision=_vision_from_config(config.get("vision_config"), source),
        tie_word_embeddings=None if tie is None else bool(tie),
    )


def _vision_from_config(vision: Any, source: str) -> VisionSpec | None:
    """`vision_config`'s layer count and width; SGLang's defaults (24, 1024) stand in for absent ones."""
    if vision is None:
        return None
    if not isinstance(vision, dict):
        raise InputError("must be an object", field="vision_config", source=source)
    sizes: dict[str, int] = {}
    for name, field in (("num_layers", "num_hidden_layers"), ("hidden_size", "hidden_size")):
        value = vision.get(field)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise InputError(
                f"must be a positive integer (got {value!r})", field=f"vision_config.{field}", source=source
            )
        sizes[name] = value
    return VisionSpec(**sizes)


__all__ = [
    "AttentionKind", "LayerKind", "MlaSpec", "MlpKind", "ModelSpec", "MoeSpec", "StateSpec", "VisionSpec",
    "SUPPORTED_MODEL_TYPES", "model_from_config",
]  # fmt: skip
