"""One rank's weight matrices, layer by layer (the weights book's builders; `kvtop/domain/weights.py` assembles
the book from them): attention (full, latent, DSA's indexer), the state mixers, dense and MoE MLPs, the MTP
layers. What one matrix costs a rank (its split, the checkpoint's format for its module) is `rank_matrices.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from kvtop.domain.model import AttentionKind, LayerKind, MlpKind, ModelSpec, StateKind
from kvtop.domain.rank_matrices import RankMatrices
from kvtop.domain.rounding import round_up
from kvtop.domain.vocab_rows import vocab_parallel_rows
from kvtop.domain.weight_hyper import hyper_connection_layer


def kv_chunk_padding(rank: RankMatrices, heads: int, kv_heads: int, hd: int, vd: int, names: tuple[str, ...]) -> None:
    """The zero rows a fused q|k|v in K|V chunks adds on a rank holding several chunks whose K and V rows share a
    scale block (`StageParts.fused_qkv_padded`): each chunk's K|V rows rounded up to whole blocks."""
    chunks, tp, block = rank.model.body.fused_qkv_chunks, rank.layout.attn_tp, rank.model.quant.block
    if rank.parts is None or not rank.parts.fused_qkv_padded or not chunks or block is None:
        return
    if chunks <= tp or chunks % tp or heads % chunks or kv_heads % chunks:
        return
    k_rows, v_rows = kv_heads // chunks * hd, kv_heads // chunks * vd
    if heads // chunks * hd % block[0] or (k_rows % block[0] == 0 and v_rows % block[0] == 0):
        return
    padded = round_up(k_rows + v_rows, block[0])
    rank.matrix("attention", chunks // tp * (padded - k_rows - v_rows), rank.model.hidden_size, 1, names,
                opens_module=False)  # fmt: skip


