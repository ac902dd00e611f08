"""DeepSeek-V4's weights beyond the generic book: its compressed attention layer.

As SGLang 0.5.23 builds them (models/deepseek_v4.py `MqaAttentionBase`, `Compressor`, `Indexer`,
`make_hc_mixing_params`, `make_hc_head_params`), checked against its meta-built parameters (benchmarks/
engine_diff `registry_sweep.py --params`, docs/engines/architectures.md):

- q and the one KV head's latent from one replicated projection (`wqkv_a`, hidden → q_lora + head_dim, fused by
  SGLANG_OPT_FUSE_WQA_WKV's default), q up through `wq_b` (column-parallel), o through `o_groups` grouped LoRAs
  (`wo_a` column-parallel, heads × head_dim ÷ groups → groups × o_lora; `wo_b` row-parallel back to hidden),
  RMSNorms on q_lora and head_dim, an fp32 sink per head (whole on every rank; vLLM 0.33.0: the rank's heads
  padded to 64 or 128, `StageParts.sink_padded_local_heads`);
- on a layer of ratio 4 or 128, a compressor: an fp32 position bias `ape` [ratio, coff × head_dim], a bf16 gate and
  KV projection `wkv_gate` [2 × coff × head_dim, hidden] (replicated, unquantized) and an fp32 norm of head_dim
  (vLLM 0.33.0: in the model dtype, `StageParts.compressor_norm_model_dtype`);
  coff is 2 on ratio-4 layers (their windows overlap), 1 on ratio-128 ones;
- on a ratio-4 layer, an indexer: `wq_b` (q_lora → index heads × index_head_dim, replicated, quantized), a bf16
  `weights_proj` (hidden → index heads) and its own ratio-4 compressor of index_head_dim.

Its hyper-connection mixers (`make_hc_mixing_params`, `make_hc_head_params`) are weight_hyper.py's, with comb rows:
the reader sets `BodyShape.hc_streams` from `hc_mult` (latent_rules.compressed).
"""

from __future__ import annotations

from collections.abc import Callable

from kvtop.domain.rank_matrices import RankMatrices

FP32 = 4


def _overlap(ratio: int) -> int:
    """The compressor's windows per compressed entry: ratio-4 layers overlap two (`Compressor.overlap`)."""
    return 2 if ratio == 4 else 1


def _compressor(
    rank: RankMatrices, ratio: int, width: int, named: Callable[[str], tuple[str, ...]], at: str
) -> None:
    coff = _overlap(ratio)
    rank.vector("attention", ratio * coff * width, dtype_bytes=FP32)  # ape
    rank.matrix(
        "attention", 2 * coff * width, rank.model.hidden_size, 1, named(f"{at}.wkv_gate"), quantizable=False
    )
    model_dtype = rank.parts is not None and rank.parts.compressor_norm_model_dtype
    rank.vector("norms", width, dtype_bytes=rank.model.dtype_bytes if model_dtype else FP32)


def compressed_attention(rank: RankMatrices, layer: int) -> None:
    """One DeepSeek-V4 attention layer on one rank (the module docstring)."""
    m, tp, h = rank.model, rank.layout.attn_tp, rank.model.hidden_size
    c = m.compressed
    assert c is not None
    heads, hd = m.num_attention_heads, m.head_dim
    at = f"model.layers.{layer}.self_attn"

    def named(module: str) -> tuple[str, ...]:
        return (f"{at}.{module}", at)

    sink = heads  # attn_sink: every head on every rank; vLLM: the rank's heads padded to 64 or 128
    if rank.parts is not None and rank.parts.sink_padded_local_heads:
        sink = 64 if heads // tp <= 64 else 128
    rank.vector("attention", sink, dtype_bytes=FP32)
    rank.matrix("attention", c.q_lora_rank + hd, h, 1, named("wqkv_a"))
    rank.vector("norms", c.q_lora_rank + hd)  # q_norm, kv_norm
    rank.matrix("attention", heads * hd, c.q_lora_rank, tp, named("wq_b"))
    rank.matrix("attention", c.o_groups * c.o_lora_rank, heads * hd // c.o_groups, tp, named("wo_a"))
    rank.matrix("attention", h, c.o_groups * c.o_lora_rank, tp, named("wo_b"), row_scale_shards=1)
    ratio = c.ratios[layer]
    if ratio:
        _compressor(rank, ratio, hd, named, "compressor")
    if ratio == 4:
        rank.matrix("attention", c.index_heads * c.index_head_dim, c.q_lora_rank, 1, named("indexer.wq_b"))
        rank.matrix("attention", c.index_heads, h, 1, named("indexer.weights_proj"), quantizable=False)
        _compressor(rank, 4, c.index_head_dim, named, "indexer.compressor")
