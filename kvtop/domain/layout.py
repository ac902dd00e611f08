"""ParallelLayout: how a model is spread over GPUs, validated against the model.

Attention TP is `tp ÷ dp` under SGLang's DP attention (each DP rank keeps a whole KV pool of
its own), else `tp`. KV heads stop dividing at one per rank; the extra ranks hold copies.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kvtop.domain.errors import LayoutError
from kvtop.domain.launch_vocabulary import MAX_PARALLEL
from kvtop.domain.model import MLA_KINDS, ModelSpec
from kvtop.domain.model_layers import AttentionGeometry
from kvtop.domain.rounding import ceil_div

# Where a split that does not divide puts its remainder layers: one each on the last stages ("last"), the stages
# before the last ("second_to_last"), the first ("first"), or every one on the last stage ("last_takes_all")
PpRemainder = Literal["last", "second_to_last", "first", "last_takes_all"]
MtpFc = Literal["", "split", "split_quantized"]  # how an MTP layer's input projection is built: StageParts.mtp_fc


class StageParts(BaseModel):
    """Which of the model's ends a pipeline stage's rank builds: the token embedding, the final norm, the
    LM head and the vision tower (with its learned position table, where it has one). Most classes guard
    them (`is_first_rank` / `is_last_rank`: `guarded_parts`); some build them on every stage, which each
    engine's `stage_parts` states per class and release."""

    model_config = ConfigDict(frozen=True)

    embedding: bool
    final_norm: bool
    lm_head: bool
    tower: bool
    tower_positions: bool
    # what the engine's class builds on every layer of the stage beside (or other than) the checkpoint's tensors:
    # scalar parameters on each attention layer (the KV-cache scales of a quantized checkpoint: vLLM's
    # q/k/v/prob in the model dtype, SGLang's k/v in fp32), and the modules built in the model dtype whatever
    # the checkpoint stores (vLLM 0.33's DSA indexer wk, fused with weights_proj): each engine's `stage_parts`
    # states them per release
    # the engine ties the LM head to the embedding otherwise than the model's tie_word_embeddings (vLLM 0.33.0: a
    # multimodal wrapper's own value, engines/vllm/pp_parts.tied); None: the model's
    tied_head: bool | None = None
    # the hyper-connections' head mixer (weight_hyper.hyper_connection_merge) where the class builds it otherwise
    # than with the final norm (vLLM 0.33.0's DeepSeek-V4: on every stage, engines/vllm/pp_parts.py); None: with it
    head_mixer: bool | None = None
    attention_scalars: int = 0
    attention_scalar_bytes: int | None = None  # each scalar's width; None: the model dtype (vLLM's)
    # the scalars only on the layers without a lightning indexer: the indexed ones' attention is the engine's own
    # class, no `Attention` (vLLM 0.33.0 MiniMaxM3SparseAttention: its scales are buffers, not parameters)
    attention_scalars_unindexed_only: bool = False
    # the fused q|k|v of a checkpoint in K|V chunks (`BodyShape.fused_qkv_chunks`) keeps each chunk's K and V rows
    # together, zero-padded to whole scale blocks, where a rank holds several chunks (vLLM 0.33.0 mimo_v2.py
    # _fused_qkv_kv_chunk_rows; engines/vllm/layer_build.py)
    fused_qkv_padded: bool = False
    # scalars in the model dtype beside those on each attention layer (vLLM 0.33.0 compressed-tensors' q/k/v
    # zero points beside its fp32 q/k/v scales)
    attention_zero_points: int = 0
    # bytes each built linear module of a compressed-tensors weight-only int (WNA16) checkpoint holds beside its
    # matrices, whole on every rank: its `weight_shape`, int64 [2] (16 B) in both engines' CompressedTensorsWNA16
    linear_shape_bytes: int = 0
    # a symmetric GPTQ checkpoint's experts hold packed zeros per group and row all the same, in words of this many
    # bits (vLLM creates w13_qzeros / w2_qzeros for every GPTQ checkpoint and keeps them after loading: int32 in
    # 0.33.0's AutoGPTQMoEMethod, the model dtype in 0.13.0's GPTQMarlinMoEMethod); 0: none
    expert_zero_word_bits: int = 0
    # the per-row scales of a per-channel format stay in host memory when the pools are sized (SGLang 0.5.23's
    # bitsandbytes 8-bit SCB: the loader keeps the checkpoint's CPU tensor; the first forward copies it over)
    host_row_scales: bool = False
    unquantized: tuple[str, ...] = ()
    # the engine's names of the modules where they differ from the book's (kvtop's fragment, the engine's; the first
    # that a name holds is replaced), which a compressed-tensors checkpoint's per-group targets are matched against
    # (`QuantSpec.targeted`): vLLM 0.33.0's DeepSeek-V4 `attn.fused_wqa_wkv`, its experts' `ffn.experts.0.w2`
    target_names: tuple[tuple[str, str], ...] = ()
    # the engine's module names are known for this model (`target_names`, renaming none or some): a checkpoint's
    # per-target compressed-tensors groups are read; else the weights book refuses them (`QuantSpec.unread`)
    targets_read: bool = False
    # the MoE router's matrix in the model dtype though the architecture's entry keeps it fp32 (SGLang 0.5.23's
    # MiniMax-M3 gate, built bf16 under SGLANG_OPT_USE_BF16_ROUTER_GEMM: engines/sglang/layer_build.py)
    router_model_dtype: bool = False
    # … or in fp32 though the entry keeps it in the model dtype (SGLang 0.5.23's Laguna: LagunaMoEGate's weight
    # torch.float32, where vLLM 0.33.0's GateLinear is bf16: engines/sglang/router_dtype.py)
    router_fp32: bool = False
    # the DSA indexer's weights_proj width where the engine's class builds it otherwise than the model dtype (SGLang
    # 0.5.6.post2: fp32, "for convenience"); None: the model dtype
    index_weights_bytes: int | None = None
    # the LM head in the checkpoint's format though the checkpoint does not list it (SGLang's ModelOpt configs
    # quantize every ParallelLMHead their exclusions do not name: engines/sglang/lm_head.py)
    lm_head_quantized: bool = False
    # the width of a W4A16 matrix's input_scale (QuantSpec.unused_input_scale); None: the model dtype (vLLM 0.33.0
    # ModelOptNvFp4 W4A16 registers it in params_dtype); SGLang 0.5.23 in fp32
    unused_input_scale_bytes: int | None = None
    # scalars each expert of a compressed-tensors WNA16 MoE holds beside its matrices, in the model dtype (vLLM
    # 0.33.0 CompressedTensorsWNA16MoEMethod: w13_weight_shape and w2_weight_shape [E, 2])
    wna16_expert_scalars: int = 0
    # the tower built as transformers' own classes, whole on every rank (TowerSpec.transformers_params): a class the
    # engine serves through its Transformers backend (SGLang 0.5.23: engines/sglang/transformers_tower.py)
    tower_as_transformers: bool = False
    # the class builds no q/k norms though the family has them, the config not stating its flag (SGLang 0.5.23
    # hunyuan.py: getattr(config, "use_qk_norm", False))
    qk_norm_off: bool = False
    # the router's score-correction bias in the model dtype too (SGLang's ERNIE-4.5 MoEGate: plain nn.Parameters,
    # engines/sglang/router_dtype.py; with router_model_dtype)
    router_bias_model_dtype: bool = False
    # each 128 × 128 block scale's width where the class builds it narrower than the format's fp32 (vLLM's
    # DeepSeek-V4: float8_e8m0fnu, engines/vllm/layer_build.py); None: the format's
    block_scale_bytes: int | None = None
    # DeepSeek-V4's compressor norms in the model dtype (vLLM's RMSNorm) rather than fp32 (SGLang's)
    compressor_norm_model_dtype: bool = False
    # the MTP layer's input projection (2 × hidden → hidden) as the engine's class builds it: '' a whole nn.Linear in
    # the model dtype (DeepSeek's eh_proj in both engines, SGLang's Qwen3-Next/3.5 fc); 'split' a ColumnParallelLinear
    # over TP, the model dtype; 'split_quantized' one given the quant config (vLLM's Qwen3-Next/3.5 fc:
    # engines/vllm/mtp_build.py)
    mtp_fc: MtpFc = ""
    # the MTP layer built with no quant config whatever the checkpoint's (SGLang's Qwen3.5, DeepSeek and GLM drafts of
    # a ModelOpt NVFP4 checkpoint, by release: engines/sglang/mtp_quant.py)
    mtp_plain: bool = False
    # the name the class gives MTP layer `index` (`layer`: num_layers + index), which the quant lists are asked under
    # ('mtp.layers.{index}.': vLLM's Qwen3-Next/3.5 predictor, engines/vllm/mtp_build.py); '' the target's last layer's
    mtp_names: str = ""
    # DeepSeek-V4's attention sink over the rank's q heads padded to 64 or 128 (vLLM's FlashMLA
    # get_padded_num_q_heads) rather than every head on every rank (SGLang's)
    sink_padded_local_heads: bool = False
    # the routed experts carry w13 / w2 biases the checkpoint does not (SGLang 0.5.23's Kimi-K3 MXFP4 experts:
    # Mxfp4MoEMethod builds them on CUDA, engines/sglang/layer_build.py)
    expert_bias: bool = False
    # the experts' w13 / w2 biases in this width where the engine's class builds them otherwise than the model dtype
    # (SGLang's UnquantizedFusedMoEMethod: fp32, engines/sglang/layer_build.py); None: the model dtype
    expert_bias_bytes: int | None = None


