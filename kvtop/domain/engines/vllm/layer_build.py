"""What vLLM's classes build on each decoder layer other than the checkpoint's tensors (docs/engines/vllm.md §3.8),
as the stage parts the weights book reads (`StageParts.attention_scalars`, `StageParts.unquantized`).

- The KV-cache scale scalars of a quantized checkpoint's attention layers (kv_scales.py).
- A compressed-tensors weight-only int (WNA16) linear module's `weight_shape`, int64 [2] (16 B), whole on every
  rank (compressed_tensors_wNa16.py CompressedTensorsWNA16.create_weights: a BasevLLMParameter of 2 int64);
  recon Llama-3.1-8B-Instruct-CT-w4a16 (v0.33.0 meta build): qkv_proj, o_proj, gate_up_proj and down_proj each
  hold one, 2,048 B over 32 layers at TP 1 and on each rank at TP 2.
- A GPTQ MoE's experts' zero points (v0.13.0 gptq_marlin.py `GPTQMarlinMoEMethod.create_weights`: the same shapes
  in the model dtype, kept; v0.33.0 auto_gptq.py `AutoGPTQMoEMethod.create_weights`: w13_qzeros
  [E, hidden ÷ group, 2 × moe_intermediate ÷ 8] and w2_qzeros [E, moe_intermediate ÷ group, hidden ÷ 8] int32 for
  every GPTQ checkpoint, symmetric or not; `process_weights_after_loading` transposes them and `replace_or_register`
  keeps them): Qwen3-30B-A3B-GPTQ-Int4 (sym) 48 × (128 × 16 × 192 + 128 × 6 × 256) × 4 B = 113,246,208 B at TP 1.
  The linear layers' symmetric qzeros are kept where Machete serves them (compute capability 9.0) and emptied by
  Marlin elsewhere: the GPU's, so a `weights_built` row (gptq_linear.py), not these stage parts; the experts'
  biases the checkpoint does not hold are not booked (`_loaded_expert_biases`).
- DeepSeek sparse attention's indexer: v0.33.0 fuses wk with weights_proj into one MergedColumnParallelLinear built
  with `quant_config=None` ("FP8 wk weights are upcasted to BF16 during loading to maintain fusion",
  Indexer.__init__, vllm/model_executor/models/deepseek_v2.py), so wk is index_head_dim × hidden in the model dtype
  on every indexed layer whatever the checkpoint stores; v0.13.0 builds wk as a ReplicatedLinear with the
  checkpoint's quant_config (FP8 blocks in DeepSeek-V3.2's); fused from v0.20.0 (deepseek_v2.py:641-645).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.kv_scales import (
    attention_scalars,
    ct_attention_scalars,
    scalars_unindexed_only,
)
from kvtop.domain.layout import StageParts
from kvtop.domain.model import AttentionKind, ModelSpec

FP32 = 4
INDEXER_WK = "indexer.wk"  # the weights book's module name of DSA's index key projection
INDEXER_WK_UNQUANTIZED_ERAS: Eras[bool] = Eras((
    Era("", False, "read at v0.13.0, through v0.19.1: "
        "deepseek_v2.py Indexer: wk = ReplicatedLinear(..., quant_config=quant_config)"),
    Era("0.20.0", True, "first in v0.20.0: deepseek_v2.py:641-645 Indexer: wk_weights_proj = "
                        "MergedColumnParallelLinear(..., quant_config=None); absent from v0.19.1 (read at v0.33.0 too)"),
))  # fmt: skip


# compressed-tensors WNA16 experts' w13_weight_shape and w2_weight_shape, [E, 2] each in the default dtype
# (compressed_tensors_moe_wna16.py CompressedTensorsWNA16MoEMethod.create_weights, chosen on CUDA for every
# weight-only int group/channel MoE): Kimi-K2.5's 60 MoE layers × 384 experts × 4 × 2 B = 184,320 B on the meta build
WNA16_EXPERT_SCALARS_ERAS: Eras[int] = Eras((
    Era("", 0, "releases before 0.33.0 not checked: the book's count stands"),
    Era("0.33.0", 4, "v0.33.0 compressed_tensors_moe_wna16.py: w13_weight_shape, w2_weight_shape [E, 2]"),
))  # fmt: skip


# CompressedTensorsWNA16's weight_shape on each linear module: int64 [2]
WNA16_LINEAR_SHAPE_ERAS: Eras[int] = Eras((
    Era("", 0, "releases before 0.13.0 not checked: the book's count stands"),
    Era("0.13.0", 16, "read at v0.13.0 and v0.33.0 (releases between not checked): compressed_tensors_wNa16.py "
                      "weight_shape = BasevLLMParameter(data=torch.empty(2, dtype=torch.int64))"),
))  # fmt: skip


# the experts' qzeros created and kept for symmetric GPTQ checkpoints too: the word they are packed in
GPTQ_EXPERT_ZEROS_ERAS: Eras[str | None] = Eras((
    Era("", None, "releases before 0.13.0 not checked: the book's count (no zeros for a symmetric checkpoint)"),
    Era("0.13.0", "model", "read at v0.13.0: gptq_marlin.py GPTQMarlinMoEMethod.create_weights: w13_qzeros, "
                           "w2_qzeros dtype=params_dtype, kept (v0.22.0-v0.26.0 auto_gptq.py alike)"),
    Era("0.27.0", "int32", "first in v0.27.0: auto_gptq.py:585-594 AutoGPTQMoEMethod.create_weights: w13_qzeros, "
                           "w2_qzeros int32 (v0.26.0 :581 params_dtype); process_weights_after_loading keeps them "
                           "(replace_or_register, v0.27.0 and v0.33.0)"),
))  # fmt: skip
GPTQ_SCHEMES = ("gptq", "gptq_marlin")
# A block-quantized checkpoint whose q|k|v is fused in K|V chunks (MiMo-V2.5's attention_projection_layout
# fused_qkv): MiMoV2Attention builds qkv_proj as a MergedColumnParallelLinear of [heads × head_dim, chunks ×
# kv_chunk_rows], each chunk's K|V rows padded to whole 128-row blocks where a rank holds several chunks and the
# rows share a block (v0.33.0 models/mimo_v2.py _fused_qkv_kv_chunk_rows; chunks = config.num_key_value_heads)
FUSED_QKV_PAD_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.33.0"),
    Era("0.33.0", True, "first in v0.33.0: mimo_v2.py:264, :525 MiMoV2Attention: _fused_qkv_kv_chunk_rows (absent "
        "from v0.32.0's mimo_v2.py)"),
))  # fmt: skip


def with_layer_build(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with what this release's classes add to each layer of `model` (the model as served)."""
    unquantized: tuple[str, ...] = ()
    if model.attention_kind is AttentionKind.DSA and model.quant.quantized and INDEXER_WK_UNQUANTIZED_ERAS.at(version):
        unquantized = (INDEXER_WK,)
    scalars, scalar_bytes, zero_points = attention_scalars(model, version), None, 0
    ct_scalars = ct_attention_scalars(model, version)
    if ct_scalars is not None:
        (scalars, zero_points), scalar_bytes = ct_scalars, FP32
    wna16 = WNA16_EXPERT_SCALARS_ERAS.at(version) if model.moe is not None and model.quant.weight_only_int else 0
    shape_bytes = WNA16_LINEAR_SHAPE_ERAS.at(version) if model.quant.weight_only_int else 0
    gptq_moe = model.moe is not None and model.quant.scheme in GPTQ_SCHEMES
    zeros_word = GPTQ_EXPERT_ZEROS_ERAS.at(version) if gptq_moe else None
    gptq_zeros = {None: 0, "int32": 32, "model": model.dtype_bytes * 8}[zeros_word]
    dsv4 = dsv4_parts(model, version)
    fused = bool(model.body.fused_qkv_chunks) and model.quant.block is not None and FUSED_QKV_PAD_ERAS.at(version)
    if not fused and not scalars and not unquantized and not wna16 and not shape_bytes and not gptq_zeros and not dsv4:
        return parts
    return parts.model_copy(update={**dsv4, "attention_scalars": scalars, "attention_scalar_bytes": scalar_bytes,
                                    "attention_scalars_unindexed_only": scalars_unindexed_only(model),
                                    "fused_qkv_padded": fused,
                                    "attention_zero_points": zero_points, "unquantized": unquantized,
                                    "wna16_expert_scalars": wna16, "linear_shape_bytes": shape_bytes,
                                    "expert_zero_word_bits": gptq_zeros})  # fmt: skip


