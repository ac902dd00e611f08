"""config.json as typed values: every field kvtop reads, checked where the file enters.

A Hugging Face config is outside input: any field may have the wrong type, be negative, be
astronomically large or not a number at all. These pydantic models take the raw sections
(the outer config, `text_config`/`llm_config`, `vision_config`, `rope_scaling`) and turn each
field kvtop reads into a bounded value, so nothing downstream sees a float where it indexes, a
string where it counts, or a count that cannot fit a tuple. A failure is one `InputError`
naming the file and the field path (`text_config.num_hidden_layers`).

Bounds are what any GPU node could hold, not what today's models use; the largest published
configs have 126 layers, hidden 16,384, 128 heads, 512 experts, vocab 262,208 and 10M positions:
  layers ≤ 10,000 · hidden ≤ 2^20 · heads ≤ 2^14 · head_dim ≤ 2^14 · intermediate ≤ 2^24
  vocab ≤ 2^24 · positions and windows ≤ 2^32 · experts ≤ 2^16 · MLA / linear / Mamba dims ≤ 2^16.
Within them every tuple of layers fits memory and every product of counts fits a float.
Absent fields are `None` here; the family's class defaults are applied afterwards
(`model_defaults`), so "absent" and "explicitly null" stay distinguishable (`model_fields_set`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AliasChoices,
    Field,
    ValidationError,
    field_validator,
)

from kvtop.domain.config_schema_families import FamilyFields
from kvtop.domain.config_types import (
    MAX_LAYERS,
    Bit,
    ConfigSection,
    Dim,
    Experts,
    Factor,
    Flag,
    HeadDim,
    Heads,
    Hidden,
    Intermediate,
    LatentDim,
    LayerCount,
    LayerIndex,
    LayerNames,
    Layers,
    Name,
    PerLayerCount,
    PerLayerIntermediate,
    Positions,
    Vocab,
    Window,
    WindowPattern,
)
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted

_SectionT = TypeVar("_SectionT", bound=ConfigSection)


class RopeScaling(ConfigSection):
    """`rope_scaling` / `rope_parameters`: not used for bytes, but a malformed one is a broken config."""

    rope_type: Name | None = Field(default=None, validation_alias=AliasChoices("rope_type", "type"))
    factor: Factor | None = None
    original_max_position_embeddings: Positions | None = None
    rope_theta: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None  # SGLang's LongCat reads it here


class VisionConfig(ConfigSection):
    """`vision_config`: the tower size SGLang's VLM fraction rule reads."""

    num_hidden_layers: Layers | None = Field(
        default=None, validation_alias=AliasChoices("num_hidden_layers", "depth")
    )
    hidden_size: Hidden | None = Field(
        default=None, validation_alias=AliasChoices("hidden_size", "embed_dim")
    )


# Geometry every family needs: an explicit null is refused rather than read as "use the default".
CORE_FIELDS = frozenset(
    {"hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size", "max_position_embeddings"}
)