def attention(rank: RankMatrices, layer: int) -> None:
    m, lay = rank.model, rank.layout
    tp = lay.attn_tp
    h = m.hidden_size
    # NemotronH names its attention projections under the layer's mixer (`backbone.layers.N.mixer.q_proj`)
    names = (f"model.layers.{layer}.self_attn", f"model.layers.{layer}.self_attn.q_proj",
             f"model.layers.{layer}.mixer.q_proj")  # fmt: skip
    if m.mla is not None:
        latentattention(rank, names, layer)
        return
    g = m.geometry(layer)
    hd, vd = g.head_dim, g.v_head_dim
    # q and o only: K and V are another layer's (unless the engine builds them all the same: SGLang's Gemma-3n)
    shared_kv = m.layer_attention[layer] is LayerKind.SHARED and m.architecture not in rank.build.shared_kv_holds_kv
    kv_rank = lay.kv_heads_per_rank(g.kv_heads)
    if g.kv_projections == 1 and m.architecture in rank.build.k_eq_v_holds_v:  # SGLang's Gemma-4: V beside K
        g = g.model_copy(update={"kv_projections": 2, "v_head_dim": hd})
    q_params = g.heads * hd
    low = m.body.q_low_rank  # Step-3: q_low in the replicated qkv_proj, then inter_norm and wq (split)
    if low:
        rank.matrix("attention", low, h, 1, names)
    else:
        rank.matrix("attention", q_params * (2 if m.body.q_output_gate else 1), h, tp, names)
    if m.body.head_gate:  # g_proj: a gate per head (Laguna; vLLM ColumnParallelLinear(hidden, heads))
        rank.matrix("attention", g.heads, h, tp, names)
    if m.body.output_gate_proj:  # its own ColumnParallelLinear(hidden, heads × head_dim) (Muse-Glimmer; vLLM 0.33.0
        rank.matrix("attention", q_params, h, tp, names)  # and SGLang 0.5.23 models/muse_glimmer.py)
    if m.body.output_gate_bias:  # gate_bias [heads] split with them (vLLM 0.33.0 / SGLang 0.5.23 Beam)
        rank.vector("attention", g.heads, tp)
    if m.body.loop_gate:  # IQuest-LoopCoder gate_projections.N: head_dim → heads with a bias, split with the heads
        rank.matrix("attention", g.heads, hd, tp, (f"model.gate_projections.{layer}", *names))
        rank.vector("attention", g.heads, tp)
    # K and V: per-rank width kv_rank heads; ranks beyond the head count hold copies
    kv_width = 0 if shared_kv else kv_rank * (hd + (vd if g.kv_projections == 2 else 0))
    if kv_width:  # K and V as the checkpoint holds them (a per-tensor scale each)
        rank.matrix("attention", kv_rank * hd, h, 1, names, opens_module=False)  # qkv_proj: one module
        if g.kv_projections == 2:
            rank.matrix("attention", kv_rank * vd, h, 1, names, opens_module=False)
    # o_proj also by its own name: a checkpoint may spare it alone (MiMo-V2.5's ignored_layers; both engines skip a
    # module its prefix names, vLLM 0.33.0 is_layer_skipped)
    o_names = (f"model.layers.{layer}.self_attn.o_proj", f"model.layers.{layer}.mixer.o_proj", *names)
    if low:
        rank.vector("norms", low)
        rank.matrix("attention", q_params, low, tp, (f"model.layers.{layer}.self_attn.wq", *names))
    kv_chunk_padding(rank, g.heads, g.kv_heads, hd, vd, names)
    rank.matrix("attention", h, g.heads * vd, tp, o_names, row_scale_shards=1)
    if m.attention_bias:
        rank.vector("attention", q_params, tp)
        if kv_width:
            rank.vector("attention", kv_width)
    if m.body.o_bias:
        rank.vector("attention", h)
    if m.attention_sinks or g.sinks:
        rank.vector("attention", g.heads, tp, dtype_bytes=4 if m.body.sinks_fp32 else None)
    if m.body.tau_scaling:  # tau_alpha [heads], tau_wq and tau_wv [heads, 3 × hidden] (vLLM 0.33.0 moondream3.py)
        rank.vector("attention", g.heads * (1 + 2 * 3 * h), tp)
    if layer in m.cross_attention_layers:  # q_norm, k_norm RMSNorm(head_dim); the attention and MLP tanh gates
        rank.vector("norms", 2 * hd)
        rank.vector("attention", 2)
    if m.body.cross_attention:  # encoder_attn: q, the merged k|v, out_proj (vLLM 0.33.0 / SGLang 0.5.23 whisper.py)
        cross = (f"model.layers.{layer}.encoder_attn", *names)
        rank.matrix("attention", q_params, h, tp, cross)
        rank.matrix("attention", 2 * kv_rank * hd, h, 1, cross)
        rank.matrix("attention", h, g.heads * vd, tp, cross, row_scale_shards=1)
        rank.vector("attention", q_params, tp)
        rank.vector("attention", 2 * kv_rank * hd)
        rank.vector("attention", h)
    if m.body.sink_keys and kv_width:  # sink_k [KV heads of the rank, head_dim] (SGLang 0.5.23 iquest_q1.py)
        rank.vector("attention", kv_rank * hd)
    if m.dsa_index_head_dim and m.indexed(layer):  # MiniMax-M3: index_q sharded as K/V, one index_k head
        rank.matrix("attention", kv_rank * m.dsa_index_head_dim, h, 1, names)
        rank.matrix("attention", m.dsa_index_head_dim, h, 1, names)
        rank.vector("norms", 2 * m.dsa_index_head_dim)  # the index q and k norms
    if m.qk_norm and not (rank.parts is not None and rank.parts.qk_norm_off):
        if m.body.qk_norm_width == "all":  # one norm over all heads, whole on every rank (OLMo-2)
            rank.vector("norms", g.heads * hd)
            rank.vector("norms", 0 if shared_kv else g.kv_heads * hd)
        elif m.body.qk_norm_width == "all_split":  # … split over attention TP (MiniMax-M2's TP norm)
            rank.vector("norms", g.heads * hd, tp)
            rank.vector("norms", 0 if shared_kv else g.kv_heads * hd, tp)
        else:  # weight (and bias: Persimmon) per head_dim, whole on every rank
            rank.vector("norms", (1 if shared_kv else 2) * hd * (2 if m.body.qk_norm_bias else 1))


