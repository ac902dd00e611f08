"""The weights book: per rank, per component, params × bytes per param ÷ the shards that split it.

Only the parallelism that really splits a component divides it: vocab-parallel embedding and
LM head over TP (two matrices unless tied), attention over attention TP with KV heads never
below one per rank, routed experts over the expert group, everything else (norms, router,
MLA down-projections) whole on every rank.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cached_property

from pydantic import BaseModel, ConfigDict

from kvtop.domain.layout import ParallelLayout, StageParts
from kvtop.domain.memo import Memo
from kvtop.domain.model import AttentionKind, LayerKind, MlpKind, ModelSpec, StateKind, TowerSpec, TowerSplit


class WeightRow(BaseModel):
    """One component's resident weights on one rank."""

    model_config = ConfigDict(frozen=True)

    component: str
    params: int  # parameters resident on this rank
    bytes: int  # bytes resident on this rank, quantization scales included
    shards: int  # how many ranks split it (1 = whole on every rank)
    bytes_per_param: float
    note: str = ""


class WeightsBook(BaseModel):
    model_config = ConfigDict(frozen=True)

    rows: tuple[WeightRow, ...]

    @cached_property  # frozen: summed once (the dashboard reads it for every GPU on every tick)
    def total_bytes(self) -> int:
        return sum(row.bytes for row in self.rows)

    @cached_property
    def total_params(self) -> int:
        return sum(row.params for row in self.rows)


class _Acc:
    """Accumulates (params, bytes) per component for one rank."""

    def __init__(self) -> None:
        self.parts: dict[str, list[float]] = {}
        self.shards: dict[str, int] = {}
        self.notes: dict[str, str] = {}

    def add(self, component: str, params: float, nbytes: float, shards: int) -> None:
        entry = self.parts.setdefault(component, [0.0, 0.0])
        entry[0] += params
        entry[1] += nbytes
        self.shards[component] = max(self.shards.get(component, 1), shards)

    def rows(self, order: Iterable[str]) -> tuple[WeightRow, ...]:
        out = []
        for name in order:
            if name not in self.parts:
                continue
            params, nbytes = self.parts[name]
            out.append(
                WeightRow(
                    component=name,
                    params=round(params),
                    bytes=round(nbytes),
                    shards=self.shards[name],
                    bytes_per_param=nbytes / params if params else 0.0,
                    note=self.notes.get(name, ""),
                )
            )
        return tuple(out)


COMPONENT_ORDER = (
    "embedding", "attention", "linear_attention", "mlp", "routed_experts", "shared_experts",
    "router", "norms", "lm_head", "mtp", "vision",
)  # fmt: skip


class _Rank:
    """Adds one rank's matrices; quantized unless the checkpoint spares the module."""

    def __init__(self, model: ModelSpec, layout: ParallelLayout, build: TowerSplit | None = None) -> None:
        self.model = model
        self.layout = layout
        self.build = build or TowerSplit()  # the engine's own way with the parts engines disagree on
        self.acc = _Acc()

    def matrix(
        self,
        component: str,
        rows: int,
        cols: int,
        shards: int,
        modules: tuple[str, ...],
        quantizable: bool = True,
        tensors: int = 1,
        input_split: int = 1,
    ) -> None:
        """`tensors`: the stacked tensors of this matrix one rank holds, each with its own scalar scales (experts).
        `input_split`: the ways of `shards` that split the input (a row-parallel matrix), which per-row scales
        do not follow (QuantSpec.row_scale_bytes)."""
        fmt = self.model.quant.format_of(modules) if quantizable else None
        whole = rowwise = 0  # scalar scales each rank holds whole; per-row scales of a row-parallel matrix
        if fmt is not None:
            whole = fmt.tensor_scale_bytes
            rowwise = fmt.row_scale_bytes(rows) if input_split > 1 else 0
            nbytes = fmt.matrix_bytes(rows, cols, self.model.dtype_bytes)
        else:
            nbytes = rows * cols * self.model.dtype_bytes
        split = (nbytes - whole - rowwise) / shards + rowwise * input_split / shards + whole * tensors
        self.acc.add(component, rows * cols / shards, split, shards)

    def vector(self, component: str, size: int, shards: int = 1, dtype_bytes: int | None = None) -> None:
        width = self.model.dtype_bytes if dtype_bytes is None else dtype_bytes
        self.acc.add(component, size / shards, size * width / shards, shards)