class TextConfig(FamilyFields):
    """The language model's section (the whole config for text-only models)."""

    model_type: Name | None = None
    hidden_size: Hidden | None = Field(
        default=None, validation_alias=AliasChoices("hidden_size", "d_model", "n_embd", "n_embed")
    )
    num_hidden_layers: Layers | None = Field(
        default=None, validation_alias=AliasChoices("num_hidden_layers", "n_layer", "n_layers")
    )
    num_attention_heads: Heads | None = Field(
        default=None, validation_alias=AliasChoices("num_attention_heads", "n_head", "n_heads")
    )
    num_key_value_heads: Heads | None = Field(
        default=None, validation_alias=AliasChoices("num_key_value_heads", "n_head_kv", "num_kv_heads", "num_attention_groups")
    )
    head_dim: HeadDim | None = Field(
        default=None, validation_alias=AliasChoices("head_dim", "attention_head_dim")
    )
    vocab_size: Vocab | None = None
    intermediate_size: PerLayerIntermediate | None = None
    max_position_embeddings: Positions | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "max_position_embeddings", "max_sequence_length", "seq_length", "n_positions", "model_max_length",
            "max_seq_len",
        ),
    )
    tie_word_embeddings: Flag | None = None
    attention_bias: Flag | None = None
    qkv_bias: Flag | None = None  # Qwen2-MoE: q, k, v projections carry a bias (its class default: true)
    bias: Flag | None = None  # InternLM / InternLM2: q, k, v (and o) projections carry a bias
    use_qk_norm: Flag | None = None
    torch_dtype: Name | None = None
    dtype: Name | None = None
    rope_scaling: RopeScaling | None = None
    # sliding / chunked attention
    layer_types: Annotated[list[Name], Field(max_length=MAX_LAYERS)] | None = None
    sliding_window: Window | None = None
    use_sliding_window: Flag | None = None
    is_hybrid_swa: Flag | None = None  # Spark-2.5, IQuest-Q1: the config opts into SGLang's sliding-window pool
    max_window_layers: LayerCount | None = None
    # an integer (Gemma-3: every n-th layer full), or EXAONE-4's letters per layer cycle ("LLLG": G global)
    sliding_window_pattern: WindowPattern | None = Field(
        default=None, validation_alias=AliasChoices("sliding_window_pattern", "_sliding_window_pattern")
    )
    attention_chunk_size: Positions | None = None
    no_rope_layers: Annotated[list[Bit], Field(max_length=MAX_LAYERS)] | None = None
    no_rope_layer_interval: Layers | None = None
    # mixture of experts
    # transformers 5.x writes Qwen3-MoE's (Qwen3-VL-MoE's, Qwen3-Omni-MoE's, MiniMax-M2's …) as num_local_experts
    # (their attribute_map num_experts -> num_local_experts), which the engines read as config.num_experts
    num_experts: Experts | None = Field(
        default=None, validation_alias=AliasChoices("num_experts", "num_local_experts")
    )
    num_local_experts: Experts | None = None
    n_routed_experts: Experts | None = None
    num_experts_per_tok: Experts | None = None
    moe_intermediate_size: PerLayerIntermediate | None = None  # ERNIE-4.5-VL: one per expert group
    shared_expert_intermediate_size: Intermediate | None = None
    n_shared_experts: Experts | None = None
    moe_shared_expert_intermediate_size: Intermediate | None = None
    decoder_sparse_step: Layers | None = None
    mlp_only_layers: Annotated[list[LayerIndex], Field(max_length=MAX_LAYERS)] | None = None
    first_k_dense_replace: LayerCount | None = None
    moe_layer_freq: PerLayerCount | None = None
    interleave_moe_layer_step: Layers | None = None
    mlp_layer_types: LayerNames | None = None  # AXK1, Laguna: "dense" / "sparse" per layer (transformers v5)
    # Laguna: query heads per layer (its sliding layers more than its full ones); a per-head output gate (g_proj)
    num_attention_heads_per_layer: Annotated[list[Heads], Field(max_length=MAX_LAYERS)] | None = None
    gating: Flag | Literal["per-head", "per-element"] | None = None
    intermediate_size_mlp: Intermediate | None = None
    # multi-head latent attention (DeepSeek) and its sparse indexer
    kv_lora_rank: Dim | None = None
    q_lora_rank: Dim | None = None
    qk_rope_head_dim: LatentDim | None = None
    qk_nope_head_dim: LatentDim | None = None
    v_head_dim: LatentDim | None = None
    use_mla: Flag | None = None  # DeepSeek-OCR's language_config: false, plain attention (its dims 0)
    index_head_dim: Dim | None = None
    index_n_heads: Heads | None = None
    num_nextn_predict_layers: LayerCount | None = None
    indexer_types: LayerNames | None = None  # DSA: "shared" layers reuse the previous layer's top-k (no indexer)
    index_topk_freq: Layers | None = None
    index_skip_topk_offset: Layers | None = None
    indexer_rope_interleave: Flag | None = None  # DSA: the indexer's rope is interleaved (GLM-5), not NeoX style
    use_routing_bias: Flag | None = None  # MiniMax-M2: an fp32 routing bias per expert
    use_moe_router_bias: Flag | None = None  # Step-3.x
    add_swa_attention_sink_bias: Flag | None = None  # MiMo-V2: a sink logit per head on sliding layers
    lm_head_bias: Flag | None = None  # Phi-3.5-MoE
    topk_method: Name | None = None  # DeepSeek: noaux_tc routing keeps a score-correction bias per expert
    # linear attention (Qwen3-Next) and Mamba2 (Nemotron-H)
    full_attention_interval: Layers | None = None
    linear_num_key_heads: Dim | None = None
    linear_key_head_dim: Dim | None = None
    linear_num_value_heads: Dim | None = None
    linear_value_head_dim: Dim | None = None
    linear_conv_kernel_dim: Dim | None = None
    hybrid_override_pattern: Annotated[str, Field(strict=True, max_length=MAX_LAYERS)] | None = None
    mamba_num_heads: Dim | None = None
    mamba_head_dim: Dim | None = None
    n_groups: Dim | None = Field(default=None, validation_alias=AliasChoices("mamba_n_groups", "n_groups"))
    ssm_state_size: Dim | None = None
    conv_kernel: Dim | None = Field(
        default=None, validation_alias=AliasChoices("mamba_d_conv", "conv_kernel")
    )
    mamba_ssm_cache_dtype: Name | None = Field(
        default=None, validation_alias=AliasChoices("mamba_ssm_cache_dtype", "mamba_ssm_dtype")
    )
    layers_block_type: LayerNames | None = None  # NemotronH's newer configs: one block word per layer

    @field_validator("rope_scaling", mode="before")
    @classmethod
    def _false_rope_scaling_is_none(cls, value: Any) -> Any:
        """Megatron-named configs write `rope_scaling: false` for none (Zyphra/ZAYA1-8B-legacy; SGLang 0.5.23
        configs/zaya.py takes any non-dict as the default RoPE)."""
        return None if value is False else value

    @field_validator(*sorted(CORE_FIELDS), mode="before")
    @classmethod
    def _core_is_not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("must be an integer")
        return value


