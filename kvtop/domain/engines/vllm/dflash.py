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
False, models/interfaces.py:1261-1266), so "Model loading took" holds neither, where the checkpoint ships no
embedding or head of its own: one whose tensors are the target's or absent (:1355-1375, :1409-1431). From v0.25.0 the
proposer also keeps the drafter's own embedding where its hidden size is not the target's (llm_base_proposer.py
v0.25.1 :1478-1489, v0.29.0 :1508-1519: 'Keeping separate embedding weights'; `EMBED_ERAS`), uninitialised when the
checkpoint ships none. At v0.29.0 `DFlashQwen3Model` still builds its `VocabParallelEmbedding` unconditionally
(qwen3_dflash.py v0.29.0 :402) and `load_weights` skips `embed_tokens` where the checkpoint ships none (:830-831).
kvtop reads no checkpoint's tensor names, so the embedding and head are assumed the target's (z-lab's Qwen3.6-27B-
DFlash: 3.3 GB for 1.73 B parameters in BF16, its 5 layers and fc, no room for either) and their size is the weights
term's error (`shared_error`); `draft_vocab_size` other than the vocabulary keeps a head of its own.
After the load `load_weights` builds the fused context-KV buffers (`_build_fused_kv_buffers`): a
`torch.cat` of every layer's K/V rows of `qkv_proj` (its bias too), a new tensor that "Model loading took"
holds, and from v0.25.0 a `torch.stack` of the layers' k_norm weights (`FUSED_ERAS`).

KV. Each draft layer's `Attention` is its own KV spec (its heads and head size, e.g. 8 × 128 beside Qwen3.6-27B's 4 ×
256), so beside a hybrid's Mamba groups vLLM groups the drafter's layers as a kind of their own (ledger.draft_pool,
budget `_groups`). Its sliding layers (`layer_types`, `dflash_config.use_swa`) by release (`WINDOWS_ERAS`).

Which drafters. vLLM builds `DFlashQwen3ForCausalLM` for the architectures its registry maps there at the release
(`REGISTRY_ERAS`); with method=dflash any other (DFlash2DraftModel, DFlashLagunaForCausalLM, a plain class) is
refused by name, as is a launch without the drafter's config (`check_drafter`).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.deployment import Basis
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.spec_methods import stated_method
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.vocab_rows import vocab_parallel_rows
from kvtop.domain.weights import weights_book
from kvtop.domain.wording import counted, gib

METHOD = "dflash"
SOURCE = ("model_executor/models/qwen3_dflash.py DFlashQwen3ForCausalLM (v0.24.0 :240-276, :289-313, :508-512, :583-616); "
          "v1/spec_decode/llm_base_proposer.py _maybe_share_embeddings / _maybe_share_lm_head (v0.24.0 :1325-1460)")  # fmt: skip
SHARED = ("the embedding and LM head assumed the target's: vLLM shares them where the checkpoint ships none of its own "
          "(llm_base_proposer.py v0.24.0 :1325-1460) and, from v0.25.0, where the hidden sizes match; the checkpoint "
          "is not read, so their size is the weights term's error; the fc over the target's hidden states whole on "
          "every rank")  # fmt: skip
OWN_EMBED = ("the drafter's hidden size is not the target's: vLLM keeps its own embedding (llm_base_proposer.py "
             "v0.25.1 :1478-1489, v0.29.0 :1508-1519)")  # fmt: skip
