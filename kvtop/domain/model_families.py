"""Per-family readers behind `model_from_config`: which config fields mean what.

Each family differs only in where it keeps a handful of facts (expert counts, layer
patterns, MLA ranks, recurrent state shapes); everything else is shared in `build_spec`.
"""

from __future__ import annotations

from typing import Any

from kvtop.domain.errors import InputError
from kvtop.domain.model import (
    AttentionKind,
    LayerKind,
    MlaSpec,
    MlpKind,
    ModelSpec,
    MoeSpec,
    StateSpec,
    VisionSpec,
    _need,
    _optional_int,
    _positive_int,
)
from kvtop.domain.quant import QuantSpec

_LAYER_TYPES = {
    "full_attention": LayerKind.FULL,
    "attention": LayerKind.FULL,
    "sliding_attention": LayerKind.SLIDING,
    "chunked_attention": LayerKind.SLIDING,
    "linear_attention": LayerKind.LINEAR,
    "mamba": LayerKind.LINEAR,
}


# Families whose transformers config class defaults `tie_word_embeddings` to True (one matrix for
# the embedding and the LM head). Every other modelled family overrides PretrainedConfig's generic
# True with False (LlamaConfig, Llama4Config / Llama4TextConfig, Qwen2/Qwen3(-MoE/-Next), Mistral,
# Mixtral, Phi3, Granite, OLMo2, InternLM2, gpt-oss, DeepSeek V2/V3, Nemotron-H), so a config that
# leaves the key out (Llama-4-Scout) keeps a separate LM head.
_TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text"})


def tied_by_default(model_type: str) -> bool:
    """Whether the family ties embedding and LM head when its config does not say."""
    return model_type in _TIED_BY_DEFAULT


def _layer_types(cfg: dict[str, Any], layers: int, source: str) -> tuple[LayerKind, ...] | None:
    raw = cfg.get("layer_types")
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) != layers:
        raise InputError(f"must list one type per layer ({layers})", field="layer_types", source=source)
    try:
        return tuple(_LAYER_TYPES[str(item)] for item in raw)
    except KeyError as missing:
        raise InputError(f"unknown layer type {missing}", field="layer_types", source=source) from None


def build_spec(
    cfg: dict[str, Any],
    *,
    model_type: str,
    architecture: str,
    source: str,
    name: str,
    dtype_bytes: int,
    quant: QuantSpec,
    multimodal: bool,
    tie_word_embeddings: bool | None = None,
    vision: VisionSpec | None = None,
) -> ModelSpec:
    """Read the facts shared by every family, then the family's own (see module docstring).

    `tie_word_embeddings` is the config's own value when it states one (the text config's, else
    the outer config's); when neither does, the family's default decides (`tied_by_default`).
    """
    hidden = _positive_int(cfg, source, "hidden_size", "d_model")
    heads = _positive_int(cfg, source, "num_attention_heads", "n_head")
    layers = _positive_int(cfg, source, "num_hidden_layers", "n_layer")
    kv_heads = (
        _positive_int(cfg, source, "num_key_value_heads", "n_head_kv", "num_kv_heads")
        if any(cfg.get(k) is not None for k in ("num_key_value_heads", "n_head_kv", "num_kv_heads"))
        else heads
    )
    head_dim = (
        _optional_int(cfg, source, "head_dim")
        or _optional_int(cfg, source, "attention_head_dim")
        or hidden // heads
    )
    vocab = _positive_int(cfg, source, "vocab_size")
    facts: dict[str, Any] = {
        "name": name, "source": source, "architecture": architecture, "model_type": model_type,
        "dtype_bytes": dtype_bytes, "hidden_size": hidden, "num_layers": layers,
        "num_attention_heads": heads, "num_kv_heads": kv_heads, "head_dim": head_dim, "v_head_dim": head_dim,
        "attention_kind": AttentionKind.MHA if kv_heads == heads else AttentionKind.MQA if kv_heads == 1 else AttentionKind.GQA,
        "attention_bias": bool(cfg.get("attention_bias", model_type == "qwen2")),
        "qk_norm": model_type in ("qwen3", "qwen3_moe", "qwen3_next", "gemma3_text") or bool(cfg.get("use_qk_norm")),
        "vocab_size": vocab,
        "tie_word_embeddings": tied_by_default(model_type) if tie_word_embeddings is None else tie_word_embeddings,
        "intermediate_size": _optional_int(cfg, source, "intermediate_size"),
        "max_position_embeddings": _positive_int(cfg, source, "max_position_embeddings", "max_sequence_length", "seq_length"),
        "quant": quant, "multimodal": multimodal, "vision": vision,
        "layer_attention": _layer_types(cfg, layers, source) or (LayerKind.FULL,) * layers,
        "layer_mlp": (MlpKind.DENSE,) * layers,
    }  # fmt: skip
    if facts["layer_attention"].count(LayerKind.SLIDING):
        facts["sliding_window"] = _positive_int(cfg, source, "sliding_window")
    not_modelled: list[str] = (
        ["vision tower weights (not in the weights book; SGLang's VLM fraction and reserve are applied)"]
        if multimodal
        else []
    )
    reader = _FAMILY_READERS.get(model_type)
    if reader is not None:
        reader(cfg, source, facts, not_modelled)
    facts["not_modelled"] = tuple(not_modelled)
    return ModelSpec(**facts)