def latentattention(rank: RankMatrices, names: tuple[str, ...], layer: int) -> None:
    m, tp, h = rank.model, rank.layout.attn_tp, rank.model.hidden_size
    mla = m.mla
    assert mla is not None

    def named(module: str) -> tuple[str, ...]:  # a checkpoint may spare one projection (DeepSeek-V3.2-NVFP4)
        return (f"model.layers.{layer}.self_attn.{module}", *names)

    q_width = m.num_attention_heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim)
    if mla.q_lora_rank:
        rank.matrix("attention", mla.q_lora_rank, h, 1, named("q_a_proj"))  # q_a: whole on every rank
        rank.matrix("attention", q_width, mla.q_lora_rank, tp, named("q_b_proj"))
        rank.vector("norms", norm_width(m, mla.q_lora_rank) if m.body.norm_gate_rank else mla.q_lora_rank)
    else:
        rank.matrix("attention", q_width, h, tp, named("q_proj"))
    latent = mla.latent_width
    # the latent: whole; fused with q_a into one module where there is a q_a (vLLM 0.33.0 deepseek_v2.py
    # fused_qkv_a_proj, SGLang 0.5.23 fused_qkv_a_proj_with_mqa)
    rank.matrix("attention", latent, h, 1, named("kv_a_proj_with_mqa"), opens_module=not mla.q_lora_rank)
    up = m.num_attention_heads * (mla.qk_nope_head_dim + mla.v_head_dim)
    rank.matrix("attention", up, mla.kv_lora_rank, tp, named("kv_b_proj"))
    rank.matrix("attention", h, m.num_attention_heads * mla.v_head_dim, tp, named("o_proj"), row_scale_shards=1)
    rank.vector("norms", norm_width(m, mla.kv_lora_rank) if m.body.norm_gate_rank else mla.kv_lora_rank)
    if m.body.latent_output_gate:  # g_proj: hidden → heads × v_head_dim, split with the heads (Kimi-K3)
        rank.matrix("attention", m.num_attention_heads * mla.v_head_dim, h, tp, named("g_proj"))
    if m.body.latent_sinks:  # learnable_sink_param [heads of the rank], fp32 (SGLang 0.5.23 / vLLM 0.33.0 hy_v4)
        rank.vector("attention", m.num_attention_heads, tp, dtype_bytes=4)
    if m.body.latent_head_gate:  # g_proj: hidden → heads, split with them (Ling-3 head_wise: vLLM 0.33.0 / SGLang
        rank.matrix("attention", m.num_attention_heads, h, tp, named("g_proj"))  # 0.5.23 bailing_moe_v3.py)
    if m.attention_kind is AttentionKind.DSA and m.dsa_index_head_dim and m.dsa_index_heads and m.indexed(layer):
        index = m.dsa_index_head_dim
        rank.matrix("attention", m.dsa_index_heads * index, mla.q_lora_rank or h, 1, named("indexer.wq_b"))
        rank.matrix("attention", index, h, 1, named("indexer.wk"))
        weights_proj = rank.parts.index_weights_bytes if rank.parts is not None else None  # never quantized
        rank.vector("attention", m.dsa_index_heads * h, dtype_bytes=weights_proj)
        rank.vector("norms", 2 * index, dtype_bytes=4)  # k_norm: a LayerNorm (weight, bias) in fp32