# from which release a drafter whose hidden size is not the target's keeps its own embedding (EMBED_ERAS.at: True)
EMBED_ERAS: Eras[bool] = Eras((
    Era("", False, "llm_base_proposer.py v0.24.0 _maybe_share_embeddings :1325-1392: no width check"),
    Era("0.25.0", True, "llm_base_proposer.py v0.25.1 :1478-1489: 'Target embedding dim (%d) differs from draft "
        "embedding dim (%d). Keeping separate embedding weights.'"),
))  # fmt: skip
# the architectures vLLM's registry maps to DFlashQwen3ForCausalLM, from which release (architectures/eagle3.py
# DFLASH_QWEN3_DRAFTERS reads their fc): True where the release's registry has it
REGISTRY_ERAS: dict[str, Eras[bool]] = {
    "DFlashDraftModel": Eras((Era("", True, "model_executor/models/registry.py v0.21.0 :589, v0.24.0 :606, "
                                           "v0.25.1 :595, v0.29.0 :614"),)),
    **{name: Eras((Era("", False, "model_executor/models/registry.py v0.25.1: not registered"),
                   Era("0.28.0", True, "config/speculative.py v0.28.0 :934-957 runs such a draft as dflash; "
                       "model_executor/models/registry.py v0.29.0 :622-623 (v0.28.0's not read)")))
       for name in ("MuseGlimmerAssistantModel", "DFlashMuseGlimmerAssistantModel")},
}  # fmt: skip

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
# from v0.25.0 an all-sliding `layer_types` or `dflash_config.use_swa` builds every layer sliding-window
ALL_SLIDING = ("qwen3_dflash.py v0.25.1 :100-119, v0.26.0 :115-130, v0.29.0 :132-147: every layer sliding-window "
               "(dflash_config.swa_window_size, else sliding_window)")  # fmt: skip


def check_drafter(draft: ModelSpec | None, method: str | None, version: ResolvedVersion) -> None:
    """Refuse, by name, a DFlash launch kvtop cannot plan: no drafter config (its layers and KV heads size the KV it
    shares the pool with), an architecture vLLM's registry does not build as DFlashQwen3ForCausalLM at the release,
    or sliding layers vLLM builds as sliding-window KV from v0.25.0 (`check_windows`)."""
    if method != METHOD:
        return
    if draft is None:
        raise UnsupportedModelError(
            "method=dflash: the drafter's config is not known, and its layers, KV heads and fc size both its weights "
            "and the KV its layers add to every block (not modelled without it); give it with `kvtop plan`'s "
            "draft-model option (a log's explain cannot read it)",
            field="speculative config: the drafter",
        )
    eras = REGISTRY_ERAS.get(draft.architecture)
    if eras is None or not eras.at(version):
        where = eras.era(version).source if eras is not None else "model_executor/models/registry.py"
        raise UnsupportedModelError(
            f"the DFlash drafter {draft.name} ({draft.architecture}) is not one vLLM {version.label} builds as "
            f"DFlashQwen3ForCausalLM ({where}): not modelled by kvtop",
            field="speculative config: the drafter",
            source=draft.source,
        )
    check_windows(draft, method, version)


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
    """Refuse, by name, a DFlash drafter with sliding layers from v0.25.0: mixed ones vLLM refuses (v0.25.0) or
    builds as sliding-window groups (from v0.26.0, V2 runner); all-sliding or `use_swa` ones it builds sliding in
    every layer. kvtop models neither; before v0.25.0 every layer is full attention, as kvtop plans them (the
    ledger's draft pool takes a sliding layer's cell: the same heads and width)."""
    if method != METHOD or draft is None:
        return
    era = WINDOWS_ERAS.era(version)
    if era.value == "full":
        return
    kinds = set(draft.layer_attention)
    use_swa = draft.dflash_fusion is not None and draft.dflash_fusion.use_swa
    if LayerKind.SLIDING in kinds and LayerKind.FULL not in kinds or use_swa and LayerKind.SLIDING not in kinds:
        why = "dflash_config.use_swa" if use_swa and LayerKind.SLIDING not in kinds else "layer_types, all sliding"
        raise UnsupportedModelError(
            f"the DFlash drafter {draft.name} is sliding-window in every layer ({why}): vLLM {version.label} builds "
            f"its KV as sliding-window groups, not modelled by kvtop for a drafter ({ALL_SLIDING})",
            field="--speculative-config",
            source=draft.source,
        )
    if not (LayerKind.SLIDING in kinds and LayerKind.FULL in kinds):
        return
    said = ("refuses it" if era.value == "refused" else
            "builds its sliding layers as sliding-window KV groups (V2 model runner only), not modelled by kvtop")  # fmt: skip
    raise UnsupportedModelError(
        f"the DFlash drafter {draft.name} mixes sliding and full attention layers (layer_types): vLLM "
        f"{version.label} {said} ({era.source})",
        field="--speculative-config",
        source=draft.source,
    )