def _qwen_moe(cfg: dict[str, Any], source: str, facts: dict[str, Any], notes: list[str]) -> None:
    layers = facts["num_layers"]
    step = _optional_int(cfg, source, "decoder_sparse_step", 1) or 1
    dense_only = set(cfg.get("mlp_only_layers") or [])
    facts["layer_mlp"] = tuple(
        MlpKind.MOE if i not in dense_only and (i + 1) % step == 0 else MlpKind.DENSE for i in range(layers)
    )
    shared = _optional_int(cfg, source, "shared_expert_intermediate_size")
    facts["moe"] = MoeSpec(
        num_routed_experts=_positive_int(cfg, source, "num_experts"),
        experts_per_token=_positive_int(cfg, source, "num_experts_per_tok"),
        expert_intermediate_size=_positive_int(cfg, source, "moe_intermediate_size"),
        shared_intermediate_size=shared,
        shared_expert_gate=shared > 0,
    )


def _mixtral(cfg: dict[str, Any], source: str, facts: dict[str, Any], notes: list[str]) -> None:
    facts["layer_mlp"] = (MlpKind.MOE,) * facts["num_layers"]
    facts["moe"] = MoeSpec(
        num_routed_experts=_positive_int(cfg, source, "num_local_experts"),
        experts_per_token=_positive_int(cfg, source, "num_experts_per_tok"),
        expert_intermediate_size=_positive_int(cfg, source, "intermediate_size"),
        shared_intermediate_size=0,
    )


def _gpt_oss(cfg: dict[str, Any], source: str, facts: dict[str, Any], notes: list[str]) -> None:
    _mixtral(cfg, source, facts, notes)
    facts["moe"] = facts["moe"].model_copy(update={"expert_bias": True})
    facts["attention_sinks"] = True
    facts["attention_bias"] = True


def _llama4(cfg: dict[str, Any], source: str, facts: dict[str, Any], notes: list[str]) -> None:
    layers = facts["num_layers"]
    chunk = cfg.get("attention_chunk_size")
    if chunk:  # chunked local attention on 3 of every 4 layers; the 4th is global
        facts["layer_attention"] = tuple(
            LayerKind.FULL if (i + 1) % 4 == 0 else LayerKind.SLIDING for i in range(layers)
        )
        facts["sliding_window"] = int(chunk)
    step = _optional_int(cfg, source, "interleave_moe_layer_step", 1) or 1
    facts["layer_mlp"] = tuple(MlpKind.MOE if (i + 1) % step == 0 else MlpKind.DENSE for i in range(layers))
    expert = _positive_int(cfg, source, "intermediate_size")
    facts["intermediate_size"] = _optional_int(cfg, source, "intermediate_size_mlp") or expert
    facts["moe"] = MoeSpec(
        num_routed_experts=_positive_int(cfg, source, "num_local_experts"),
        experts_per_token=_positive_int(cfg, source, "num_experts_per_tok"),
        expert_intermediate_size=expert,
        shared_intermediate_size=expert,
    )


def _deepseek(cfg: dict[str, Any], source: str, facts: dict[str, Any], notes: list[str]) -> None:
    layers = facts["num_layers"]
    rope = _positive_int(cfg, source, "qk_rope_head_dim")
    nope = _positive_int(cfg, source, "qk_nope_head_dim")
    v_dim = _positive_int(cfg, source, "v_head_dim")
    q_lora = cfg.get("q_lora_rank")
    facts["mla"] = MlaSpec(
        kv_lora_rank=_positive_int(cfg, source, "kv_lora_rank"),
        q_lora_rank=int(q_lora) if q_lora else None,
        qk_rope_head_dim=rope,
        qk_nope_head_dim=nope,
        v_head_dim=v_dim,
    )
    facts["attention_kind"] = AttentionKind.MLA
    facts["head_dim"] = nope + rope
    facts["v_head_dim"] = v_dim
    facts["num_kv_heads"] = facts["num_attention_heads"]
    if cfg.get("index_head_dim"):
        facts["attention_kind"] = AttentionKind.DSA
        facts["dsa_index_head_dim"] = _positive_int(cfg, source, "index_head_dim")
        facts["dsa_index_heads"] = _positive_int(cfg, source, "index_n_heads")
    first_dense = _optional_int(cfg, source, "first_k_dense_replace")
    freq = _optional_int(cfg, source, "moe_layer_freq", 1) or 1
    experts = _optional_int(cfg, source, "n_routed_experts")
    if experts:
        facts["layer_mlp"] = tuple(
            MlpKind.MOE if i >= first_dense and i % freq == 0 else MlpKind.DENSE for i in range(layers)
        )
        expert_size = _positive_int(cfg, source, "moe_intermediate_size")
        facts["moe"] = MoeSpec(
            num_routed_experts=experts,
            experts_per_token=_positive_int(cfg, source, "num_experts_per_tok"),
            expert_intermediate_size=expert_size,
            shared_intermediate_size=_optional_int(cfg, source, "n_shared_experts") * expert_size,
        )
    facts["mtp_layers"] = _optional_int(cfg, source, "num_nextn_predict_layers")