def _attention(rank: _Rank, layer: int) -> None:
    m, lay = rank.model, rank.layout
    tp = lay.attn_tp
    h = m.hidden_size
    names = (f"model.layers.{layer}.self_attn", f"model.layers.{layer}.self_attn.q_proj")
    if m.mla is not None:
        _latent_attention(rank, names, layer)
        return
    g = m.geometry(layer)
    hd, vd = g.head_dim, g.v_head_dim
    shared_kv = m.layer_attention[layer] is LayerKind.SHARED  # q and o only: K and V are another layer's
    kv_rank = lay.kv_heads_per_rank(g.kv_heads)
    if g.kv_projections == 1 and m.architecture in rank.build.k_eq_v_holds_v:  # SGLang's Gemma-4: V beside K
        g = g.model_copy(update={"kv_projections": 2, "v_head_dim": hd})
    q_params = g.heads * hd
    rank.matrix("attention", q_params * (2 if m.body.q_output_gate else 1), h, tp, names)
    # K and V: per-rank width kv_rank heads; ranks beyond the head count hold copies
    kv_width = 0 if shared_kv else kv_rank * (hd + (vd if g.kv_projections == 2 else 0))
    if kv_width:  # K and V as the checkpoint holds them (a per-tensor scale each)
        rank.matrix("attention", kv_rank * hd, h, 1, names)
        if g.kv_projections == 2:
            rank.matrix("attention", kv_rank * vd, h, 1, names)
    rank.matrix("attention", h, g.heads * vd, tp, names, input_split=tp)
    if m.attention_bias:
        rank.vector("attention", q_params, tp)
        if kv_width:
            rank.vector("attention", kv_width)
    if m.body.o_bias:
        rank.vector("attention", h)
    if m.attention_sinks or g.sinks:
        rank.vector("attention", g.heads, tp)
    if m.dsa_index_head_dim and m.indexed(layer):  # MiniMax-M3: index_q sharded as K/V, one index_k head
        rank.matrix("attention", kv_rank * m.dsa_index_head_dim, h, 1, names)
        rank.matrix("attention", m.dsa_index_head_dim, h, 1, names)
        rank.vector("norms", 2 * m.dsa_index_head_dim)  # the index q and k norms
    if m.qk_norm:
        if m.body.qk_norm_width == "all":  # one norm over all heads, whole on every rank (OLMo-2)
            rank.vector("norms", g.heads * hd)
            rank.vector("norms", 0 if shared_kv else g.kv_heads * hd)
        elif m.body.qk_norm_width == "all_split":  # … split over attention TP (MiniMax-M2's TP norm)
            rank.vector("norms", g.heads * hd, tp)
            rank.vector("norms", 0 if shared_kv else g.kv_heads * hd, tp)
        else:
            rank.vector("norms", (1 if shared_kv else 2) * hd)


def _latent_attention(rank: _Rank, names: tuple[str, ...], layer: int) -> None:
    m, tp, h = rank.model, rank.layout.attn_tp, rank.model.hidden_size
    mla = m.mla
    assert mla is not None

    def named(module: str) -> tuple[str, ...]:  # a checkpoint may spare one projection (DeepSeek-V3.2-NVFP4)
        return (f"model.layers.{layer}.self_attn.{module}", *names)

    q_width = m.num_attention_heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim)
    if mla.q_lora_rank:
        rank.matrix("attention", mla.q_lora_rank, h, 1, named("q_a_proj"))  # q_a: whole on every rank
        rank.matrix("attention", q_width, mla.q_lora_rank, tp, named("q_b_proj"))
        rank.vector("norms", mla.q_lora_rank)
    else:
        rank.matrix("attention", q_width, h, tp, named("q_proj"))
    latent = mla.kv_lora_rank + mla.qk_rope_head_dim
    rank.matrix("attention", latent, h, 1, named("kv_a_proj_with_mqa"))  # the latent: whole
    up = m.num_attention_heads * (mla.qk_nope_head_dim + mla.v_head_dim)
    rank.matrix("attention", up, mla.kv_lora_rank, tp, named("kv_b_proj"))
    rank.matrix("attention", h, m.num_attention_heads * mla.v_head_dim, tp, named("o_proj"), input_split=tp)
    rank.vector("norms", mla.kv_lora_rank)
    if m.attention_kind is AttentionKind.DSA and m.dsa_index_head_dim and m.dsa_index_heads and m.indexed(layer):
        index = m.dsa_index_head_dim
        rank.matrix("attention", m.dsa_index_heads * index, mla.q_lora_rank or h, 1, named("indexer.wq_b"))
        rank.matrix("attention", index, h, 1, named("indexer.wk"))
        rank.matrix("attention", m.dsa_index_heads, h, 1, names, quantizable=False)
        rank.vector("norms", 2 * index, dtype_bytes=4)  # k_norm: a LayerNorm (weight, bias) in fp32