def linearattention(rank: RankMatrices, layer: int) -> None:
    """One state mixer's weights, by its kind (`StateKind`): the projections in and out, conv, per-head terms."""
    m, tp = rank.model, rank.layout.attn_tp
    s = m.state
    assert s is not None
    names: tuple[str, ...] = (f"model.layers.{layer}.linear_attn", f"model.layers.{layer}.mixer")
    h = m.hidden_size
    key_width = s.n_groups * s.state_size
    out_names: tuple[str, ...] = names
    if s.kind is StateKind.GATED_DELTA_NET:  # qkvz and beta/alpha projections
        # each projection by its own name (Qwen3.6's mixed-precision checkpoints list in_proj_qkv, in_proj_z and
        # out_proj FP8 and leave in_proj_ba bf16); qkvz a MergedColumnParallelLinear of q, k, v, z, a per-tensor
        # scale each (vLLM 0.33.0 qwen3_next.py: in_proj_qkvz weight_scale [4] on Qwen3.6-27B-NVFP4)
        at = f"model.layers.{layer}.linear_attn"
        for part, name in ((key_width, "in_proj_qkv"), (key_width, "in_proj_qkv"), (s.inner_size, "in_proj_qkv"),
                           (s.inner_size, "in_proj_z")):  # fmt: skip
            rank.matrix("linear_attention", part, h, tp, (f"{at}.in_proj_qkvz", f"{at}.{name}"))
        rank.matrix("linear_attention", 2 * s.num_heads, h, tp,
                    (f"{at}.in_proj_ba", f"{at}.in_proj_b", f"{at}.in_proj_a"))  # fmt: skip
        out_names = (f"{at}.out_proj",)
        rank.vector("linear_attention", s.conv_dim * s.conv_kernel, tp)
        rank.vector("linear_attention", s.num_heads, tp, dtype_bytes=4 if s.a_log_fp32 else None)  # A_log (Qwen: fp32)
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
        # the checkpoints name KDA's modules under self_attn (a `self_attn` exclusion spares them); the conv, A_log
        # (a head each) and dt_bias (inner wide) fp32 in both engines (SGLang 0.5.23 kimi_linear.py / kimi_k3.py,
        # vLLM 0.33.0 kimi_gdn_linear_attn.py)
        names = (f"model.layers.{layer}.self_attn", *names)
        out_names = names
        rank.matrix("linear_attention", 3 * s.inner_size, h, tp, names)
        rank.vector("linear_attention", s.conv_dim * s.conv_kernel, tp, dtype_bytes=4)
        rank.matrix("linear_attention", s.num_heads, h, tp, names)  # beta
        rank.vector("linear_attention", s.num_heads, tp, dtype_bytes=4)  # A_log
        rank.vector("linear_attention", s.inner_size, tp, dtype_bytes=4)  # dt_bias
        if s.full_rank_forget:  # f_proj (Ling-3 no_kda_lora: both engines' bailing_moe_v3.py)
            rank.matrix("linear_attention", s.inner_size, h, tp, names)
        else:
            rank.matrix("linear_attention", s.head_dim, h, 1, names)  # f_a
            rank.matrix("linear_attention", s.inner_size, s.head_dim, tp, names)  # f_b
        if s.full_rank_gate:  # g_proj (Kimi-K3 use_full_rank_gate)
            rank.matrix("linear_attention", s.inner_size, h, tp, names)
        else:
            rank.matrix("linear_attention", s.head_dim, h, 1, names)  # g_a
            rank.matrix("linear_attention", s.inner_size, s.head_dim, tp, names)  # g_b
        rank.vector("norms", s.head_dim)
    elif s.kind is StateKind.LIGHTNING:  # query_key_value, q/k norms, g_proj, g_norm; dense below (no conv)
        # both engines' BailingMoELinearAttention (vLLM 0.33.0 layers/mamba/linear/bailing_linear_attn.py, SGLang
        # 0.5.23 models/bailing_moe_linear.py): QKVParallelLinear of heads × head_dim thrice, g_proj column- and
        # dense row-parallel, the gated group RMSNorm inner ÷ TP wide; the checkpoint names them under `attention`
        names = (f"model.layers.{layer}.attention", f"model.layers.{layer}.self_attn", *names)
        out_names = names
        # (MiniCPM-SALA, SGLang 0.5.23 models/minicpm.py MiniCPMLightningMixer: qkv_proj, q_norm / k_norm where
        # qk_norm, z_proj where use_output_gate, o_norm where use_output_norm, o_proj)
        rank.matrix("linear_attention", 3 * s.inner_size, h, tp, names)
        if s.qk_norm:
            rank.vector("norms", 2 * s.head_dim)
        if s.gate_proj:
            rank.matrix("linear_attention", s.inner_size, h, tp, names)
        if s.gated_norm:
            rank.vector("norms", s.inner_size, tp)
    elif s.kind is StateKind.JET:  # qkvabz_proj, A_log, dt_bias, the dynamic conv's kernel generator, o_norm
        # SGLang 0.5.23 models/jet_nemotron.py JetBlock: qkvabz_proj a MergedColumnParallelLinear of q, k (key_width
        # each), v, z (inner each), a and b (a head each); A_log (fp32) and dt_bias num_heads wide, whole on every
        # rank; DynamicShortConvolutionKernelGenerator w1 (hidden → inner ÷ reduction) and w2 (→ inner × kernel,
        # a bias) both ColumnParallelLinear; o_norm one value head wide; o_proj below
        names = (f"model.layers.{layer}.self_attn", *names)
        out_names = names
        rank.matrix("linear_attention", 2 * key_width + 2 * s.inner_size + 2 * s.num_heads, h, tp, names)
        rank.vector("linear_attention", s.num_heads, dtype_bytes=4)  # A_log
        rank.vector("linear_attention", s.num_heads)  # dt_bias
        generator = s.inner_size // s.dconv_reduction
        rank.matrix("linear_attention", generator, h, tp, names)
        rank.matrix("linear_attention", s.inner_size * s.conv_kernel, generator, tp, names)
        rank.vector("linear_attention", s.inner_size * s.conv_kernel, tp)  # w2's bias
        rank.vector("norms", s.head_dim)
    elif s.kind is StateKind.CCA:  # beside the layer's q, k (split) and o (`attention`)
        cca(rank, layer)
        return
    elif s.kind is StateKind.SHORT_CONV:  # in_proj (B, C, x), depthwise conv, out_proj
        rank.matrix("linear_attention", 3 * h, h, tp, names)
        rank.vector("linear_attention", h * s.conv_kernel, tp)
        rank.matrix("linear_attention", h, h, tp, names)
        return
    else:  # Mamba2: z, x, B, C, dt in one projection
        # groups that do not divide over TP are repeated to one per rank (vLLM extra_groups_for_head_shards)
        extra = 0 if s.n_groups % tp == 0 else (tp - s.n_groups) * s.state_size
        in_names = (f"model.layers.{layer}.mixer.in_proj", *names)  # a list may name in_proj / out_proj alone
        out_names = (f"model.layers.{layer}.mixer.out_proj", *names)
        if extra:  # one ColumnParallelLinear of z, x, B, C and dt
            rank.matrix("linear_attention", 2 * s.inner_size + 2 * (key_width + extra) + s.num_heads, h, tp, in_names)
        else:  # MergedColumnParallelLinear of z, x, B, C, dt: a per-tensor scale each (mamba.py, mamba_mixer2.py)
            for i, part in enumerate((s.inner_size, s.inner_size, key_width, key_width, s.num_heads)):
                rank.matrix("linear_attention", part, h, tp, in_names, opens_module=i == 0)
        conv_dim = s.conv_dim + 2 * extra
        rank.vector("linear_attention", conv_dim, tp)  # conv bias
        rank.vector("linear_attention", conv_dim * s.conv_kernel, tp)
        rank.vector("linear_attention", s.num_heads, tp, dtype_bytes=4)  # A: fp32 (MambaMixer2)
        rank.vector("linear_attention", 2 * s.num_heads, tp)  # D, dt_bias
        if s.gated_norm:  # Mixer2RMSNormGated: the inner width split over TP
            rank.vector("norms", s.inner_size, tp)
    rank.matrix("linear_attention", h, s.inner_size, tp, out_names, row_scale_shards=1)


