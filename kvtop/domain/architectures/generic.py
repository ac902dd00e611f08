"""A `model_type` with no entry: read as a generic decoder where its fields allow, visibly; else refused.

Most new families are a Llama-shaped decoder with their own names for a few extras. When the config has
the standard decoder fields and nothing that changes the KV layout in a way only an entry can say, kvtop
plans it with the fields it has (no class defaults: every field it reads must be in the file) and says
so: "generic reading: no architecture entry for 'foo'; assumed …". Latent attention (`kv_lora_rank`),
`layer_types` and experts under the common names are read as their entries read them, and named in the
reading. A field below that changes the KV layout stops it, and the refusal names that field.
"""

from __future__ import annotations

from kvtop.domain.architectures.description import Architecture, Latent
from kvtop.domain.architectures.layer_rules import LAYER_TYPE_WORDS
from kvtop.domain.architectures.moe_rules import FirstDense, LayerTypes, Moe, Placement, Shared, SparseStep
from kvtop.domain.architectures.registry import nearest_entry
from kvtop.domain.config_schema import TextConfig
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model import BodyShape, LayerKind

GENERIC_CLASS = "(none: generic reading)"

# Fields whose KV-layout meaning only an entry can give (a recurrent state, layers that share or skip KV,
# per-kind head shapes, compressed or block-sparse attention), with what each means.
KV_LAYOUT_FIELDS: tuple[tuple[str, str], ...] = (
    ("hybrid_override_pattern", "a Mamba/attention layer pattern"),
    ("layers_block_type", "a Mamba/attention block per layer"),
    ("linear_num_key_heads", "linear-attention (gated delta net) layers"),
    ("linear_attn_config", "linear-attention layers"),
    ("ssm_state_size", "Mamba state layers"),
    ("mamba_d_state", "Mamba state layers"),
    ("attn_layer_period", "attention on some layers only (Mamba between)"),
    ("attn_layer_indices", "attention on some layers only"),
    ("block_configs", "a per-layer block configuration (heads, no-op layers)"),
    ("num_kv_shared_layers", "layers that read another layer's KV"),
    ("cla_share_factor", "cross-layer attention (layers sharing KV)"),
    ("global_head_dim", "global layers with their own head size"),
    ("num_global_key_value_heads", "global layers with their own KV heads"),
    ("swa_num_key_value_heads", "sliding-window layers with their own KV heads"),
    ("hybrid_layer_pattern", "a per-layer attention pattern"),
    ("compress_ratios", "compressed attention per layer"),
    ("sparse_attention_config", "block-sparse attention with its own index"),
    ("no_rope_layers", "chunked local attention (Llama 4's pattern)"),
    ("attention_chunk_size", "chunked local attention"),
)

# Fields that add weights only an entry can shape (a reading without them would drop their bytes silently).
WEIGHT_LAYOUT_FIELDS: tuple[tuple[str, str], ...] = (
    ("gating", "an attention output-gate projection (Laguna's g_proj, vLLM 0.33.0 models/laguna.py)"),
    ("num_attention_heads_per_layer", "query heads per layer"),
    # AFMoE (SGLang 0.5.23 models/afmoe.py): dense layers first by count, besides an attention gate_proj and four
    # norms a layer that its config does not name
    ("num_dense_layers", "dense MLP layers before the experts, by count (AFMoE)"),
)

# The experts' common names: how many (the first stated counts), how many a token takes, how many shared ones;
# Aria's moe_num_experts / moe_topk / moe_num_shared_experts (vLLM 0.33.0 models/aria.py AriaTextMoELayer: every
# layer, experts and each shared one intermediate_size wide, a router [experts, hidden] in the model dtype);
# Bailing's num_shared_experts (vLLM 0.33.0 models/bailing_moe.py BailingMoE: one shared MLP of
# moe_intermediate_size × num_shared_experts, unless moe_shared_expert_intermediate_size is stated)
EXPERT_COUNTS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")
PER_TOKEN = {"moe_num_experts": "moe_topk"}  # else num_experts_per_tok
SHARED_COUNTS = ("n_shared_experts", "moe_num_shared_experts", "num_shared_experts")


def _state_layers(text: TextConfig) -> tuple[str, str] | None:
    """("layer_types", why) where it lists a state layer (linear attention, Mamba, conv: LayerKind.LINEAR), whose
    state's shape and weights only an entry's StateSpec gives (Bailing-V3's KDA layers: bailing_hybrid's
    layer_types, vLLM 0.33.0 / SGLang 0.5.23 models/bailing_moe_v3.py); None otherwise."""
    words = [w for w in text.layer_types or () if LAYER_TYPE_WORDS.get(w) is LayerKind.LINEAR]
    return ("layer_types", f"state layers ({words[0]!r}: a recurrent state per request)") if words else None