DSV4_PARTS_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.33.0"),
    Era("0.33.0", True, "v0.33.0 wheel: models/deepseek_v4/quant_config.py DeepseekV4FP8Config.is_scale_e8m0, "
        "attention.py / compressor.py RMSNorm; engine-diff --params of DeepSeek-V4-Flash/-Pro (and NVFP4)"),
))  # fmt: skip


DSV4_FP8_METHODS = ("fp8", "deepseek_v4_fp8")  # quant_config.py DeepseekV4FP8Config.override_quantization_method
# DeepSeek-V4's modules as v0.33.0 names them where a compressed-tensors checkpoint's targets are matched
# (models/deepseek_v4/attention.py: `attn.fused_wqa_wkv`, `attn.wq_b`, `attn.wo_a`, `attn.wo_b`, `attn.indexer.wq_b`;
# nvidia/model.py: `ffn.shared_experts.gate_up_proj` / `down_proj`, and the routed experts' FusedMoE asked as
# `ffn.experts.0.w1/w3/w2`, its ckpt_names, by CompressedTensorsMoEMethod.get_moe_method)
DSV4_TARGET_NAMES = ((".self_attn.wqkv_a", ".attn.fused_wqa_wkv"), (".self_attn", ".attn"),
                     (".mlp.experts.0.down_proj", ".ffn.experts.0.w2"),
                     (".mlp.shared_experts", ".ffn.shared_experts.down_proj"), (".mlp", ".ffn"))  # fmt: skip


def dsv4_parts(model: ModelSpec, version: ResolvedVersion) -> dict[str, object]:
    """DeepSeek-V4 as vLLM builds it (docs/engines/vllm.md §4.7): an `fp8` checkpoint is served by
    DeepseekV4FP8Config, whose 128 × 128 block scales are float8_e8m0fnu (1 B) where the config's `expert_dtype`
    is "fp4" (its default; "fp8", Flash-Base, keeps fp32); the compressors' norms are RMSNorms in the model dtype;
    the attention sink holds the rank's q heads padded to 64 or 128 (nvidia/flashmla.py get_padded_num_q_heads)."""
    c = model.compressed
    if c is None or not DSV4_PARTS_ERAS.at(version):
        return {}
    # only a `quant_method: fp8` checkpoint (override_quantization_method): compressed-tensors FP8 keeps fp32 scales
    e8m0 = c.experts_fp4 and model.quant.method == "fp8" and model.quant.scheme in DSV4_FP8_METHODS
    return {"compressor_norm_model_dtype": True, "block_scale_bytes": 1 if e8m0 else None,
            "sink_padded_local_heads": True, "target_names": DSV4_TARGET_NAMES,
            "targets_read": True}  # fmt: skip