def cca(rank: RankMatrices, layer: int) -> None:
    """Zaya's CCA pieces beyond `attention`'s q, k, V of the rank's KV heads, and o (SGLang 0.5.23 models/zaya.py):
    val_proj1 / val_proj2, hidden → KV heads × head_dim ÷ 2 each, replicated (544-557: the V rows `attention` did not
    count on this rank); conv_qk, a depthwise Conv1d of kernel cca_time0 and one grouped by the rank's heads of
    cca_time1, both biased, over q‖k split by TP (568-585); temp, one per KV head, split (588)."""
    m, tp = rank.model, rank.layout.attn_tp
    s = m.state
    assert s is not None
    g = m.geometry(layer)
    names = (f"model.layers.{layer}.self_attn", f"model.layers.{layer}.self_attn.q_proj")
    whole, held = g.kv_heads * g.v_head_dim, rank.layout.kv_heads_per_rank(g.kv_heads) * g.v_head_dim
    if whole > held:
        rank.matrix("attention", whole - held, m.hidden_size, 1, names, opens_module=False)
    time0, time1 = s.conv_kernels
    channels = s.conv_dim // tp
    rank.vector("linear_attention", channels * time0 + channels)
    rank.vector("linear_attention", channels * s.head_dim * time1 + channels)
    rank.vector("linear_attention", s.n_groups, tp)


