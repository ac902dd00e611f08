"""vLLM's DFlash drafter as loaded and cached (docs/engines/vllm.md §14, DFlash drafters). Read at v0.21.0, v0.24.0,
v0.25.0, v0.26.0, v0.27.0, v0.28.0, v0.29.0 and v0.33.0.

Weights. vLLM builds a `DFlashDraftModel` as `DFlashQwen3ForCausalLM` (model_executor/models/qwen3_dflash.py
v0.24.0): `num_hidden_layers` Qwen3 decoder layers (:245-257), the fc `ReplicatedLinear(target_hidden_size ×
len(dflash_config.target_layer_ids), hidden, bias=False)` whole on every rank (:258-276), `hidden_norm` and `norm`;
an `embed_tokens` (:240-244) and an LM head (:508-512) of the vocabulary. `load_weights` skips `embed_tokens` where
the checkpoint ships none (:596-607) and `process_eagle_weight` (:601; models/utils.py:872-891) marks a head of its
own only where the checkpoint names `lm_head`; the proposer's `load_model` then deletes the draft's embedding (at PP
1) and LM head and takes the target's (v1/spec_decode/llm_base_proposer.py v0.24.0 `_maybe_share_embeddings`
:1325-1392, `_maybe_share_lm_head` :1394-1460, from `load_model` :1307-1308; SupportsEagleBase's has_own_* default
False, models/interfaces.py:1261-1266), so "Model loading took" holds neither. From v0.29.0 the embedding is built
only where the checkpoint ships one (qwen3_dflash.py v0.29.0 :402, v0.33.0 deferred factory): the same bytes after the
load. z-lab's drafters ship neither (Qwen3.6-27B-DFlash: 3.3 GB for 1.73 B parameters in BF16, its 5 layers and fc);
a config cannot say whether a checkpoint holds its own, so both are assumed shared, and `draft_vocab_size` other than
the vocabulary keeps a head of its own. After the load `load_weights` builds the fused context-KV buffers
(`_build_fused_kv_buffers`): a `torch.cat` of every layer's K/V rows of `qkv_proj` (its bias too), a new tensor that
"Model loading took" holds, and from v0.25.0 a `torch.stack` of the layers' k_norm weights (`FUSED_ERAS`).

KV. Each draft layer's `Attention` is its own KV spec (its heads and head size, e.g. 8 × 128 beside Qwen3.6-27B's 4 ×
256), so beside a hybrid's Mamba groups vLLM groups the drafter's layers as a kind of their own (ledger.draft_pool,
budget `_groups`). Its sliding layers (`layer_types`) by release (`WINDOWS_ERAS`).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.vocab_rows import vocab_parallel_rows
from kvtop.domain.weights import weights_book

METHOD = "dflash"
SOURCE = ("model_executor/models/qwen3_dflash.py DFlashQwen3ForCausalLM (v0.24.0 :240-276, :289-313, :508-512, :583-616); "
          "v1/spec_decode/llm_base_proposer.py _maybe_share_embeddings / _maybe_share_lm_head (v0.24.0 :1325-1460)")  # fmt: skip
SHARED = ("the embedding and LM head assumed the target's (a DFlash checkpoint ships neither: the proposer keeps the "
          "target's, llm_base_proposer.py v0.24.0 :1325-1460); the fc over the target's hidden states whole on every rank")  # fmt: skip

# How a DFlash drafter's `layer_types` sliding layers are built, by release:
# "full": every layer full attention (no per-layer window: Attention takes cache_config.sliding_window, set only for an
#   all-sliding target, engine/arg_utils.py v0.24.0 :1825-1830); "refused": mixed sliding / full raises
#   NotImplementedError; "v2_runner": mixed needs the V2 model runner (else NotImplementedError) and makes sliding-window
#   KV groups beside the full ones, which kvtop does not model for a drafter
WINDOWS_ERAS: Eras[str] = Eras((
    Era("", "full", "qwen3_dflash.py v0.21.0, v0.24.0 :112-120: Attention without per_layer_sliding_window"),
    Era("0.25.0", "refused", "qwen3_dflash.py v0.25.0 :86-97: 'DFlash does not yet support mixed sliding/full "
        "attention via layer_types' (vllm-project/vllm#40898)"),
    Era("0.26.0", "v2_runner", "qwen3_dflash.py v0.26.0 :101-113, v0.28.0 :140-150, v0.29.0 :117-131, v0.33.0 "
        ":124-137: mixed sliding/full 'require the V2 model runner'; per_layer_sliding_window from layer_types"),
))  # fmt: skip


# The copies `load_weights` makes for the context-KV precompute, by release: "kv": torch.cat of each layer's K/V rows
# of qkv_proj (and bias), per rank, the k_norm weights referenced; "kv_knorm": also a torch.stack of the k_norm weights
# [layers, head_dim]; "unquantized_kv": the K/V cat only where every qkv_proj is unquantized, the k_norm stack always
FUSED_ERAS: Eras[str] = Eras((
    Era("", "kv", "qwen3_dflash.py v0.21.0 :287-313, v0.24.0 :289-313 _build_fused_kv_buffers: "
        "'self._fused_kv_weight = torch.cat(kv_weights, dim=0)' (:303, :305), k_norm weights a list of references "
        "(:313); called from load_weights (v0.21.0 :626, v0.24.0 :616)"),
    Era("0.25.0", "kv_knorm", "qwen3_dflash.py v0.25.0 :413-433, v0.29.0 :464-484 _build_context_kv_buffers: the "
        "K/V torch.cat and 'torch.stack([a.k_norm.weight.data ...]).contiguous()'; from load_weights (v0.25.0 :798, "
        "v0.29.0 :839)"),
    Era("0.33.0", "unquantized_kv", "qwen3_dflash.py v0.33.0 :505-536: the K/V torch.cat only where every qkv_proj's "
        "quant_method is UnquantizedLinearMethod (else _fused_kv_weight = None), the k_norm stack always; from "
        "load_weights :892 (read at v0.29.0 without the test and v0.33.0 with it)"),
))  # fmt: skip


def fused_kv_bytes(draft: ModelSpec, layout: ParallelLayout, version: ResolvedVersion) -> int:
    """The bytes per rank of the fused context-KV copies vLLM makes after loading a DFlash drafter (`FUSED_ERAS`):
    layers × 2 × KV heads a rank × head_dim × hidden (+ the bias rows), in the weight's storage, and from v0.25.0 the
    k_norm stack (layers × head_dim); without the K/V copy for a quantized drafter from v0.33.0."""
    era = FUSED_ERAS.era(version).value
    layers = draft.num_layers
    kv_rows = 2 * max(1, draft.num_kv_heads // layout.tp) * draft.head_dim
    quantized = draft.quant.method != "none"
    copy = 0
    if not (quantized and era == "unquantized_kv"):
        weight = layers * kv_rows * draft.hidden_size
        copy += weight * draft.quant.weight_bits // 8 if quantized else weight * draft.dtype_bytes
        copy += layers * kv_rows * draft.dtype_bytes if draft.attention_bias else 0
    copy += layers * draft.head_dim * draft.dtype_bytes if era != "kv" else 0
    return copy


def check_windows(draft: ModelSpec | None, method: str | None, version: ResolvedVersion) -> None:
    """Refuse, by name, a DFlash drafter of mixed sliding and full layers where vLLM refuses it (v0.25.0) or builds
    sliding-window groups for it (from v0.26.0, V2 runner), which kvtop does not model; before v0.25.0 all its layers
    are full attention, as kvtop plans them."""
    if method != METHOD or draft is None:
        return
    kinds = set(draft.layer_attention)
    if not (LayerKind.SLIDING in kinds and LayerKind.FULL in kinds):
        return
    era = WINDOWS_ERAS.era(version)
    if era.value == "full":
        return
    said = ("refuses it" if era.value == "refused" else
            "builds its sliding layers as sliding-window KV groups (V2 model runner only), not modelled by kvtop")  # fmt: skip
    raise UnsupportedModelError(
        f"the DFlash drafter {draft.name} mixes sliding and full attention layers (layer_types): vLLM "
        f"{version.label} {said} ({era.source})",
        field="--speculative-config",
        source=draft.source,
    )


def drafter_bytes(draft: ModelSpec, layout: ParallelLayout, version: ResolvedVersion) -> int | None:
    """The DFlash drafter's resident weights per rank as vLLM loads it (module docstring); None where `draft` is no
    DFlash drafter. Its layers split as any decoder's at the target's TP, the fc whole; an LM head of its own only for
    a draft vocabulary; the embedding only at PP > 1 (the target's is not shared there); the fused K/V copy."""
    fusion = draft.dflash_fusion
    if fusion is None:
        return None
    tp_only = layout.model_copy(update={"pp": 1, "dp": 1, "ep": 1, "dp_attention": False})
    layers = weights_book(draft, tp_only, range(draft.num_layers), first_stage=False, last_stage=False).total_bytes
    hidden = draft.hidden_size
    extra = fusion.fusion_in * hidden + 2 * hidden  # the fc, hidden_norm and the final norm
    vocab = fusion.draft_vocab_size or draft.vocab_size
    extra += vocab_parallel_rows(vocab, layout.tp) * hidden if vocab != draft.vocab_size else 0
    extra += vocab_parallel_rows(draft.vocab_size, layout.tp) * hidden if layout.pp > 1 else 0
    return layers + extra * draft.dtype_bytes + fused_kv_bytes(draft, layout, version)