class EveryStage(BaseModel):
    """What a class builds on every pipeline stage (no `is_first_rank` / `is_last_rank` guard around it).
    `tied_head_is_embedding`: a tied LM head is the stage's own embedding (`lm_head = model.embed_tokens`), so
    a stage without the embedding holds no head at all."""

    model_config = ConfigDict(frozen=True)

    embedding: bool = False
    final_norm: bool = False
    lm_head: bool = False
    tied_head_is_embedding: bool = False
    tower: bool = False  # the vision tower and projector, less its learned position table (first stage only)
    head_mixer: bool = False  # the hyper-connections' head mixer (hc_head_fn, base, scale)


def guarded_parts(pp_rank: int, pp: int) -> StageParts:
    """The embedding on the first stage, the final norm and LM head on the last (a guarded class)."""
    first, last = pp_rank == 0, pp_rank == pp - 1
    return StageParts(embedding=first, final_norm=last, lm_head=last, tower=first, tower_positions=first)


def parts_of_stage(every: EveryStage | None, tied: bool, pp_rank: int, pp: int) -> StageParts:
    """A stage's parts: the guarded ones, and what the class builds on every stage."""
    guarded = guarded_parts(pp_rank, pp)
    if every is None:
        return guarded
    embedding = guarded.embedding or every.embedding
    lm_head = guarded.lm_head or every.lm_head
    if tied and every.tied_head_is_embedding:
        lm_head = embedding
    return StageParts(
        embedding=embedding, final_norm=guarded.final_norm or every.final_norm, lm_head=lm_head,
        tower=guarded.tower or every.tower, tower_positions=guarded.tower_positions,
        head_mixer=True if every.head_mixer else None,
    )  # fmt: skip