def _linear_attention(rank: _Rank, layer: int) -> None:
    """One state mixer's weights, by its kind (`StateKind`): the projections in and out, conv, per-head terms."""
    m, tp = rank.model, rank.layout.attn_tp
    s = m.state
    assert s is not None
    names = (f"model.layers.{layer}.linear_attn", f"model.layers.{layer}.mixer")
    h = m.hidden_size
    key_width = s.n_groups * s.state_size
    if s.kind is StateKind.GATED_DELTA_NET:  # qkvz and beta/alpha projections
        rank.matrix("linear_attention", 2 * key_width + 2 * s.inner_size, h, tp, names)
        rank.matrix("linear_attention", 2 * s.num_heads, h, tp, names)
        rank.vector("linear_attention", s.conv_dim * s.conv_kernel, tp)
        rank.vector("linear_attention", s.num_heads, tp, dtype_bytes=4)  # A_log: fp32 in both engines
        rank.vector("linear_attention", s.num_heads, tp)  # dt_bias
        rank.vector("norms", s.head_dim)
    elif s.kind is StateKind.MAMBA1:  # in_proj (x, z), conv (+ bias), x_proj (dt, B, C), dt_proj, A, D
        rank.matrix("linear_attention", 2 * s.inner_size, h, tp, names)
        rank.vector("linear_attention", s.conv_dim * (s.conv_kernel + 1), tp)
        rank.matrix("linear_attention", s.dt_rank + 2 * s.state_size, s.inner_size, tp, names)
        rank.matrix("linear_attention", s.inner_size, s.dt_rank, tp, names)
        rank.vector("linear_attention", s.inner_size * s.state_size, tp, dtype_bytes=4)  # A: fp32 (MambaMixer)
        rank.vector("linear_attention", s.inner_size * 2, tp)  # D, dt_proj bias
        if s.dt_bc_norms:
            rank.vector("norms", s.dt_rank + 2 * s.state_size)
    elif s.kind is StateKind.KIMI_DELTA:  # q, k, v, their short convs, gates f (low rank) and g, beta
        rank.matrix("linear_attention", 3 * s.inner_size, h, tp, names)
        rank.vector("linear_attention", s.conv_dim * s.conv_kernel, tp)
        rank.matrix("linear_attention", s.num_heads, h, tp, names)  # beta
        rank.vector("linear_attention", 2 * s.num_heads, tp)  # A_log, dt_bias
        rank.matrix("linear_attention", s.head_dim, h, 1, names)  # f_a
        rank.matrix("linear_attention", s.inner_size, s.head_dim, tp, names)  # f_b
        rank.matrix("linear_attention", s.head_dim, h, 1, names)  # g_a
        rank.matrix("linear_attention", s.inner_size, s.head_dim, tp, names)  # g_b
        rank.vector("norms", s.head_dim)
    elif s.kind is StateKind.SHORT_CONV:  # in_proj (B, C, x), depthwise conv, out_proj
        rank.matrix("linear_attention", 3 * h, h, tp, names)
        rank.vector("linear_attention", h * s.conv_kernel, tp)
        rank.matrix("linear_attention", h, h, tp, names)
        return
    else:  # Mamba2: z, x, B, C, dt in one projection
        # groups that do not divide over TP are repeated to one per rank (vLLM extra_groups_for_head_shards)
        extra = 0 if s.n_groups % tp == 0 else (tp - s.n_groups) * s.state_size
        rank.matrix("linear_attention", 2 * s.inner_size + 2 * (key_width + extra) + s.num_heads, h, tp, names)
        conv_dim = s.conv_dim + 2 * extra
        rank.vector("linear_attention", conv_dim, tp)  # conv bias
        rank.vector("linear_attention", conv_dim * s.conv_kernel, tp)
        rank.vector("linear_attention", s.num_heads, tp, dtype_bytes=4)  # A: fp32 (MambaMixer2)
        rank.vector("linear_attention", 2 * s.num_heads, tp)  # D, dt_bias
        if s.gated_norm:  # Mixer2RMSNormGated: the inner width split over TP
            rank.vector("norms", s.inner_size, tp)
    rank.matrix("linear_attention", h, s.inner_size, tp, names)


