"""Architecture arithmetic every engine's deployment rules share: LoRA slot buffers, redundant experts,
a draft model's weights. Each engine supplies its own counts, defaults and sources; the shapes here are
the ones both SGLang (`lora/mem_pool.py` `get_lora_A_shape`/`get_lora_B_shape`) and vLLM
(`lora/layers/*` `create_lora_weights`) allocate for a dense attention + gated-MLP layer.
"""

from __future__ import annotations

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import AttentionKind, LayerKind, MlpKind, ModelSpec
from kvtop.domain.weights import WeightsBook, weights_book

#: The LoRA target modules of a dense decoder layer, in the engines' stacked names.
LORA_MODULES: tuple[str, ...] = ("qkv_proj", "o_proj", "gate_up_proj", "down_proj")
#: Adapter names of the same projections (what `--lora-target-modules` takes) → the stacked module.
LORA_MODULE_NAMES: dict[str, str] = {
    "q_proj": "qkv_proj", "k_proj": "qkv_proj", "v_proj": "qkv_proj", "qkv_proj": "qkv_proj",
    "o_proj": "o_proj", "gate_proj": "gate_up_proj", "up_proj": "gate_up_proj", "gate_up_proj": "gate_up_proj",
    "down_proj": "down_proj", "all": "all",
}  # fmt: skip


def lora_unmodelled_reason(model: ModelSpec) -> str | None:
    """Why kvtop cannot size LoRA slots for this architecture (None: it can)."""
    if model.mla is not None or model.attention_kind not in (
        AttentionKind.MHA,
        AttentionKind.GQA,
        AttentionKind.MQA,
    ):
        return "LoRA slots of MLA / non-standard attention projections are not modelled"
    if model.moe is not None:
        return "per-expert LoRA slots of MoE layers are not modelled"
    if not model.mlp_gated:
        return "LoRA slots of an ungated MLP are not modelled"
    return None


def lora_slot_bytes(
    model: ModelSpec, layout: ParallelLayout, layers: range, *, slots: int, rank: int, modules: tuple[str, ...],
    dtype_bytes: int,
) -> int:  # fmt: skip
    """Bytes one rank allocates for `slots` adapters of rank `rank` on `modules` of its `layers`.

    Per layer and slot (h hidden, d head dim, I intermediate, t attention TP):
      qkv_proj      A 3r × h                 B (heads/t + 2 × KV heads per rank) × d × r
      o_proj        A r × heads × d / t      B h × r
      gate_up_proj  A 2r × h                 B 2I / t × r
      down_proj     A r × I / t              B h × r
    Column-parallel A and row-parallel B are whole on every rank; KV heads stop dividing at one per rank.
    """
    h, d, t = model.hidden_size, model.head_dim, layout.attn_tp
    q_out = model.num_attention_heads * d // t
    kv_out = layout.kv_heads_per_rank(model.num_kv_heads) * d
    inter = model.intermediate_size // layout.tp
    per_module = {
        "qkv_proj": 3 * rank * h + (q_out + 2 * kv_out) * rank,
        "o_proj": rank * q_out + h * rank,
        "gate_up_proj": 2 * rank * h + 2 * inter * rank,
        "down_proj": rank * inter + h * rank,
    }
    attention = sum(per_module[m] for m in modules if m in ("qkv_proj", "o_proj"))
    mlp = sum(per_module[m] for m in modules if m in ("gate_up_proj", "down_proj"))
    attention_layers = sum(
        1 for i in layers if model.layer_attention[i] in (LayerKind.FULL, LayerKind.SLIDING)
    )
    mlp_layers = sum(1 for i in layers if model.layer_mlp[i] is MlpKind.DENSE)
    return slots * dtype_bytes * (attention * attention_layers + mlp * mlp_layers)


def redundant_expert_bytes(model: ModelSpec, weights: WeightsBook, redundant: int) -> int:
    """Bytes `redundant` extra physical experts add per rank: they split over the same ranks as the
    logical ones (EP, or TP without it), so a rank holds `routed × redundant ÷ experts` more."""
    if model.moe is None or redundant <= 0:
        return 0
    routed = next((row for row in weights.rows if row.component == "routed_experts"), None)
    if routed is None:
        return 0
    return round(routed.bytes * redundant / model.moe.num_routed_experts)


#: How a draft read from its config is priced, said with every such figure.
DRAFT_CONFIG_DETAIL = (
    "read as a plain decoder of its config's shape at the target's TP: EAGLE-3's feature fusion and draft "
    "vocabulary are not modelled, and an EAGLE draft that shares the target's embedding and LM head holds less"
)


def draft_weights_bytes(draft: ModelSpec, layout: ParallelLayout) -> int:
    """A draft model's resident weights per rank, split as the target's (every layer on every stage's draft)."""
    tp_only = layout.model_copy(update={"pp": 1, "dp": 1, "ep": 1, "dp_attention": False})
    book = weights_book(draft, tp_only, range(draft.num_layers), first_stage=True, last_stage=True)
    return book.total_bytes
