"""Zamba2's shared transformer blocks in the weights book (`ModelSpec.shared_block`, vLLM 0.33.0 zamba2.py).

The hybrid layers (full attention) run `blocks` shared transformer blocks in turn: each block's attention (qkv_proj
over the block's input, twice the hidden width, and o_proj) and gated MLP are held once, however many layers use
it; each hybrid layer holds its own LoRA adapters into the block (the MLP's gate_up, and q, k, v where
use_shared_attention_adapter) and a hidden × hidden projection back (`linear`, ReplicatedLinear). An adapter is
Zamba2LoRA: A ColumnParallelLinear(input, rank, gather_output) and B ColumnParallelLinear(rank, output), both split
over TP by their rows.
"""

from __future__ import annotations

from kvtop.domain.rank_matrices import RankMatrices


def hybrid_layer(rank: RankMatrices, layer: int) -> None:
    """One hybrid layer's own weights beside its Mamba2 mixer: the adapters into the shared block, the projection."""
    m, tp = rank.model, rank.layout.tp
    sb = m.shared_block
    assert sb is not None
    h, names = m.hidden_size, (f"model.layers.{layer}",)
    rank.matrix("attention", h, h, 1, (f"model.layers.{layer}.linear", *names))
    adapters = [(2 * m.intermediate_size, h)]  # gate_up_proj_adapter: hidden → rank → gate and up
    if sb.attention_adapters:  # linear_q/k/v_adapter: the block's input → rank → its attention width
        g = m.geometry(layer)
        adapters += [(g.heads * g.head_dim, sb.width)] * 3
    for out, into in adapters:
        rank.matrix("attention", sb.adapter_rank, into, tp, names)
        rank.matrix("attention", out, sb.adapter_rank, tp, names)


def shared_blocks(rank: RankMatrices, first_hybrid: int) -> None:
    """The shared blocks, each once: attention from the block's input width, the gated MLP, two RMSNorms (the
    input's over that width, pre_ff's over hidden)."""
    m, tp = rank.model, rank.layout.tp
    sb = m.shared_block
    assert sb is not None
    g, h, names = m.geometry(first_hybrid), m.hidden_size, ("model.shared_transformer",)
    q = g.heads * g.head_dim
    kv = rank.layout.kv_heads_per_rank(g.kv_heads) * g.head_dim * tp  # K and V, as the rank's heads over TP
    for _ in range(sb.blocks):
        rank.matrix("attention", q + 2 * kv, sb.width, tp, names)
        rank.matrix("attention", h, q, tp, names, row_scale_shards=1)
        rank.matrix("mlp", 2 * m.intermediate_size, h, tp, names)
        rank.matrix("mlp", h, m.intermediate_size, tp, names, row_scale_shards=1)
        rank.vector("norms", sb.width + h)