class MlpSplit(BaseModel):
    """Over how many ranks the engine splits the MLP's parts beside the routed experts, where not over TP as the
    weights book otherwise takes them: an EP whose MLP TP group is narrower than TP (TurboMind's `mlp_tp`, tp ÷ ep
    at dp 1) or wider (its 0.18.0 `dense_tp`), or a class that builds the MLP replicated (1: vLLM's Transformers
    backend). Each engine states it (`EngineRules.mlp_split`); None: over TP."""

    model_config = ConfigDict(frozen=True)

    dense_shards: int | None = None  # a dense MLP layer's gate/up/down (a dense model's, or a MoE model's dense ones)
    shared_expert_shards: int | None = None  # the shared experts' gate/up/down
    note: str = ""  # the engine's words and source, shown on the rows it changes


class SplitGroup(str, Enum):
    """Over which ranks the engine splits one vocab table (the embedding or the LM head); each rank's share is
    `ParallelLayout.vocab_shards`."""

    WHOLE = "whole"  # every rank holds the whole table
    ATTENTION_TP = "attention_tp"  # vocab-parallel over the attention-TP group (`ParallelLayout.attn_tp`)
    TP = "tp"  # vocab-parallel over TP: the weights book's split where the engine states nothing else


class VocabSplit(BaseModel):
    """Over which group the engine's class splits the vocab embedding and the LM head, one answer a table (whole
    on every rank, over attention TP, or over TP as the weights book otherwise takes them): LMDeploy's PyTorch
    engine builds most classes' as a plain `nn.Embedding` and a rowwise linear without TP, and its
    ParallelEmbedding / ParallelLMHead over attention TP (layer_type 'attn': world ÷ dp in its DP world); SGLang's
    DP-attention classes build the embedding whole or over attention TP by release, the head over TP (over attention
    TP under --enable-dp-lm-head, the embedding whole under SGLANG_ENABLE_EMBED_REPLICATION: sglang/vocab_launch.py).
    Each engine states it (`EngineRules.vocab_split`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")  # a stale flag (embedding_whole=True) fails, never reads TP

    embedding: SplitGroup = SplitGroup.TP
    lm_head: SplitGroup = SplitGroup.TP
    # a whole embedding the class still builds as a VocabParallelEmbedding (SGLang's enable_tp=False): its rows padded
    embedding_rows_padded: bool = False
    note: str = ""  # the engine's words and source, shown on the rows it changes


class ParallelLayout(BaseModel):
    model_config = ConfigDict(frozen=True)

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    dcp: int = 1
    dp_attention: bool = False  # SGLang --enable-dp-attention: DP ranks live inside the TP group
    dcp_splits_kv_heads: bool = True  # SGLang: KV heads over tp ÷ dcp ranks; vLLM: over tp, DCP or not
    # vLLM: without expert parallelism each expert's TP split spans tp × dp replicas (EngineRules.experts_over_replicas)
    experts_over_replicas: bool = False
    # how EP splits the dense MLP and the shared experts, where not over TP (EngineRules.mlp_split); an engine's rule
    # like the two above, left out of the layout a plan prints (the weights rows show its shards)
    mlp_split: MlpSplit = Field(default=MlpSplit(), exclude=True)
    # the ranks of one pipeline stage where the engine states a world other than tp (EngineRules.world_ranks: an
    # engine that runs its DP or EP ranks as one world whose attention TP is world ÷ dp while the MLP splits over
    # tp); None: tp. Printed beside the layout only where stated (render_ledger), so other plans keep their JSON
    world: int | None = Field(default=None, exclude=True)
    # the group each of the embedding and the LM head splits over, where the engine states one other than TP
    # (EngineRules.vocab_split); an engine's rule left out of the printed layout like mlp_split (the weights rows
    # show their shards)
    vocab_split: VocabSplit = Field(default=VocabSplit(), exclude=True)

    @property
    def stage_ranks(self) -> int:
        """The ranks (GPUs) of one pipeline stage of one replica: the engine's stated world, else TP."""
        return self.world or self.tp

    @property
    def attn_tp(self) -> int:
        return self.stage_ranks // self.attn_dp

    def vocab_shards(self, group: SplitGroup) -> int:
        """How many ranks split a vocab table the engine builds over `group`: 1 (whole), attention TP, or TP."""
        if group is SplitGroup.WHOLE:
            return 1
        return self.attn_tp if group is SplitGroup.ATTENTION_TP else self.tp

    @property
    def attn_dp(self) -> int:
        return self.dp if self.dp_attention else 1

    @property
    def replicas(self) -> int:
        """Independent engine replicas (DP without DP attention)."""
        return 1 if self.dp_attention else self.dp

    @property
    def gpus(self) -> int:
        return self.stage_ranks * self.pp * self.replicas

    def nodes_needed(self, gpus_per_node: int) -> int:
        """Nodes of `gpus_per_node` GPUs this layout needs: its GPUs over a node's, a partly filled node counted
        whole (the planner's edit of a multi-node launch keeps each node's GPUs and counts its `--nnodes`)."""
        return ceil_div(self.gpus, gpus_per_node)

    def nodes_per_replica(self, nodes: int) -> int:
        """Nodes one replica spans over `nodes` (at least one): each DP replica without DP attention is an
        engine of its own, so the nodes divide among the replicas."""
        return max(nodes // self.replicas, 1)

    @property
    def moe_shards(self) -> int:
        """Ranks that share the routed experts: the TP group (vLLM: TP × DP replicas), or the wider EP group."""
        return max(self.tp * (self.replicas if self.experts_over_replicas else 1), self.ep)

    @property
    def expert_ranks(self) -> int:
        """The most ranks one pipeline stage can spread experts over: its ranks (TP, or the engine's world), times
        DP replicas (vLLM's EP)."""
        return self.stage_ranks * self.replicas

    def kv_heads_per_rank(self, total_kv_heads: int) -> int:
        """max(1, kv_heads ÷ attention TP): below one head per rank, heads are copied."""
        split_by_dcp = self.dcp > 1 and self.dcp_splits_kv_heads
        shards = max(1, self.attn_tp // self.dcp) if split_by_dcp else self.attn_tp
        return max(1, total_kv_heads // shards)

    def describe(self) -> str:
        parts = [f"TP{self.tp}"]
        if self.pp > 1:
            parts.append(f"PP{self.pp}")
        if self.dp > 1:
            parts.append(f"DP{self.dp}" + (" (DP attention)" if self.dp_attention else ""))
        if self.ep > 1:
            parts.append(f"EP{self.ep}")
        if self.dcp > 1:
            parts.append(f"DCP{self.dcp}")
        if self.world is not None and self.world != self.tp:
            parts.append(f"world {self.world} (attention TP {self.attn_tp})")
        return " ".join(parts)


def _attention_shapes(model: ModelSpec) -> list[AttentionGeometry]:
    """The model's distinct attention shapes (query heads, KV heads), fewest heads first; none attention-free."""
    if model.attention_free:
        return []
    shapes = {model.geometry(i) for i in range(model.num_layers)} if model.layer_geometry else {model.own_geometry}
    return sorted(shapes, key=lambda g: (g.heads, g.kv_heads))


def _attention_split_fault(
    model: ModelSpec, shapes: list[AttentionGeometry], attn_tp: int, gpus: int
) -> str | None:
    """Why the model's attention (its query, KV and linear-attention heads) cannot split over `attn_tp` ranks;
    None where it can. `gpus` only words a split with more ranks than heads."""
    for shape in shapes:
        if shape.heads % attn_tp:
            over = f": more ranks than heads (a layout of {gpus:,} GPUs)" if attn_tp > shape.heads else ""
            return f"{shape.heads} attention heads do not divide over attention TP {attn_tp}{over}"
        kv = shape.kv_heads
        if model.attention_kind not in MLA_KINDS and (
            (kv >= attn_tp and kv % attn_tp) or (kv < attn_tp and attn_tp % kv)
        ):
            return f"{kv} KV heads and attention TP {attn_tp}: one must divide the other"
    if model.state is not None and model.state.num_heads % attn_tp:
        return f"{model.state.num_heads} linear-attention heads do not divide over attention TP {attn_tp}"
    return None


def fitting_tps(model: ModelSpec, layout: ParallelLayout) -> tuple[int, ...]:
    """The TP sizes, at most the layout's own, whose attention split the model's heads allow (the same test as
    `validate_layout`): what a refused TP names instead, on the GPUs the launch asked for. Under DP attention each
    is a multiple of the DP size (attention TP = TP ÷ DP); with `--dcp` each attention TP is one the decode context
    parallel size divides (`validate_layout`'s next test), so a size named is one that passes; none may."""
    shapes = _attention_shapes(model)
    heads = [shape.heads for shape in shapes] + ([model.state.num_heads] if model.state is not None else [])
    most = min([layout.attn_tp, *heads])  # a split must divide every head count, so none above the fewest
    return tuple(tp * layout.attn_dp for tp in range(1, most + 1)
                 if tp % layout.dcp == 0 and _attention_split_fault(model, shapes, tp, layout.gpus) is None)  # fmt: skip


def _or_list(sizes: tuple[int, ...]) -> str:
    """'1, 2 or 4': sizes as a person lists the ones to choose from."""
    said = [f"{size:,}" for size in sizes]
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} or {said[-1]}"


def validate_layout(model: ModelSpec, layout: ParallelLayout) -> None:
    """Raise LayoutError with the reason when the model cannot run on this layout."""
    for name in ("tp", "pp", "dp", "ep", "dcp"):
        if getattr(layout, name) < 1:
            raise LayoutError(f"must be at least 1 (got {getattr(layout, name)})", field=f"--{name}")
    if layout.dp_attention and layout.stage_ranks % layout.dp:
        ranks = f"tp ({layout.tp})" if layout.world is None else f"the world of {layout.world} ranks"
        raise LayoutError(f"DP attention needs dp ({layout.dp}) to divide {ranks}", field="--dp")
    if layout.pp > model.num_layers:  # one size beyond the model's own bound is named by it, before the product
        raise LayoutError(f"{layout.pp:,} pipeline stages exceed the model's {model.num_layers} layers", field="--pp")
    if layout.gpus > MAX_PARALLEL:  # each size is capped; their product names the GPUs the launch would take
        raise LayoutError(f"{layout.describe()} is {layout.gpus:,} GPUs: kvtop plans at most {MAX_PARALLEL:,}",
                          field="--tp")  # fmt: skip
    fault = _attention_split_fault(model, _attention_shapes(model), layout.attn_tp, layout.gpus)
    if fault is not None:  # the TPs that would work on the GPUs asked, named with the reason
        sizes = fitting_tps(model, layout)
        use = f"use TP {_or_list(sizes)}" if sizes else f"no TP up to {layout.tp:,} splits them with --dcp {layout.dcp}"
        raise LayoutError(f"{fault}{'; ' if ': ' in fault else ': '}{use}", field="--tp", source=model.source)
    # EP on a model without experts is the engine's call, asked first (EngineRules.expert_parallel_without_experts)
    if layout.ep > 1 and model.moe is not None:
        if model.moe.num_routed_experts % layout.ep:
            raise LayoutError(
                f"{model.moe.num_routed_experts} routed experts do not divide over ep {layout.ep}",
                field="--ep",
            )
        if layout.expert_ranks % layout.ep:
            raise LayoutError(
                f"ep {layout.ep} must divide the {layout.expert_ranks} ranks that hold the experts "
                f"({f'tp {layout.tp}' if layout.world is None else f'a world of {layout.world}'}"
                f"{f' × dp {layout.replicas}' if layout.replicas > 1 else ''})",
                field="--ep",
            )
    if layout.dcp > 1 and layout.attn_tp % layout.dcp:
        raise LayoutError(
            f"decode context parallel size {layout.dcp} must divide attention TP {layout.attn_tp}", field="--dcp"
        )


def pp_layer_range(num_layers: int, pp_rank: int, pp: int, remainder: PpRemainder) -> range:
    """The layers a pipeline stage holds.

    SGLang gives the remainder to the last stages (before 0.5.6 all of it to the last stage); vLLM to the stages
    before the last (before v0.8.0 all of it to the last stage); TensorRT-LLM to the first (`Mapping.pp_layers`: torch.tensor_split).
    """
    base, extra = divmod(num_layers, pp)
    sizes = [base] * pp
    if remainder == "last_takes_all":
        sizes[pp - 1] += extra
    elif remainder == "first":
        for index in range(extra):
            sizes[index] += 1
    elif remainder == "last":
        for index in range(extra):
            sizes[pp - 1 - index] += 1
    else:
        for index in range(extra):
            sizes[(pp - 2 - index) % pp] += 1
    start = sum(sizes[:pp_rank])
    return range(start, start + sizes[pp_rank])


def largest_stage_layers(num_layers: int, pp: int, remainder: PpRemainder = "last") -> int:
    """The layers the largest pipeline stage holds: ceil(num_layers / pp) under every split that spreads the remainder.

    Such a split (pp_layer_range) gives every stage num_layers // pp layers and one more to num_layers % pp of them;
    engines differ only in which stages take the extra layer (vLLM's get_pp_indices: the stages before the last,
    SGLang's get_pp_indices from 0.5.6: the last, TensorRT-LLM's Mapping.pp_layers: the first), not in how many the
    largest holds. SGLang's before 0.5.6 and vLLM's before v0.8.0 ("last_takes_all") give the whole remainder to the
    last stage: num_layers // pp + num_layers % pp. The engines' layer-partition overrides (VLLM_PP_LAYER_PARTITION,
    SGLANG_PP_LAYER_PARTITION) are not modelled."""
    stages = max(pp, 1)
    if remainder == "last_takes_all":
        return num_layers // stages + num_layers % stages
    return ceil_div(num_layers, stages)
