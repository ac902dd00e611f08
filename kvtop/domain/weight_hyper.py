"""Hyper-connections' weights (`BodyShape.hc_streams`): the small fp32 mixers a model keeps beside its layers.

A model with n residual streams wraps each sub-block (attention, MLP) in a mixer: `hc_fn` [rows, n × hidden] reads the
streams and gives the pre gates (n: the sub-block's input) and post gates (n: how its output goes back), plus n × n
mixing rows where the streams also mix among themselves (`hc_comb`, mHC); `hc_base` [rows] and one `hc_scale` per
gate group. A head mixer merges the streams before the final norm: `hc_head_fn` [n, n × hidden], `hc_head_base` [n],
`hc_head_scale` [1]. All fp32, ReplicatedLinear or plain parameters: whole on every rank.

Hunyuan-V4 (iHC, no comb): vLLM 0.33.0 models/hy_v4/nvidia/hc.py HYV4HCPreLayer (hc_fn 2n rows, hc_scale [2],
hc_base [2n]) and HYV4HCHeadLayer, SGLang 0.5.23 models/hunyuan_v4.py the same shapes; HYV4DecoderLayer holds two
(hc_attn_layer, hc_mlp_layer). DeepSeek-V4 (mHC, comb rows; `hc_mult` streams, latent_rules.compressed): SGLang
0.5.23 models/deepseek_v4.py `make_hc_mixing_params` (fn [(2 + n) × n, n × hidden], base [(2 + n) × n], scale [3])
for `hc_attn` and `hc_ffn`, `make_hc_head_params` (fn [n, n × hidden], base [n], scale [1]); vLLM 0.33.0
models/deepseek_v4/nvidia/model.py the same shapes (`mix_hc`, `hc_head_fn`).
"""

from __future__ import annotations

from kvtop.domain.rank_matrices import RankMatrices

FP32 = 4
SITES_PER_LAYER = 2  # the attention and the MLP sub-block


def _mixer_params(streams: int, comb: bool, hidden: int) -> int:
    """One sub-block's mixer: hc_fn [rows, n × hidden], hc_base [rows], hc_scale [2, or 3 with comb rows]."""
    rows = 2 * streams + (streams * streams if comb else 0)
    return rows * streams * hidden + rows + (3 if comb else 2)


def hyper_connection_layer(rank: RankMatrices) -> None:
    """One layer's two mixers, fp32 and whole (the module docstring)."""
    body = rank.model.body
    if body.hc_streams:
        mixer = _mixer_params(body.hc_streams, body.hc_comb, rank.model.hidden_size)
        rank.vector("norms", SITES_PER_LAYER * mixer, dtype_bytes=FP32)
        rank.acc.notes["norms"] = f"with the hyper-connections' fp32 mixers ({body.hc_streams} streams)"


def hyper_connection_merge(rank: RankMatrices) -> None:
    """The head mixer merging the streams before the final norm (hc_head_fn, base, scale: fp32, whole)."""
    n = rank.model.body.hc_streams
    if n:
        rank.vector("norms", n * n * rank.model.hidden_size + n + 1, dtype_bytes=FP32)