def generic_entry(
    stated_type: str, architecture: str, text: TextConfig, raw_keys: frozenset[str], source: str
) -> tuple[Architecture, str]:
    """(a generic entry for this config, the reading that says what it assumed), or UnsupportedModelError.

    `raw_keys`: the text section's keys with a value (not null, false, 0 or empty), whether kvtop types them or not.
    """
    stated = raw_keys | frozenset(
        n for n in text.model_fields_set if getattr(text, n) not in (None, 0, [], False)
    )
    blocking = next(
        ((name, why) for name, why in KV_LAYOUT_FIELDS + WEIGHT_LAYOUT_FIELDS if name in stated), None
    ) or _state_layers(text)
    what = f"model_type {stated_type!r}" if stated_type else "no model_type"
    if blocking is not None:
        field, why = blocking
        nearest, reason = nearest_entry(stated_type, stated, architecture)
        raise UnsupportedModelError(
            f"architecture {architecture!r} ({what}) has no architecture entry in kvtop, and its config has "
            f"{field} ({why}), which kvtop reads only with one; nearest: {nearest} ({reason}); to read it as "
            f"{nearest}, pass --model-family {nearest} (every field {nearest} reads must then be in the file)",
            field=field,
            source=source,
        )
    # relu2 (squared ReLU) MLPs are up and down only wherever the engines build one: vLLM 0.33.0 NemotronHMLP,
    # NemotronMLP, ArceeMLP, and Cosmos3 Edge's text model built as NemotronH MLP layers (models/cosmos3_edge.py)
    gated = text.hidden_act != "relu2"
    mlp = "a gated MLP" if gated else "an up/down MLP (hidden_act relu2, no gate)"
    assumed: list[str] = [f"a Llama-shaped decoder (q, k, v, o; {mlp}; RMSNorm)"]
    latent = moe = None
    if "kv_lora_rank" in stated:
        latent = Latent()
        assumed.append(
            "multi-head latent attention from kv_lora_rank + qk_rope_head_dim (DeepSeek's reading)"
        )
    experts = next((name for name in EXPERT_COUNTS if name in stated), None)
    # the MLP's width (or the experts'): without it the reading would drop the MLP's bytes (a config without its
    # width states no shape at all: the reader names hidden_size first)
    mlp_unstated = "intermediate_size" not in stated and not (experts and "moe_intermediate_size" in stated)
    if mlp_unstated and text.hidden_size is not None:
        raise UnsupportedModelError(
            f"architecture {architecture!r} ({what}) has no architecture entry in kvtop, and its config states no "
            "intermediate_size (the MLP width a generic reading needs); it names its shape its own way",
            field="intermediate_size",
            source=source,
        )
    if experts is not None:
        size = "moe_intermediate_size" if "moe_intermediate_size" in stated else "intermediate_size"
        placement: Placement = (
            LayerTypes()
            if "mlp_layer_types" in stated
            else FirstDense()
            if "first_k_dense_replace" in stated or "moe_layer_freq" in stated
            else SparseStep()
        )
        shared_count = next((name for name in SHARED_COUNTS if name in stated), None)
        shared = (
            Shared(size_field="shared_expert_intermediate_size")
            if "shared_expert_intermediate_size" in stated
            else Shared(count_field=shared_count)
            if shared_count is not None
            else Shared()
        )
        per_token = PER_TOKEN.get(experts, "num_experts_per_tok")
        moe = Moe(
            experts, per_token_field=per_token, expert_size_field=size, shared=shared, placement=placement
        )
        assumed.append(f"experts from {experts} × {size}")
    # use_post_norm: a norm after attention and after the MLP besides the two before (vLLM 0.33.0
    # models/hyperclovax.py HyperCLOVAXDecoderLayer: post_norm1, post_norm2)
    body = BodyShape(norms_per_layer=4) if "use_post_norm" in stated else BodyShape()
    if "use_post_norm" in stated:
        assumed.append("four norms a layer (use_post_norm)")
    if "layer_types" in stated:
        assumed.append("each layer's attention from layer_types")
    elif text.sliding_window:
        # ModelSpec.config_sliding_window: each engine's book says whether it windows a layer whose class passes no
        # window of its own (vLLM does: docs/engines/vllm.md §3.4, engines/vllm; the others keep every token); the
        # note names no engine (shared code), the engine's own rule is what the figures follow
        assumed.append(
            f"the config's sliding_window ({text.sliding_window:,}) on every layer where the engine windows a class "
            "that passes no window of its own, full attention where it does not (a window pattern of the class's "
            "own is not read)"
        )
    reading = (
        f"generic reading: no architecture entry for {stated_type or architecture!r}; assumed "
        + "; ".join(assumed)
        + "; not checked against the engines' model code"
    )
    entry = Architecture(
        stated_type or "generic",
        GENERIC_CLASS,
        "kvtop's generic decoder reading",
        {},
        latent=latent,
        moe=moe,
        mlp_gated=gated,
        body=body,
        mtp_fields=("num_nextn_predict_layers",) if latent is not None else (),
        not_modelled=(reading,),
    )
    return entry, reading