class OuterConfig(ConfigSection):
    """The top of config.json: what it is, how it is stored, and where its sub-configs are."""

    model_type: Name | None = None
    architectures: Annotated[list[Name], Field(max_length=64)] | None = None
    name_or_path: Annotated[str, Field(strict=True, max_length=4096)] | None = Field(
        default=None, validation_alias="_name_or_path"
    )
    torch_dtype: Name | None = None
    dtype: Name | None = None
    tie_word_embeddings: Flag | None = None
    text_config: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("text_config", "llm_config")
    )
    vision_config: dict[str, Any] | None = None
    quantization_config: dict[str, Any] | None = None
    auto_map: dict[str, Any] | None = None  # remote code: "AutoModelForCausalLM": "module.Class" (or a list)


def validated(model: type[_SectionT], data: Any, *, source: str, prefix: str = "") -> _SectionT:
    """`data` as `model`, or one InputError naming the first bad field (with `prefix`) and the file."""
    if not isinstance(data, dict):
        field = prefix.rstrip(".") or None
        raise InputError(f"must be an object (got {shown(data)})", field=field, source=source)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise error_from(err, source=source, prefix=prefix) from None


def error_from(err: ValidationError, *, source: str, prefix: str = "") -> InputError:
    """The first of pydantic's errors as kvtop's one line: the field path, what it must be, what it was."""
    first = err.errors(include_url=False)[0]
    path = prefix + _path(first["loc"])
    return InputError(f"{_expectation(first)} (got {shown(first.get('input'))})", field=path, source=source)


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_PLAIN = {
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "missing": "missing",
}
_BOUND_WORDS = {
    "less_than_equal": "at most",
    "greater_than_equal": "at least",
    "greater_than": "more than",
    "less_than": "less than",
}


def _expectation(error: Any) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind in _PLAIN:
        return _PLAIN[kind]
    if kind in ("less_than_equal", "greater_than_equal", "greater_than", "less_than"):
        bound = next(iter(ctx.values()))
        return f"must be {_BOUND_WORDS[kind]} {_number(bound)}"
    if kind == "too_short":
        return f"must have at least {_number(ctx.get('min_length', 0))} items"
    if kind == "too_long":
        return f"must have at most {_number(ctx.get('max_length', 0))} items"
    if kind == "string_too_long":
        return f"must be at most {_number(ctx.get('max_length', 0))} characters"
    message = str(error["msg"])
    return message.removeprefix("Value error, ").replace("Input should be", "must be")


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def shown(value: Any) -> str:
    """A short, one-line rendering of an offending value (never the whole of a huge one)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value):,}"
    if isinstance(value, int) and abs(value) >= 10**15:
        return (
            f"{float(value):.3g}" if value.bit_length() < 1000 else f"an integer of {value.bit_length()} bits"
        )
    if isinstance(value, str):  # a config's words may hold a key: masked before the cut (`redact.quoted`)
        return quoted(value, 38)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"