def mlp(rank: RankMatrices, layer: int, kind: MlpKind) -> None:
    m, lay = rank.model, rank.layout
    h = m.hidden_size
    mats = 3 if m.mlp_gated else 2
    prefix = f"model.layers.{layer}.mlp"
    if kind is MlpKind.DENSE:
        width = m.intermediate(layer)
        tp = lay.mlp_split.dense_shards or lay.tp  # TP, unless the engine says otherwise (MlpSplit)
        if lay.mlp_split.dense_shards and lay.mlp_split.note:
            rank.acc.notes["mlp"] = lay.mlp_split.note
        for i in range(mats - 1):  # gate and up: column-parallel, one gate_up_proj module
            rank.matrix("mlp", width, h, tp, (prefix, prefix + ".down_proj"), opens_module=i == 0)
        rank.matrix("mlp", h, width, tp, (prefix, prefix + ".down_proj"), row_scale_shards=1)
        if m.body.mlp_bias:
            rank.vector("mlp", (mats - 1) * width, tp)
        if m.body.mlp_bias or m.body.down_bias:  # down_proj's bias: row-parallel, whole on every rank
            rank.vector("mlp", h)
        return
    moe = m.moe
    assert moe is not None
    mats = 3 if moe.gated_experts else mats
    shards = lay.moe_shards
    width = moe.latent_size or h  # experts in a latent width: projected in and out of it (NemotronH)
    local = moe.num_routed_experts // lay.ep  # experts a rank holds (each its own scalar scales)
    experts = moe.expert_names(layer)  # where the class names its experts
    for i in range(mats - 1):  # w13: gate and up (one tensor), their rows split over TP (or the experts over EP)
        rank.matrix("routed_experts", moe.num_routed_experts * moe.expert_intermediate_size, width, shards, experts,
                    tensors=local, experts=True, opens_module=i == 0)  # fmt: skip
    # w2: each expert's width rows out, split along its input (TP) or as whole experts (EP)
    rank.matrix("routed_experts", moe.num_routed_experts * width, moe.expert_intermediate_size, shards, experts,
                tensors=local, row_scale_shards=lay.ep, experts=True)  # fmt: skip
    if moe.second_group_experts:  # a second group's w13 and w2, split as the first (ERNIE-4.5-VL's vision experts)
        group, size = moe.second_group_experts, moe.second_group_intermediate_size
        for i in range(mats - 1):
            rank.matrix("routed_experts", group * size, width, shards, experts, tensors=group // lay.ep, experts=True,
                        opens_module=i == 0)  # fmt: skip
        rank.matrix("routed_experts", group * width, size, shards, experts, tensors=group // lay.ep,
                    row_scale_shards=lay.ep, experts=True)  # fmt: skip
    expert_format = rank.model.quant.format_of(experts)
    if rank.parts is not None and rank.parts.wna16_expert_scalars and expert_format and expert_format.weight_only_int:
        rank.vector("routed_experts", local * rank.parts.wna16_expert_scalars)
    if moe.latent_size:  # into the latent and back, whole on every rank
        for module in moe.latent_modules:
            rank.matrix("routed_experts", moe.latent_size, h, 1, (f"{prefix}.{module}",))
        if moe.latent_norm:
            rank.vector("norms", moe.latent_size)
    if moe.expert_bias or (rank.parts is not None and rank.parts.expert_bias):
        # w13's bias splits as its rows; w2's (as wide as the experts' input) only as the experts split over EP
        bias_bytes = rank.parts.expert_bias_bytes if rank.parts is not None else None
        rank.vector("routed_experts", moe.num_routed_experts * 2 * moe.expert_intermediate_size, shards,
                    dtype_bytes=bias_bytes)  # fmt: skip
        rank.vector("routed_experts", moe.num_routed_experts * width, lay.ep, dtype_bytes=bias_bytes)
    if moe.shared_intermediate_size:
        shared_names = (
            prefix + ".shared_experts",
            prefix + ".shared_expert",
            prefix + ".shared_expert.down_proj",
        )
        shared_tp = lay.mlp_split.shared_expert_shards or lay.tp  # TP, unless the engine's EP says otherwise
        for i in range(mats - 1):  # one gate_up_proj module
            rank.matrix("shared_experts", moe.shared_intermediate_size, h, shared_tp, shared_names, opens_module=i == 0)
        rank.matrix("shared_experts", h, moe.shared_intermediate_size, shared_tp, shared_names, row_scale_shards=1)
        if lay.mlp_split.shared_expert_shards and lay.mlp_split.note:
            rank.acc.notes["shared_experts"] = lay.mlp_split.note
        if moe.shared_expert_gate:
            rank.vector("shared_experts", h)
    router_fp32 = (moe.router_fp32 and not (rank.parts is not None and rank.parts.router_model_dtype)) or bool(
        rank.parts is not None and rank.parts.router_fp32
    )
    # zero-computation experts: router rows only (LongCat); a second group: its own router and score-bias rows
    routes = moe.num_routed_experts + moe.zero_experts + moe.second_group_experts
    if moe.router_mlp:  # ZayaRouter: down_proj (biased), its norm, the EDA scale, three biased Linears to the routes
        w = moe.router_mlp  # (SGLang 0.5.23 models/zaya.py 1046-1089), whole on every rank
        out = routes + int(moe.router_mlp_skip)
        rank.vector("router", h * w + w + w + w * int(moe.router_mlp_eda) + 2 * (w * w + w) + w * out)
    else:
        rank.vector("router", routes * h, dtype_bytes=4 if router_fp32 else None)
    hashed = layer < moe.hash_layers  # routed by token id: a [vocab, top-k] int32 table, no score bias
    if hashed:
        rank.vector("router", m.vocab_size * moe.experts_per_token, dtype_bytes=4)
    if moe.extra_norms:
        rank.vector("norms", moe.extra_norms * h)
    if moe.per_expert_scale:
        rank.vector("router", moe.num_routed_experts)
    bias_as_model = rank.parts is not None and rank.parts.router_bias_model_dtype  # the engine's class overrides
    if moe.router_bias and not hashed:  # DeepSeek's fp32 score correction; gpt-oss's router Linear bias in the model dtype
        rank.vector("router", routes, dtype_bytes=4 if moe.router_bias_fp32 and not bias_as_model else None)
    if lay.ep > 1:
        rank.acc.notes["routed_experts"] = (
            f"{moe.num_routed_experts // lay.ep} of {moe.num_routed_experts} experts per rank (EP{lay.ep})"
        )


