"""Per-family readers behind `model_from_config`: which typed config fields mean what.

Each family differs only in where it keeps a handful of facts (expert counts, layer
patterns, MLA ranks, recurrent state shapes); everything else is shared in `build_spec`.
The readers see a validated `TextConfig` with the family's class defaults already filled in,
so a value is either the right type and in bounds, or absent (None) and then an error here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvtop.domain.config_schema import TextConfig
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
)
from kvtop.domain.model_defaults import Family, LayerPattern
from kvtop.domain.quant import QuantSpec

_LAYER_TYPES = {
    "full_attention": LayerKind.FULL,
    "attention": LayerKind.FULL,
    "sliding_attention": LayerKind.SLIDING,
    "chunked_attention": LayerKind.SLIDING,
    "linear_attention": LayerKind.LINEAR,
    "mamba": LayerKind.LINEAR,
}


# Every real config states these: a class default for them (transformers' 32 layers, 4096 wide)
# would describe another model than the checkpoint, so their absence is an error, not a default.
STRUCTURAL_FIELDS = frozenset({"hidden_size", "num_hidden_layers"})


class Fields:
    """A validated text section with its file, field prefix and family, for readers that need values."""

    def __init__(
        self,
        text: TextConfig,
        *,
        source: str,
        prefix: str,
        family: Family,
        defaulted: frozenset[str] = frozenset(),
    ) -> None:
        self.text = text
        self.source = source
        self.prefix = prefix
        self.family = family
        self._defaulted = defaulted
        self._defaults_read: dict[str, Any] = {}

    def get(self, name: str) -> Any:
        value = getattr(self.text, name)
        if name in self._defaulted and value is not None:
            self._defaults_read[name] = value
        return value

    def defaults_read(self) -> tuple[str, ...]:
        """`name=value` for each class default a reader used (the file left the field out)."""
        return tuple(f"{name}={value}" for name, value in sorted(self._defaults_read.items()))

    def need(self, name: str) -> int:
        """A count the family cannot be read without (the model's shape: never a class default)."""
        value = self.get(name)
        if value is None or (name in STRUCTURAL_FIELDS and name in self._defaulted):
            raise self.error(name, f"missing (a {self.family.model_type} config needs it)")
        return int(value)

    def opt(self, name: str, default: int = 0) -> int:
        value = self.get(name)
        return default if value is None else int(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.get(name)
        return default if value is None else bool(value)

    def error(self, name: str, message: str) -> InputError:
        return InputError(message, field=self.prefix + name, source=self.source)


def build_spec(
    f: Fields,
    *,
    architecture: str,
    name: str,
    dtype_bytes: int,
    quant: QuantSpec,
    multimodal: bool,
    tie_word_embeddings: bool | None,
    vision: VisionSpec | None,
    config_model_type: str,
) -> ModelSpec:
    """Read the facts shared by every family, then the family's own (see module docstring).

    `tie_word_embeddings` is the config's own value when it states one (the text config's, else
    the outer config's); when neither does, the family's class default decides.
    """
    family = f.family
    hidden = f.need("hidden_size")
    heads = f.need("num_attention_heads")
    layers = f.need("num_hidden_layers")
    kv_heads = f.opt("num_key_value_heads", heads)
    if kv_heads > heads or heads % kv_heads:
        raise f.error(
            "num_key_value_heads",
            f"{kv_heads} KV heads cannot serve {heads} attention heads (they must divide them)",
        )
    head_dim = f.opt("head_dim", hidden // heads)
    if head_dim < 1:
        raise f.error(
            "num_attention_heads", f"{heads} heads leave no width of hidden_size {hidden} (head_dim 0)"
        )
    tied = f.flag("tie_word_embeddings") if tie_word_embeddings is None else tie_word_embeddings
    bias = f.get("attention_bias")
    kind = (
        AttentionKind.MHA if kv_heads == heads else AttentionKind.MQA if kv_heads == 1 else AttentionKind.GQA
    )
    facts: dict[str, Any] = {
        "name": name,
        "source": f.source,
        "architecture": architecture,
        "model_type": family.model_type,
        "config_model_type": config_model_type,
        "dtype_bytes": dtype_bytes,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_attention_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "v_head_dim": head_dim,
        "attention_kind": kind,
        "attention_bias": family.qkv_bias or f.flag("qkv_bias") or (f.flag("bias") if bias is None else bias),
        "qk_norm": family.qk_norm or f.flag("use_qk_norm"),
        "vocab_size": f.need("vocab_size"),
        "tie_word_embeddings": tied,
        "intermediate_size": f.opt("intermediate_size"),
        "max_position_embeddings": f.need("max_position_embeddings"),
        "quant": quant,
        "multimodal": multimodal,
        "vision": vision,
        "layer_attention": _layer_kinds(f, layers),
        "layer_mlp": (MlpKind.DENSE,) * layers,
    }
    if LayerKind.SLIDING in facts["layer_attention"]:
        window = f.opt(
            "attention_chunk_size" if family.layer_pattern is LayerPattern.CHUNKED else "sliding_window"
        )
        if window < 1:
            raise f.error("sliding_window", "missing (the config has sliding-window layers)")
        facts["sliding_window"] = window
    elif family.layer_pattern is LayerPattern.NONE and f.get("layer_types") is None:
        facts["config_sliding_window"] = f.opt("sliding_window") or None
    not_modelled: list[str] = (
        ["vision tower weights (not in the weights book; SGLang's VLM fraction and reserve apply where it "
         "serves the model as multimodal)"]
        if multimodal
        else []
    )
    reader = _FAMILY_READERS.get(family.reads_as)
    if reader is not None:
        reader(f, facts, not_modelled)
    facts["not_modelled"] = tuple(not_modelled)
    facts["defaults_used"] = f.defaults_read()
    return ModelSpec(**facts)


def _layer_kinds(f: Fields, layers: int) -> tuple[LayerKind, ...]:
    """`layer_types` as stated, else the family's pattern as its config class derives it."""
    stated = f.get("layer_types")
    if stated is not None:
        if len(stated) != layers:
            raise f.error("layer_types", f"must list one type per layer ({layers}), not {len(stated)}")
        try:
            return tuple(_LAYER_TYPES[item] for item in stated)
        except KeyError as missing:
            raise f.error("layer_types", f"unknown layer type {missing}") from None
    window = f.opt("sliding_window")
    pattern = f.family.layer_pattern
    full, sliding = LayerKind.FULL, LayerKind.SLIDING
    if pattern is LayerPattern.LINEAR:
        interval = f.need("full_attention_interval")
        return tuple(full if (i + 1) % interval == 0 else LayerKind.LINEAR for i in range(layers))
    if pattern is LayerPattern.CHUNKED:
        if f.get("attention_chunk_size") is None:
            return (full,) * layers
        return tuple(full if no_rope == 0 else sliding for no_rope in _no_rope_layers(f, layers))
    if window < 1 or pattern is LayerPattern.NONE:
        return (full,) * layers
    if pattern is LayerPattern.ALTERNATE:
        return tuple(sliding if (i + 1) % 2 else full for i in range(layers))
    if pattern is LayerPattern.EVERY_NTH_FULL:
        every = f.opt("sliding_window_pattern", 6)
        return tuple(sliding if (i + 1) % every else full for i in range(layers))
    if pattern is LayerPattern.EVERY_4TH_FULL:
        return tuple(sliding if (i + 1) % 4 else full for i in range(layers))
    if pattern is LayerPattern.ALL_SLIDING:
        return (sliding,) * layers
    if not f.flag("use_sliding_window"):
        return (full,) * layers
    start = f.opt("max_window_layers")
    if pattern is LayerPattern.QWEN2_WINDOW:
        return tuple(sliding if i >= start else full for i in range(layers))
    return tuple(sliding if (i + 1) % 2 and i < start else full for i in range(layers))  # QWEN2_MOE_WINDOW


def _no_rope_layers(f: Fields, layers: int) -> tuple[int, ...]:
    """Llama4TextConfig: 1 marks a RoPE (chunked) layer, 0 a NoPE (global) one; default every 4th is 0."""
    stated = f.get("no_rope_layers")
    if stated:
        if len(stated) != layers:
            raise f.error("no_rope_layers", f"must list one flag per layer ({layers}), not {len(stated)}")
        return tuple(stated)
    interval = f.need("no_rope_layer_interval")
    return tuple(int((i + 1) % interval != 0) for i in range(layers))


def _experts(f: Fields, count_field: str) -> tuple[int, int]:
    """(routed experts, experts per token), the second no more than the first."""
    experts = f.need(count_field)
    per_token = f.need("num_experts_per_tok")
    if per_token > experts or experts < 1:
        raise f.error("num_experts_per_tok", f"{per_token} experts per token out of {experts}")
    return experts, per_token


def _qwen_moe(f: Fields, facts: dict[str, Any], notes: list[str]) -> None:
    layers = facts["num_layers"]
    step = f.opt("decoder_sparse_step", 1)
    dense_only = set(f.get("mlp_only_layers") or ())
    facts["layer_mlp"] = tuple(
        MlpKind.MOE if i not in dense_only and (i + 1) % step == 0 else MlpKind.DENSE for i in range(layers)
    )
    shared = f.opt("shared_expert_intermediate_size")
    experts, per_token = _experts(f, "num_experts")
    facts["moe"] = MoeSpec(
        num_routed_experts=experts,
        experts_per_token=per_token,
        expert_intermediate_size=f.need("moe_intermediate_size"),
        shared_intermediate_size=shared,
        shared_expert_gate=shared > 0,
    )


def _mixtral(f: Fields, facts: dict[str, Any], notes: list[str]) -> None:
    facts["layer_mlp"] = (MlpKind.MOE,) * facts["num_layers"]
    experts, per_token = _experts(f, "num_local_experts")
    facts["moe"] = MoeSpec(
        num_routed_experts=experts,
        experts_per_token=per_token,
        expert_intermediate_size=f.need("intermediate_size"),
        shared_intermediate_size=0,
    )


def _gpt_oss(f: Fields, facts: dict[str, Any], notes: list[str]) -> None:
    _mixtral(f, facts, notes)
    facts["moe"] = facts["moe"].model_copy(update={"expert_bias": True})
    facts["attention_sinks"] = True
    facts["attention_bias"] = True


def _llama4(f: Fields, facts: dict[str, Any], notes: list[str]) -> None:
    layers = facts["num_layers"]
    step = f.opt("interleave_moe_layer_step", 1)
    facts["layer_mlp"] = tuple(MlpKind.MOE if (i + 1) % step == 0 else MlpKind.DENSE for i in range(layers))
    expert = f.need("intermediate_size")
    facts["intermediate_size"] = f.opt("intermediate_size_mlp") or expert
    experts, per_token = _experts(f, "num_local_experts")
    facts["moe"] = MoeSpec(
        num_routed_experts=experts,
        experts_per_token=per_token,
        expert_intermediate_size=expert,
        shared_intermediate_size=expert,
    )


def _deepseek(f: Fields, facts: dict[str, Any], notes: list[str]) -> None:
    layers = facts["num_layers"]
    rope = f.need("qk_rope_head_dim")
    nope = f.need("qk_nope_head_dim")
    v_dim = f.need("v_head_dim")
    facts["mla"] = MlaSpec(
        kv_lora_rank=f.need("kv_lora_rank"),
        q_lora_rank=f.get("q_lora_rank"),
        qk_rope_head_dim=rope,
        qk_nope_head_dim=nope,
        v_head_dim=v_dim,
    )
    facts["attention_kind"] = AttentionKind.MLA
    facts["head_dim"] = nope + rope
    facts["v_head_dim"] = v_dim
    facts["num_kv_heads"] = facts["num_attention_heads"]
    if f.get("index_head_dim"):
        facts["attention_kind"] = AttentionKind.DSA
        facts["dsa_index_head_dim"] = f.need("index_head_dim")
        facts["dsa_index_heads"] = f.need("index_n_heads")
    first_dense = f.opt("first_k_dense_replace")
    freq = f.opt("moe_layer_freq", 1)
    if f.opt("n_routed_experts"):
        facts["layer_mlp"] = tuple(
            MlpKind.MOE if i >= first_dense and i % freq == 0 else MlpKind.DENSE for i in range(layers)
        )
        expert_size = f.need("moe_intermediate_size")
        experts, per_token = _experts(f, "n_routed_experts")
        facts["moe"] = MoeSpec(
            num_routed_experts=experts,
            experts_per_token=per_token,
            expert_intermediate_size=expert_size,
            shared_intermediate_size=f.opt("n_shared_experts") * expert_size,
        )
    facts["mtp_layers"] = f.opt("num_nextn_predict_layers")


def _qwen3_next(f: Fields, facts: dict[str, Any], notes: list[str]) -> None:
    key_heads = f.need("linear_num_key_heads")
    key_dim = f.need("linear_key_head_dim")
    value_heads = f.need("linear_num_value_heads")
    value_dim = f.need("linear_value_head_dim")
    facts["state"] = StateSpec(
        conv_dim=2 * key_heads * key_dim + value_heads * value_dim,
        conv_kernel=f.need("linear_conv_kernel_dim"),
        num_heads=value_heads,
        head_dim=value_dim,
        state_size=key_dim,
        n_groups=key_heads,
        inner_size=value_heads * value_dim,
    )
    _qwen_moe(f, facts, notes)


_NEMOTRON_PATTERN = {
    "M": (LayerKind.LINEAR, MlpKind.NONE),
    "*": (LayerKind.FULL, MlpKind.NONE),
    "-": (LayerKind.NONE, MlpKind.DENSE),
    "E": (LayerKind.NONE, MlpKind.MOE),
}


def _nemotron_h(f: Fields, facts: dict[str, Any], notes: list[str]) -> None:
    pattern = f.get("hybrid_override_pattern")
    if pattern is None:
        raise f.error("hybrid_override_pattern", "missing (a nemotron_h config needs its layer pattern)")
    if len(pattern) != facts["num_layers"] or set(pattern) - set(_NEMOTRON_PATTERN):
        raise f.error(
            "hybrid_override_pattern", f"must have one of M * - E per layer ({facts['num_layers']} layers)"
        )
    facts["layer_attention"] = tuple(_NEMOTRON_PATTERN[c][0] for c in pattern)
    facts["layer_mlp"] = tuple(_NEMOTRON_PATTERN[c][1] for c in pattern)
    facts["mlp_gated"] = False
    heads = f.need("mamba_num_heads")
    head_dim = f.need("mamba_head_dim")
    groups = f.need("n_groups")
    state = f.need("ssm_state_size")
    ssm_dtype = f.get("mamba_ssm_cache_dtype") or "float32"
    facts["state"] = StateSpec(
        conv_dim=heads * head_dim + 2 * groups * state,
        conv_kernel=f.need("conv_kernel"),
        num_heads=heads,
        head_dim=head_dim,
        state_size=state,
        n_groups=groups,
        inner_size=heads * head_dim,
        ssm_dtype_bytes=2 if ssm_dtype in ("bfloat16", "float16") else 4,
        ssm_dtype_stated=f.get("mamba_ssm_cache_dtype") is not None,
    )
    if "E" in pattern:
        expert_size = f.need("moe_intermediate_size")
        experts, per_token = _experts(f, "n_routed_experts")
        facts["moe"] = MoeSpec(
            num_routed_experts=experts,
            experts_per_token=per_token,
            expert_intermediate_size=expert_size,
            shared_intermediate_size=f.opt("n_shared_experts") * f.opt("moe_shared_expert_intermediate_size"),
        )


_Reader = Callable[[Fields, dict[str, Any], list[str]], None]
_FAMILY_READERS: dict[str, _Reader] = {
    "qwen_moe": _qwen_moe,
    "mixtral": _mixtral,
    "gpt_oss": _gpt_oss,
    "llama4": _llama4,
    "deepseek": _deepseek,
    "qwen3_next": _qwen3_next,
    "nemotron_h": _nemotron_h,
}
READERS = frozenset({"dense", *_FAMILY_READERS})