def _own_embedding(draft: ModelSpec, target_hidden: int | None, version: ResolvedVersion | None) -> bool:
    """Whether vLLM keeps the drafter's own embedding at TP alone: from v0.25.0 where its hidden size is not the
    target's (`EMBED_ERAS`); the layout's PP > 1 keeps it too (drafter_bytes)."""
    return (target_hidden is not None and version is not None and draft.hidden_size != target_hidden
            and EMBED_ERAS.at(version))  # fmt: skip


def drafter_bytes(draft: ModelSpec, layout: ParallelLayout, version: ResolvedVersion,
                  target_hidden: int | None = None) -> int | None:  # fmt: skip
    """The DFlash drafter's resident weights per rank as vLLM loads it (module docstring); None where `draft` is no
    DFlash drafter. Its layers split as any decoder's at the target's TP, the fc whole; an LM head of its own only for
    a draft vocabulary; the embedding at PP > 1 (the target's is not shared there) or, from v0.25.0, where its hidden
    size is not `target_hidden` (`EMBED_ERAS`); the fused K/V copy (`fused_kv_bytes`)."""
    fusion = draft.dflash_fusion
    if fusion is None:
        return None
    tp_only = layout.model_copy(update={"pp": 1, "dp": 1, "ep": 1, "dp_attention": False})
    layers = weights_book(draft, tp_only, range(draft.num_layers), first_stage=False, last_stage=False).total_bytes
    hidden = draft.hidden_size
    extra = fusion.fusion_in * hidden + 2 * hidden  # the fc, hidden_norm and the final norm
    vocab = fusion.draft_vocab_size or draft.vocab_size
    extra += vocab_parallel_rows(vocab, layout.tp) * hidden if vocab != draft.vocab_size else 0
    own = layout.pp > 1 or _own_embedding(draft, target_hidden, version)
    extra += vocab_parallel_rows(draft.vocab_size, layout.tp) * hidden if own else 0
    return layers + extra * draft.dtype_bytes + fused_kv_bytes(draft, layout, version)


def drafter_term(draft: ModelSpec | None, model: ModelSpec, layout: ParallelLayout,
                 version: ResolvedVersion) -> dict[str, object] | None:  # fmt: skip
    """The draft-weights term's fields for a DFlash drafter as vLLM loads it (label, bytes, basis, source, detail);
    None where `draft` is no DFlash drafter."""
    if draft is None or (size := drafter_bytes(draft, layout, version, model.hidden_size)) is None:
        return None
    own = _own_embedding(draft, model.hidden_size, version)
    return {"label": f"draft weights ({draft.name}, DFlash drafter, {counted(draft.num_layers, 'layer')})",
            "bytes": size, "basis": Basis.ASSUMED, "source": SOURCE,
            "detail": f"{OWN_EMBED}; {SHARED.replace('embedding and LM head', 'LM head')}" if own else SHARED}  # fmt: skip


def shared_error(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """The error a DFlash drafter's embedding and LM head add to the weights term: kvtop assumes them the target's
    (SHARED), and vLLM keeps the drafter's own where the checkpoint ships them, which kvtop does not read; None where
    the launch runs no DFlash drafter of known config, or its weights were measured."""
    draft = inputs.draft
    if draft is None or draft.dflash_fusion is None or stated_method(inputs.settings) != METHOD:
        return None
    tp, hidden = inputs.layout.tp, draft.hidden_size
    target_hidden = inputs.model.hidden_size if inputs.model is not None else None
    embedding = 0 if inputs.layout.pp > 1 or _own_embedding(draft, target_hidden, inputs.version) else 1
    head = 0 if draft.dflash_fusion.draft_vocab_size not in (None, draft.vocab_size) else 1
    size = (embedding + head) * vocab_parallel_rows(draft.vocab_size, tp) * hidden * draft.dtype_bytes
    parts = " and ".join(part for part, held in (("embedding", embedding), ("LM head", head)) if held)
    return (size, f"a DFlash drafter's {parts} assumed the target's (its checkpoint not read): ± {gib(size)} "
                  "(llm_base_proposer.py v0.24.0 :1325-1460)") if size else None  # fmt: skip