def layer_weights(rank: RankMatrices, layer: int, attention_of: Callable[[RankMatrices, int], None] | None = None) -> None:
    """One layer's matrices; `attention_of` builds its attention where the caller's model attends otherwise than
    `attention` (DeepSeek-V4's compressed attention, weight_compressed.py; Zamba2's hybrid layers, weight_shared.py:
    both build on this module)."""
    model = rank.model
    kind = model.layer_attention[layer]
    hybrid = model.shared_block is not None and kind is LayerKind.FULL  # a shared block's MLP (weight_shared.py)
    if kind in (LayerKind.FULL, LayerKind.SLIDING, LayerKind.SHARED):
        (attention_of or attention)(rank, layer)
        parts = rank.parts
        if parts is not None and parts.attention_scalars and not (
            parts.attention_scalars_unindexed_only and model.indexed(layer)
        ):  # whole on every rank (scalars)
            rank.vector("attention", parts.attention_scalars, dtype_bytes=parts.attention_scalar_bytes)
            rank.vector("attention", parts.attention_zero_points)
    if model.has_state(layer):
        linearattention(rank, layer)
    if model.layer_mlp[layer] is not MlpKind.NONE and not hybrid:
        mlp(rank, layer, model.layer_mlp[layer])
        if model.body.mlp_scalars:
            rank.vector("mlp", model.body.mlp_scalars)
    norms = model.body.norms_per_layer + (model.body.first_layer_norms if layer == 0 else 0)
    if model.body.sublayer_norms:  # a no-op sublayer has no norm (DeciLM)
        norms = int(kind is not LayerKind.NONE) + int(model.layer_mlp[layer] is not MlpKind.NONE)
    rank.vector("norms", norm_width(model, model.hidden_size) * norms)
    if model.body.residual_scales:  # Zaya's ResidualScaling: half of them at layer 0 (models/zaya.py 96-111)
        scales = model.body.residual_scales // (2 if layer == 0 else 1)
        rank.vector("norms", scales * model.hidden_size)
    if model.body.attention_residuals:  # two norms and two 1 × hidden score projections (Kimi-K3), never quantized
        rank.vector("norms", 4 * model.hidden_size)
    if model.per_layer_input_size:  # Gemma-4's per-layer input: a gate and a projection back (replicated), a norm
        width, names = model.per_layer_input_size, f"model.layers.{layer}"
        rank.matrix("embedding", width, model.hidden_size, 1, (names + ".per_layer_input_gate",))
        rank.matrix("embedding", model.hidden_size, width, 1, (names + ".per_layer_projection",))
        rank.vector("norms", model.hidden_size)
    laurel_and_altup(rank, layer)
    hyper_connection_layer(rank)


def laurel_and_altup(rank: RankMatrices, layer: int) -> None:
    """Gemma-3n's laurel block and AltUp of one layer (BodyShape.laurel_rank / altup_inputs; vLLM 0.33.0 gemma3n.py,
    SGLang 0.5.23 gemma3n_causal.py: the same shapes and splits)."""
    m, h, names = rank.model, rank.model.hidden_size, f"model.layers.{layer}"
    if m.body.laurel_rank:
        rank.matrix("mlp", m.body.laurel_rank, h, rank.layout.tp, (names + ".laurel.linear_left",))
        rank.matrix("mlp", h, m.body.laurel_rank, rank.layout.tp, (names + ".laurel.linear_right",))
        rank.vector("norms", h)
    n = m.body.altup_inputs
    if n:  # the coefficients and router, ReplicatedLinear; router_norm; correct_output_scale in fp32
        rank.vector("norms", n * n + n * n * n + n * h + h)
        rank.vector("norms", h, dtype_bytes=4)


def norm_width(model: ModelSpec, width: int) -> int:
    """The values one norm over `width` holds: its weight (and bias), and a low-rank gate where the family gates its
    norms (GigaChat-3.5: gate_up_lowrank [rank, width] and gate_down_lowrank [width, rank])."""
    return (2 if model.body.norm_bias else 1) * width + 2 * model.body.norm_gate_rank * width


