"""The weights book: per rank, per component, params × bytes per param ÷ the shards that split it.

Only the parallelism that really splits a component divides it: vocab-parallel embedding and
LM head over TP (two matrices unless tied), attention over attention TP with KV heads never
below one per rank, routed experts over the expert group, everything else (norms, router,
MLA down-projections) whole on every rank. This module assembles the book (stages, embedding, head, tower,
layers grouped by kind); each layer's matrices are built in `weight_matrices.py`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.fresh_copy import FreshCopyModel
from kvtop.domain.layout import ParallelLayout, SplitGroup, StageParts
from kvtop.domain.memo import Memo
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.rank_matrices import ComponentSums, RankMatrices
from kvtop.domain.tower_spec import TOWER_KINDS, TowerSpec, TowerSplit
from kvtop.domain.vocab_rows import vocab_parallel_rows
from kvtop.domain.weight_compressed import compressed_attention
from kvtop.domain.weight_hyper import hyper_connection_merge
from kvtop.domain.weight_matrices import (
    layer_signature,
    layer_weights,
    mtp_weights,
    norm_width,
    per_layer_embeddings,
)
from kvtop.domain.weight_shared import hybrid_layer, shared_blocks
from kvtop.domain.wording import counted


class WeightRow(BaseModel):
    """One component's resident weights on one rank."""

    model_config = ConfigDict(frozen=True)

    component: str
    params: int  # parameters resident on this rank
    bytes: int  # bytes resident on this rank, quantization scales included
    shards: int  # how many ranks split it (1 = whole on every rank)
    bytes_per_param: float
    note: str = ""


class WeightsBook(FreshCopyModel):
    """One rank's resident weights, a row per component (COMPONENT_ORDER)."""

    model_config = ConfigDict(frozen=True)

    rows: tuple[WeightRow, ...]
    # the rank's tensors in the order the model's class allocates them (bytes; the engine's fused modules one
    # tensor each, a repeated kind of layer in turn; a vision tower's left out): what a caching allocator is asked
    # for; None where the book does not list them (a file loaded as stored)
    tensor_bytes: tuple[int, ...] | None = Field(default=None, repr=False)

    @cached_property  # frozen: summed once (the dashboard reads it for every GPU on every tick)
    def total_bytes(self) -> int:
        return sum(row.bytes for row in self.rows)

    @cached_property
    def total_params(self) -> int:
        return sum(row.params for row in self.rows)


def _rows(acc: ComponentSums, order: Iterable[str]) -> tuple[WeightRow, ...]:
    """The accumulated components as rows, in the book's order."""
    out = []
    for name in order:
        if name not in acc.parts:
            continue
        params, nbytes = acc.parts[name]
        out.append(
            WeightRow(
                component=name,
                params=round(params),
                bytes=round(nbytes),
                shards=acc.shards[name],
                bytes_per_param=nbytes / params if params else 0.0,
                note=acc.notes.get(name, ""),
            )
        )
    return tuple(out)


COMPONENT_ORDER = (
    "embedding", "attention", "linear_attention", "mlp", "routed_experts", "shared_experts",
    "router", "norms", "lm_head", "mtp", *TOWER_KINDS,
)  # fmt: skip


def embedding_tp(layout: ParallelLayout) -> int:
    """How many ranks split the vocab embedding: TP, attention TP, or 1 where the engine's class builds it whole
    (`ParallelLayout.vocab_split`, each engine's `EngineRules.vocab_split`)."""
    return layout.vocab_shards(layout.vocab_split.embedding)


# 1,024: a calibration judgement plans ≈ 300 records' books again in every leave-one-source-out fit, which 64 cycled
# out before their reuse (≈ 1,160 rebuilds, ≈ 15 % of its CPU); a live node or planner holds a handful
_BOOKS: Memo[WeightsBook] = Memo(size=1024)


def forget_books() -> None:
    """Drop the remembered weights books (a benchmark timing a cold solve)."""
    _BOOKS.clear()