def _qwen3_next(cfg: dict[str, Any], source: str, facts: dict[str, Any], notes: list[str]) -> None:
    layers = facts["num_layers"]
    interval = _positive_int(cfg, source, "full_attention_interval")
    if "layer_types" not in cfg:
        facts["layer_attention"] = tuple(
            LayerKind.FULL if (i + 1) % interval == 0 else LayerKind.LINEAR for i in range(layers)
        )
    key_heads = _positive_int(cfg, source, "linear_num_key_heads")
    key_dim = _positive_int(cfg, source, "linear_key_head_dim")
    value_heads = _positive_int(cfg, source, "linear_num_value_heads")
    value_dim = _positive_int(cfg, source, "linear_value_head_dim")
    facts["state"] = StateSpec(
        conv_dim=2 * key_heads * key_dim + value_heads * value_dim,
        conv_kernel=_positive_int(cfg, source, "linear_conv_kernel_dim"),
        num_heads=value_heads,
        head_dim=value_dim,
        state_size=key_dim,
        n_groups=key_heads,
        inner_size=value_heads * value_dim,
    )
    _qwen_moe(cfg, source, facts, notes)


_NEMOTRON_PATTERN = {
    "M": (LayerKind.LINEAR, MlpKind.NONE),
    "*": (LayerKind.FULL, MlpKind.NONE),
    "-": (LayerKind.NONE, MlpKind.DENSE),
    "E": (LayerKind.NONE, MlpKind.MOE),
}


def _nemotron_h(cfg: dict[str, Any], source: str, facts: dict[str, Any], notes: list[str]) -> None:
    pattern = str(_need(cfg, source, "hybrid_override_pattern"))
    if len(pattern) != facts["num_layers"] or set(pattern) - set(_NEMOTRON_PATTERN):
        raise InputError(
            f"must have one of M * - E per layer ({facts['num_layers']} layers)",
            field="hybrid_override_pattern",
            source=source,
        )
    facts["layer_attention"] = tuple(_NEMOTRON_PATTERN[c][0] for c in pattern)
    facts["layer_mlp"] = tuple(_NEMOTRON_PATTERN[c][1] for c in pattern)
    facts["mlp_gated"] = False
    heads = _positive_int(cfg, source, "mamba_num_heads")
    head_dim = _positive_int(cfg, source, "mamba_head_dim")
    groups = _positive_int(cfg, source, "n_groups")
    state = _positive_int(cfg, source, "ssm_state_size")
    ssm_dtype = str(cfg.get("mamba_ssm_cache_dtype", "float32"))
    facts["state"] = StateSpec(
        conv_dim=heads * head_dim + 2 * groups * state,
        conv_kernel=_positive_int(cfg, source, "conv_kernel"),
        num_heads=heads,
        head_dim=head_dim,
        state_size=state,
        n_groups=groups,
        inner_size=heads * head_dim,
        ssm_dtype_bytes=2 if ssm_dtype in ("bfloat16", "float16") else 4,
    )
    experts = _optional_int(cfg, source, "n_routed_experts")
    if experts:
        expert_size = _positive_int(cfg, source, "moe_intermediate_size")
        facts["moe"] = MoeSpec(
            num_routed_experts=experts,
            experts_per_token=_positive_int(cfg, source, "num_experts_per_tok"),
            expert_intermediate_size=expert_size,
            shared_intermediate_size=_optional_int(cfg, source, "n_shared_experts")
            * _optional_int(cfg, source, "moe_shared_expert_intermediate_size"),
        )


def _gemma3(cfg: dict[str, Any], source: str, facts: dict[str, Any], notes: list[str]) -> None:
    if "layer_types" not in cfg and cfg.get("sliding_window"):
        pattern = _optional_int(cfg, source, "sliding_window_pattern", 6) or 6
        layers = facts["num_layers"]
        facts["layer_attention"] = tuple(
            LayerKind.FULL if (i + 1) % pattern == 0 else LayerKind.SLIDING for i in range(layers)
        )
        facts["sliding_window"] = _positive_int(cfg, source, "sliding_window")


_FAMILY_READERS = {
    "qwen2_moe": _qwen_moe,
    "qwen3_moe": _qwen_moe,
    "mixtral": _mixtral,
    "gpt_oss": _gpt_oss,
    "llama4_text": _llama4,
    "llama4": _llama4,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "deepseek_v32": _deepseek,
    "kimi_k2": _deepseek,
    "qwen3_next": _qwen3_next,
    "nemotron_h": _nemotron_h,
    "gemma3_text": _gemma3,
    "gemma3": _gemma3,
}
