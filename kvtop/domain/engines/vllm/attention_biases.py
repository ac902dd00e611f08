"""Attention biases vLLM's classes build whatever the config says (docs/engines/vllm.md §3.8), as weights-book rows.

vLLM's PhiMoEAttention (models/phimoe.py, read in v0.13.0 and v0.33.0) builds qkv_proj and o_proj with bias=True
although PhiMoEConfig's attention_bias defaults to false (SGLang's follows the config): qkv_proj's bias split over TP
like its rows, o_proj's (a RowParallelLinear) whole on every rank.

vLLM's BailingAttention (models/bailing_moe.py, read in v0.13.0 and v0.33.0) builds its per-head q/k norms as
nn.LayerNorm(head_dim), weight and bias, unless the config states use_rmsnorm (`getattr(config, "use_rmsnorm",
False)`); the checkpoint's own class and SGLang 0.5.23 build RMSNorm, the book's weight only: the bias half is vLLM's.
A config stating use_rmsnorm false is read as one that states it (the book's RMSNorm): none at hand.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.weights import WeightRow

ALWAYS_BIASED: Mapping[str, str] = {
    "PhiMoEForCausalLM": "models/phimoe.py PhiMoEAttention: qkv_proj, o_proj bias=True (v0.13.0, v0.33.0)",
}


def attention_bias_rows(model: ModelSpec, layout: ParallelLayout, layers: range) -> tuple[WeightRow, ...]:
    """The biases of the stage's attention layers that the class builds and the config does not state."""
    source = ALWAYS_BIASED.get(model.architecture)
    if source is None or model.attention_bias or not layers:
        return ()
    params = 0
    for layer in layers:
        g = model.geometry(layer)
        qkv = (g.heads // layout.attn_tp + 2 * layout.kv_heads_per_rank(g.kv_heads)) * g.head_dim
        params += qkv + (0 if model.body.o_bias else model.hidden_size)
    return (WeightRow(component="attention_bias", params=params, bytes=params * model.dtype_bytes, shards=1,
                      bytes_per_param=float(model.dtype_bytes), note=f"attention biases vLLM builds ({source})"),)  # fmt: skip

# classes whose per-head q/k norms are LayerNorms (a bias beside the weight) where the config leaves use_rmsnorm
# unstated (the entry's engine_read_fields put it in ModelSpec.unstated_fields)
QK_LAYERNORM_UNLESS_RMS: Mapping[str, str] = {
    name: "models/bailing_moe.py BailingAttention: nn.LayerNorm(head_dim) unless use_rmsnorm (v0.13.0, v0.33.0)"
    for name in ("BailingMoeForCausalLM", "BailingMoeV2ForCausalLM")
} | {
    "SarvamMoEForCausalLM": "models/sarvam.py SarvamMoEForCausalLM(BailingMoeForCausalLM): bailing_moe.py's "
                            "BailingAttention, nn.LayerNorm(head_dim) unless use_rmsnorm (v0.33.0)",
}


def qk_norm_bias_rows(model: ModelSpec, layers: range) -> tuple[WeightRow, ...]:
    """The q/k LayerNorms' biases of the stage's layers (head_dim each, whole on every rank)."""
    source = QK_LAYERNORM_UNLESS_RMS.get(model.architecture)
    if source is None or not model.qk_norm or "use_rmsnorm" not in model.unstated_fields or not layers:
        return ()
    params = sum(2 * model.geometry(layer).head_dim for layer in layers)
    return (WeightRow(component="qk_norm_bias", params=params, bytes=params * model.dtype_bytes, shards=1,
                      bytes_per_param=float(model.dtype_bytes), note=f"q/k norm biases vLLM builds ({source})"),)  # fmt: skip