def weights_book(
    model: ModelSpec,
    layout: ParallelLayout,
    layers: range,
    *,
    first_stage: bool,
    last_stage: bool,
    load_mtp: bool = False,
    tower_split: TowerSplit | None = None,
    parts: StageParts | None = None,
) -> WeightsBook:
    """The weights one rank of a pipeline stage holding `layers` keeps resident (remembered per model and layout);
    `tower_split`: how the engine shards a vision tower's disputed parts (its `architectures.TOWER_SPLIT`);
    `parts`: which of the embedding, final norm and LM head the engine's class builds on this stage (its
    `stage_parts`; default: the embedding on the first stage, the norm and head on the last)."""
    if parts is None:
        parts = StageParts(embedding=first_stage, final_norm=last_stage, lm_head=last_stage, tower=first_stage,
                           tower_positions=first_stage)  # fmt: skip
    key = (id(model), layout, layers.start, layers.stop, first_stage, last_stage, load_mtp, tower_split, parts)
    return _BOOKS.get(
        key, model, lambda: _weights_book(model, layout, layers, first_stage, last_stage, load_mtp, tower_split, parts)
    )


def _weights_book(
    model: ModelSpec,
    layout: ParallelLayout,
    layers: range,
    first_stage: bool,
    last_stage: bool,
    load_mtp: bool,
    tower_split: TowerSplit | None,
    parts: StageParts,
) -> WeightsBook:
    book = _book_from_config(model, layout, layers, first_stage, last_stage, load_mtp, tower_split, parts)
    whole = first_stage and last_stage and layout.tp == 1 and len(layers) == model.num_layers
    if model.weights_as_stored and model.checkpoint_bytes and whole and book.total_params:
        return _as_stored(model.checkpoint_bytes, book.total_params)
    return book


def _as_stored(stored_bytes: int, params: int) -> WeightsBook:
    """One row: the file's tensors as they load (mixed quantised blocks have no single bytes per parameter
    the config could give); the parameter count stays the architecture's."""
    row = WeightRow(component="tensors", params=params, bytes=stored_bytes, shards=1,
                    bytes_per_param=stored_bytes / params, note="the model file's tensors, loaded as stored")  # fmt: skip
    return WeightsBook(rows=(row,))