def _mlp(rank: _Rank, layer: int, kind: MlpKind) -> None:
    m, lay = rank.model, rank.layout
    h = m.hidden_size
    mats = 3 if m.mlp_gated else 2
    prefix = f"model.layers.{layer}.mlp"
    if kind is MlpKind.DENSE:
        width = m.intermediate(layer)
        names = (prefix, prefix + ".down_proj")
        for _ in range(mats - 1):
            rank.matrix("mlp", width, h, lay.tp, names)
        rank.matrix("mlp", h, width, lay.tp, names, input_split=lay.tp)  # down: hidden rows, its input split
        if m.body.mlp_bias:
            rank.vector("mlp", (mats - 1) * width, lay.tp)
            rank.vector("mlp", h)
        return
    moe = m.moe
    assert moe is not None
    shards = lay.moe_shards
    width = moe.latent_size or h  # experts in a latent width: projected in and out of it (NemotronH)
    local = moe.num_routed_experts // lay.ep  # experts a rank holds (each its own scalar scales)
    experts = (prefix + ".experts", prefix + ".experts.0.down_proj")
    for _ in range(mats - 1):
        rank.matrix("routed_experts", moe.num_routed_experts * moe.expert_intermediate_size, width, shards, experts,
                    tensors=local)  # fmt: skip
    rank.matrix("routed_experts", moe.num_routed_experts * width, moe.expert_intermediate_size, shards, experts,
                tensors=local, input_split=shards // lay.ep)  # fmt: skip
    if moe.latent_size:
        for _ in range(2):
            rank.matrix("routed_experts", moe.latent_size, h, 1, (prefix + ".fc1_latent_proj",))
    if moe.expert_bias:  # w13's bias splits as its rows; w2's (hidden wide) only as the experts split over EP
        rank.vector("routed_experts", moe.num_routed_experts * 2 * moe.expert_intermediate_size, shards)
        rank.vector("routed_experts", moe.num_routed_experts * h, lay.ep)
    if moe.shared_intermediate_size:
        shared_names = (
            prefix + ".shared_experts",
            prefix + ".shared_expert",
            prefix + ".shared_expert.down_proj",
        )
        for _ in range(mats - 1):
            rank.matrix("shared_experts", moe.shared_intermediate_size, h, lay.tp, shared_names)
        rank.matrix("shared_experts", h, moe.shared_intermediate_size, lay.tp, shared_names, input_split=lay.tp)
        if moe.shared_expert_gate:
            rank.vector("shared_experts", h)
    rank.vector("router", moe.num_routed_experts * h, dtype_bytes=4 if moe.router_fp32 else None)
    if moe.extra_norms:
        rank.vector("norms", moe.extra_norms * h)
    if moe.per_expert_scale:
        rank.vector("router", moe.num_routed_experts)
    if moe.router_bias:  # DeepSeek's fp32 score correction; gpt-oss's router Linear bias in the model dtype
        rank.vector("router", moe.num_routed_experts, dtype_bytes=4 if moe.router_bias_fp32 else None)
    if lay.ep > 1:
        rank.acc.notes["routed_experts"] = (
            f"{moe.num_routed_experts // lay.ep} of {moe.num_routed_experts} experts per rank (EP{lay.ep})"
        )


def _layer(rank: _Rank, layer: int) -> None:
    model = rank.model
    kind = model.layer_attention[layer]
    if kind in (LayerKind.FULL, LayerKind.SLIDING, LayerKind.SHARED):
        _attention(rank, layer)
    if model.has_state(layer):
        _linear_attention(rank, layer)
    if model.layer_mlp[layer] is not MlpKind.NONE:
        _mlp(rank, layer, model.layer_mlp[layer])
    norms = model.body.norms_per_layer
    rank.vector("norms", (2 if model.body.norm_bias else 1) * norms * model.hidden_size)


LATENT_PROBES = (".self_attn.q_a_proj", ".self_attn.q_b_proj", ".self_attn.kv_a_proj_with_mqa", ".self_attn.kv_b_proj",
                 ".self_attn.o_proj", ".self_attn.indexer.wq_b", ".self_attn.indexer.wk")  # fmt: skip


def _layer_signature(model: ModelSpec, layer: int) -> tuple[object, ...]:
    """What decides a layer's bytes: its kinds, and which of its modules the checkpoint spares."""
    kinds = (model.layer_attention[layer], model.layer_mlp[layer], model.geometry(layer), model.intermediate(layer),
             model.indexed(layer))  # fmt: skip
    if not model.quant.excluded and not model.quant.mixed:
        return kinds
    prefix = f"model.layers.{layer}"
    probes = (".self_attn", ".self_attn.q_proj", ".linear_attn", ".mixer", ".mlp", ".mlp.down_proj", ".mlp.experts",
              ".mlp.experts.0.down_proj", ".mlp.shared_experts", ".mlp.shared_expert", ".mlp.shared_expert.down_proj",
              *(LATENT_PROBES if model.mla is not None else ()))  # fmt: skip
    return (*kinds, *(model.quant.format_of((prefix + probe,)) for probe in probes))


def embedding_tp(model: ModelSpec, layout: ParallelLayout) -> int:
    """How many ranks split the vocab embedding: TP, or 1 where DP attention replicates it.

    SGLang builds the vocab embedding with TP off under DP attention in the models whose entry says so
    (`VocabParallelEmbedding(..., enable_tp=not <dp attention>)` in DeepseekV2Model, which DeepSeek
    V3/V3.2 and Kimi-K2 reuse, and in Llama4Model); their LM head stays split over the whole TP group
    (`ParallelLMHead` uses the attention-TP group only with --enable-dp-lm-head).
    """
    if layout.dp_attention and model.embedding_whole_under_dp_attention:
        return 1
    return layout.tp


_BOOKS: Memo[WeightsBook] = Memo(size=64)


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
    rank = _Rank(model, layout, tower_split)
    h = model.hidden_size
    width = model.embedding_size or h  # the embedding's and a tied LM head's width (OPT-350m: 512)
    padded_vocab = math.ceil(model.vocab_size / 64) * 64
    vocab_rows = math.ceil(padded_vocab / layout.tp)
    if parts.embedding:
        plain = tower_split is not None and model.architecture in tower_split.whole_embedding
        embedding_shards = 1 if plain else embedding_tp(model, layout)
        embedding_rows = model.vocab_size if plain else math.ceil(padded_vocab / embedding_shards)
        rank.acc.add(
            "embedding", embedding_rows * width, embedding_rows * width * model.dtype_bytes, embedding_shards
        )
        if embedding_shards < layout.tp:
            rank.acc.notes["embedding"] = (
                "whole on every rank: the engine builds it as a plain nn.Embedding"
                if plain
                else "whole on every rank: SGLang builds it without TP under DP attention"
            )
        if model.body.learned_positions:  # a learned position table, whole on every rank
            rank.vector("embedding", (model.max_position_embeddings + model.body.positions_offset) * h)
        if width != h:  # project_in: the embedding's width to hidden (ReplicatedLinear, whole on every rank)
            rank.matrix("embedding", h, width, 1, ("model.decoder.project_in",), quantizable=False)
        if model.body.embedding_norm:
            rank.vector("norms", (2 if model.body.norm_bias else 1) * h)
    if parts.tower and model.tower is not None:  # the vision tower and projector, its big matrices split over TP
        params = model.tower.params_per_rank(layout.tp, tower_split)  # (towers.py)
        if not parts.tower_positions:  # built with the tower on the first stage only
            params -= _tower_positions_per_rank(model.tower, layout.tp, tower_split)
        split = layout.tp if params < model.tower.params else 1  # Gemma-4's is whole on every rank (vLLM)
        rank.acc.add("vision", params, params * model.dtype_bytes, split)
        rank.acc.notes["vision"] = f"{model.tower.config_class}: the vision tower and its projector"
    # Layers of the same kind (and the same quantization exclusions) hold the same bytes:
    # compute each distinct kind once and count it, so a 126-layer model costs a few layers.
    groups: dict[tuple[object, ...], list[int]] = {}
    for layer in layers:
        groups.setdefault(_layer_signature(model, layer), []).append(layer)
    for members in groups.values():
        one = _Rank(model, layout, tower_split)
        _layer(one, members[0])
        for name, (params, nbytes) in one.acc.parts.items():
            rank.acc.add(name, params * len(members), nbytes * len(members), one.acc.shards[name])
        rank.acc.notes.update(one.acc.notes)
    if parts.final_norm and model.body.final_norm:
        rank.vector("norms", (2 if model.body.norm_bias else 1) * h)
    if parts.lm_head:
        if not (model.tie_word_embeddings and parts.embedding):  # tied: the stage's embedding is its head
            # a MIXED_PRECISION checkpoint may list its LM head (quantized_layers: lm_head); others keep it whole
            head = model.quant.format_of(("lm_head",)) if model.quant.mixed else None
            head_bytes = (
                head.matrix_bytes(vocab_rows, width, model.dtype_bytes) if head else vocab_rows * width * model.dtype_bytes
            )
            rank.acc.add("lm_head", vocab_rows * width, head_bytes, layout.tp)
        if width != h:  # project_out: hidden back to the LM head's width (ReplicatedLinear)
            rank.matrix("lm_head", width, h, 1, ("model.decoder.project_out",), quantizable=False)
        if model.body.lm_head_bias:
            rank.vector("lm_head", padded_vocab, layout.tp)
    if last_stage and model.mtp_layers:
        if load_mtp:
            _mtp(rank, model)
        else:
            rank.acc.add("mtp", 0, 0, 1)
            rank.acc.notes["mtp"] = (
                f"{model.mtp_layers} MTP layer(s) loaded only with speculative decoding"
            )
    if model.tie_word_embeddings and parts.embedding and parts.lm_head:
        rank.acc.notes["embedding"] = "tied with the LM head (one matrix)"
    for name, held, guarded in (("embedding", parts.embedding, first_stage), ("lm_head", parts.lm_head, last_stage)):
        if held and not guarded and name in rank.acc.parts:
            rank.acc.notes[name] = "also on this PP stage: the engine's model class builds it on every stage"
    return WeightsBook(rows=rank.acc.rows(COMPONENT_ORDER))


def _tower_positions_per_rank(tower: TowerSpec, tp: int, split: TowerSplit | None) -> float:
    """A tower's learned position table on one rank: whole, or its rows padded to 64 and split over TP
    (`VocabParallelEmbedding`, as `TowerSpec.params_per_rank` counts it)."""
    if not tower.position_rows:
        return 0
    if split is None or not split.position_table:
        return tower.position_params
    return math.ceil(math.ceil(tower.position_rows / 64) * 64 / tp) * (tower.position_params // tower.position_rows)


def _mtp(rank: _Rank, model: ModelSpec) -> None:
    """DeepSeek next-n layers: a whole decoder layer plus the projection that feeds it."""
    before = {k: list(v) for k, v in rank.acc.parts.items()}
    last = model.num_layers - 1
    for _ in range(model.mtp_layers):
        _attention(rank, last)
        _mlp(rank, last, model.layer_mlp[last])
        rank.matrix("mtp", model.hidden_size, 2 * model.hidden_size, 1, ("model.layers.61.eh_proj",))
        rank.vector("norms", 4 * model.hidden_size)
    moved = [0.0, 0.0]
    for name, (params, nbytes) in list(rank.acc.parts.items()):
        old = before.get(name, [0.0, 0.0])
        if name != "mtp":
            moved[0] += params - old[0]
            moved[1] += nbytes - old[1]
            rank.acc.parts[name] = old
    rank.acc.add("mtp", moved[0], moved[1], 1)