def per_layer_embeddings(rank: RankMatrices, plain: bool, projection_split: bool = False) -> None:
    """Gemma-4's per-layer embedding table (rows × layers × width) and the projection from hidden to it, with its
    norm: vocab-parallel and column-parallel (vLLM 0.33.0 gemma4.py), or whole where the engine builds the
    embedding plain (`plain`: SGLang 0.5.23's Gemma4TextScaledWordEmbedding and ReplicatedLinear)."""
    m, tp = rank.model, rank.layout.tp
    total = m.num_layers * m.per_layer_input_size
    rows = m.per_layer_vocab if plain else vocab_parallel_rows(m.per_layer_vocab, tp)
    rank.acc.add("embedding", rows * total, rows * total * m.dtype_bytes, 1 if plain else tp)
    split = tp if projection_split or not plain else 1  # SGLang's Gemma-3n: a plain table, a split projection
    rank.matrix("embedding", total, m.hidden_size, split, ("model.per_layer_model_projection",))
    rank.vector("norms", m.per_layer_input_size)


LATENT_PROBES = (".self_attn.q_a_proj", ".self_attn.q_b_proj", ".self_attn.kv_a_proj_with_mqa", ".self_attn.kv_b_proj",
                 ".self_attn.o_proj", ".self_attn.indexer.wq_b", ".self_attn.indexer.wk")  # fmt: skip


def layer_signature(model: ModelSpec, layer: int) -> tuple[Hashable, ...]:
    """What decides a layer's bytes: its kinds, and which of its modules the checkpoint spares."""
    kinds = (model.layer_attention[layer], model.layer_mlp[layer], model.geometry(layer), model.intermediate(layer),
             model.indexed(layer), model.compressed.ratios[layer] if model.compressed else None,
             model.moe is not None and layer < model.moe.hash_layers,
             layer == 0 and (model.body.first_layer_norms > 0 or model.body.residual_scales > 0),
             layer in model.cross_attention_layers)  # fmt: skip
    if not model.quant.excluded and not model.quant.mixed:
        return kinds
    prefix = f"model.layers.{layer}"
    probes = (".self_attn", ".self_attn.q_proj", ".linear_attn", ".linear_attn.in_proj_qkvz", ".linear_attn.in_proj_qkv",
              ".linear_attn.in_proj_z", ".linear_attn.in_proj_ba", ".linear_attn.out_proj", ".mixer", ".mixer.in_proj",
              ".mixer.out_proj", ".mixer.q_proj", ".mlp", ".mlp.down_proj", ".mlp.experts",
              ".mlp.experts.0.down_proj", ".mlp.shared_experts", ".mlp.shared_expert", ".mlp.shared_expert.down_proj",
              *(LATENT_PROBES if model.mla is not None else ()))  # fmt: skip
    return (*kinds, *(model.quant.format_of((prefix + probe,)) for probe in probes))


def mtp_weights(rank: RankMatrices, model: ModelSpec) -> None:
    """Next-n layers: the target's last decoder layer (its formats asked under the class's names, `mtp_names`) plus
    the projection that feeds it (2 × hidden → hidden). A plain bf16 `nn.Linear` whatever the checkpoint's
    quantization: DeepSeek's eh_proj in both engines (SGLang deepseek_nextn.py 0.5.13 :118 – 0.5.22 :101, a quantized
    ReplicatedLinear only under quark, not modelled; vLLM deepseek_mtp.py v0.10.2 :54 – v0.34.0 :84), SGLang's
    Qwen3-Next/3.5 fc (qwen3_5_mtp.py 0.5.14 :87); vLLM's Qwen3-Next/3.5 fc is split over TP and quantized as its
    release builds it (`StageParts.mtp_fc`, engines/vllm/mtp_build.py); the whole layer in the model dtype where the
    engine builds it so (`mtp_plain`). Five norms of `hidden`: the three around the projection and the layer's two."""
    before = {k: list(v) for k, v in rank.acc.parts.items()}
    parts, last = rank.parts, model.num_layers - 1
    fc = parts.mtp_fc if parts is not None else ""
    for index in range(model.mtp_layers):
        layer = rank.mtp_layer(last, index)
        attention(layer, last)
        mlp(layer, last, model.layer_mlp[last])
        module = ("mtp.fc",) if fc else (f"model.layers.{model.num_layers + index}.eh_proj",)
        shards, quantizable = (rank.layout.tp, fc == "split_quantized") if fc else (1, False)
        layer.matrix("mtp", model.hidden_size, 2 * model.hidden_size, shards, module, quantizable=quantizable)
        layer.vector("norms", 5 * model.hidden_size)
    moved = [0.0, 0.0]
    for name, (params, nbytes) in list(rank.acc.parts.items()):
        old = before.get(name, [0.0, 0.0])
        if name != "mtp":
            moved, rank.acc.parts[name] = [moved[0] + params - old[0], moved[1] + nbytes - old[1]], old
    rank.acc.add("mtp", moved[0], moved[1], 1, listed=True)  # its tensors listed as its matrices were added