def _book_from_config(
    model: ModelSpec,
    layout: ParallelLayout,
    layers: range,
    first_stage: bool,
    last_stage: bool,
    load_mtp: bool,
    tower_split: TowerSplit | None,
    parts: StageParts,
) -> WeightsBook:
    targets_read = bool(model.quant.targeted) and parts.targets_read  # per-target groups the engine's names match
    if model.quant.unread and not targets_read:  # a format kvtop cannot read exactly (quant.py): named, not wrong
        raise UnsupportedModelError(model.quant.unread, field=model.quant.unread_field, source=model.source)
    rank = RankMatrices(model, layout, tower_split, parts)
    h = model.hidden_size
    width = model.embedding_size or h  # the embedding's and a tied LM head's width (OPT-350m: 512)
    vocab_split = layout.vocab_split
    head_whole = vocab_split.lm_head is SplitGroup.WHOLE  # a rowwise linear without TP: the vocab's rows, unpadded
    head_tp = layout.vocab_shards(vocab_split.lm_head)
    vocab_rows = model.vocab_size if head_whole else vocab_parallel_rows(model.vocab_size, head_tp)
    if parts.embedding:
        plain = tower_split is not None and model.architecture in tower_split.whole_embedding
        embedding_shards = 1 if plain else embedding_tp(layout)
        rows = model.vocab_size + model.body.embedding_extra_rows
        whole = vocab_split.embedding is SplitGroup.WHOLE
        unpadded = plain or (whole and not vocab_split.embedding_rows_padded)  # a plain nn.Embedding
        embedding_rows = rows if unpadded else vocab_parallel_rows(rows, embedding_shards)
        rank.acc.add(
            "embedding", embedding_rows * width, embedding_rows * width * model.dtype_bytes, embedding_shards
        )
        if embedding_shards < layout.tp:
            rank.acc.notes["embedding"] = (
                f"{_spread(embedding_shards, layout.tp)}: {vocab_split.note}"
                if vocab_split.embedding is not SplitGroup.TP
                else "whole on every rank: the engine builds it as a plain nn.Embedding"
            )
        if model.body.learned_positions:  # a learned position table, whole on every rank
            rank.vector("embedding", (model.max_position_embeddings + model.body.positions_offset) * h)
        if width != h:  # project_in: the embedding's width to hidden (ReplicatedLinear, whole on every rank)
            rank.matrix("embedding", h, width, 1, ("model.decoder.project_in",), quantizable=False)
        if model.body.embedding_norm:
            rank.vector("norms", (2 if model.body.norm_bias else 1) * h)
        if model.per_layer_input_size:
            per_layer_embeddings(rank, plain, tower_split is not None and model.architecture in tower_split.per_layer_split)
        if model.body.ngram_tables:  # LongCat-Flash-Lite: oe_embedder (vocab-parallel) and oe_projection (whole)
            b = model.body
            rows = vocab_parallel_rows(b.ngram_rows, embedding_shards)
            rank.acc.add("embedding", rows * b.ngram_width, rows * b.ngram_width * model.dtype_bytes, embedding_shards)
            rank.vector("embedding", b.ngram_tables * b.ngram_width * h)
        for _ in range(max(model.body.altup_inputs - 1, 0)):  # Gemma-3n's altup_projections: column-parallel
            rank.matrix("embedding", h, h, layout.tp, ("model.altup_projections",))
    if parts.tower and model.tower is not None:  # the vision tower and projector, its big matrices split over TP
        how = tower_split.of_class(model.architecture) if tower_split is not None else None  # its release's table
        transformers = parts.tower_as_transformers and model.tower.transformers_params > 0
        # a data-parallel encoder (the engine's flag, where its class takes it) is built as at TP 1 on every rank
        data_parallel = how is not None and how.builds_whole(model.architecture)
        tower_tp = 1 if data_parallel else layout.tp
        if transformers:  # transformers' own classes, nothing split (a Transformers backend's build)
            params = float(model.tower.transformers_params)
        else:
            params = model.tower.params_per_rank(tower_tp, how)  # (towers.py)
        if not parts.tower_positions:  # built with the tower on the first stage only
            params -= model.tower.position_params if transformers else _tower_positions_per_rank(model.tower, tower_tp, how)
        split = layout.tp if params < model.tower.params else 1  # Gemma-4's is whole on every rank (vLLM)
        wider = model.tower.float32_norm_params * (4 - model.dtype_bytes) if how and how.float32_norms else 0
        if how and model.tower.block_class in how.float32_tables:  # a float32 position table
            wider += model.tower.float32_table_params * (4 - model.dtype_bytes)
        rank.acc.add_many(model.tower.kind, params, params * model.dtype_bytes + wider, split)  # its kind's row
        unmodelled = how.data_parallel_not_modelled(model.architecture) if how else None
        whole_note = ", whole on every rank (data-parallel encoder)" if data_parallel else ""
        whole_note += f" ({unmodelled})" if unmodelled else ""
        rank.acc.notes[model.tower.kind] = f"{model.tower.config_class}: {model.tower.label}{whole_note}"
    # Layers of the same kind (and the same quantization exclusions) hold the same bytes:
    # compute each distinct kind once and count it, so a 126-layer model costs a few layers.
    groups: dict[tuple[Hashable, ...], list[int]] = {}
    for layer in layers:
        groups.setdefault(layer_signature(model, layer), []).append(layer)
    for members in groups.values():
        one = RankMatrices(model, layout, tower_split, parts)
        attention_of = compressed_attention if model.compressed is not None else None
        layer_weights(one, members[0], hybrid_layer if model.shared_block is not None else attention_of)
        for name, (params, nbytes) in one.acc.parts.items():
            rank.acc.add(name, params * len(members), nbytes * len(members), one.acc.shards[name], listed=True)
        rank.acc.extend_tensors(one.acc, len(members))  # each kind's layers in turn: the order within a kind kept
        rank.acc.notes.update(one.acc.notes)
    hybrid = [layer for layer in layers if model.layer_attention[layer] is LayerKind.FULL]
    if model.shared_block is not None and hybrid:  # the shared blocks, once on a stage that runs them (Zamba2)
        shared_blocks(rank, hybrid[0])
    if model.body.fope_frequencies and len(layers):  # FoPE's cos_coef and sin_coef, one pair a stage (fope.py)
        kv_rank = layout.kv_heads_per_rank(model.geometry(layers[0]).kv_heads)
        rank.vector("attention", 2 * kv_rank * model.body.fope_frequencies**2)
    if parts.final_norm and model.body.final_norm:
        rank.vector("norms", norm_width(model, h))
        if model.body.attention_residuals:  # the output's residual norm and score projection (Kimi-K3)
            rank.vector("norms", 2 * h)
        rank.vector("norms", model.body.residual_scales * h)  # Zaya's final ResidualScaling (models/zaya.py 1482)
        for _ in range(max(model.body.altup_inputs - 1, 0)):  # Gemma-3n's altup_unembed_projections
            rank.matrix("embedding", h, h, layout.tp, ("model.altup_unembed_projections",))
    if parts.final_norm if parts.head_mixer is None else parts.head_mixer:  # hc streams' merge (StageParts)
        hyper_connection_merge(rank)
    if parts.lm_head:
        tied = model.tie_word_embeddings if parts.tied_head is None else parts.tied_head
        if not (tied and parts.embedding):  # tied: the stage's embedding is its head
            # a MIXED_PRECISION checkpoint may list its LM head; an engine may quantize it (StageParts.lm_head_quantized)
            head = model.quant.format_of(("lm_head",)) if model.quant.mixed or parts.lm_head_quantized else None
            head_bytes = (
                head.matrix_bytes(vocab_rows, width, model.dtype_bytes) if head else vocab_rows * width * model.dtype_bytes
            )
            if head is not None and head.unused_input_scale:
                head_bytes += rank.unused_input_scale_bytes()
            rank.acc.add("lm_head", vocab_rows * width, head_bytes, head_tp)
            if head is not None and not model.quant.mixed:
                rank.acc.notes["lm_head"] = f"{head.method}: the engine's quant config claims the head too"
            elif head_tp < layout.tp:
                rank.acc.notes["lm_head"] = f"{_spread(head_tp, layout.tp)}: {vocab_split.note}"
        if width != h:  # project_out: hidden back to the LM head's width (ReplicatedLinear)
            rank.matrix("lm_head", width, h, 1, ("model.decoder.project_out",), quantizable=False)
        if model.body.lm_head_bias:  # the head's bias has its weight's rows: split as the head is, or whole
            rank.vector("lm_head", vocab_rows * head_tp, head_tp)
    if last_stage and model.mtp_layers:
        if load_mtp:
            mtp_weights(rank, model)
        else:
            rank.acc.add("mtp", 0, 0, 1)
            rank.acc.notes["mtp"] = f"{counted(model.mtp_layers, 'MTP layer')} loaded only with speculative decoding"
    tied_here = model.tie_word_embeddings if parts.tied_head is None else parts.tied_head
    if tied_here and parts.embedding and parts.lm_head:  # the engine's untie rule (StageParts.tied_head), as charged above
        rank.acc.notes["embedding"] = "tied with the LM head (one matrix)"
    for name, held, guarded in (("embedding", parts.embedding, first_stage), ("lm_head", parts.lm_head, last_stage)):
        if held and not guarded and name in rank.acc.parts:
            rank.acc.notes[name] = "also on this PP stage: the engine's model class builds it on every stage"
    tensors = None if rank.acc.tensors is None else tuple(round(size) for size in rank.acc.tensors)
    return WeightsBook(rows=_rows(rank.acc, COMPONENT_ORDER), tensor_bytes=tensors)


def _spread(shards: int, tp: int) -> str:
    """How a vocab table the engine splits otherwise than over TP spreads: whole, or over some of the TP ranks."""
    return "whole on every rank" if shards == 1 else f"split over {shards} of the {tp} TP ranks"


def _tower_positions_per_rank(tower: TowerSpec, tp: int, split: TowerSplit | None) -> float:
    """A tower's learned position table on one rank: whole, or its rows padded to 64 and split over TP
    (`VocabParallelEmbedding`, as `TowerSpec.params_per_rank` counts it)."""
    if not tower.position_rows:
        return 0
    if split is None or not split.position_table:
        return tower.position_params
    return vocab_parallel_rows(tower.position_rows, tp) * (tower.position_params // tower.position_rows)


