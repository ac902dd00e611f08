"""What SGLang's classes build on each decoder layer otherwise than the checkpoint and the architecture's entry say
(docs/engines/sglang.md §20), as the stage parts the weights book reads (`StageParts.unquantized`,
`StageParts.router_model_dtype`, `StageParts.wna16_expert_scalars`, `StageParts.index_weights_bytes`, `StageParts.linear_shape_bytes`,
`StageParts.host_row_scales`, `StageParts.expert_bias_bytes`).

- DSA's indexer key projection: on CUDA, SGLang 0.5.23's `Indexer.__init__` (srt/layers/attention/dsa/
  dsa_indexer.py) fuses `wk` with `weights_proj` into one `wk_weights_proj` ReplicatedLinear of (index_head_dim +
  index_n_heads) × hidden built with `params_dtype=torch.bfloat16` and no quant config (deepseek_weight_loader.py
  loads an FP8 wk into it as bf16) where the indexer's rope is interleaved: `use_dsa_indexer_fusion = _is_cuda and
  not SGLANG_DISABLE_DSA_INDEXER_FUSION and not is_neox_style`, `deepseek_v2.py` passing `is_neox_style = not
  config.indexer_rope_interleave` (GLM-5's configs state true; DeepSeek-V3.2's state none, so its wk stays in the
  checkpoint's FP8 blocks). The fusion came with sgl-project/sglang PR 27705 and was narrowed to interleaved ropes
  by PR 30111 (mid-2026); the first release holding it is not pinned, so releases before 0.5.23 keep the book's.
  0.5.6.post2's `Indexer.__init__` (srt/layers/attention/nsa/nsa_indexer.py) builds wk with the quant config and
  `weights_proj` with `params_dtype=torch.float32` ("stored in bf16 ... fp32 for convenience"): index_n_heads ×
  hidden × 4 B a layer, where 0.5.23 builds it bf16; the releases between are not checked (0.5.6.post2's stands).
- MiniMax-M3's router: `MiniMaxM3MoE.__init__` (srt/models/minimax_m3.py, 0.5.23) builds `gate` with
  `params_dtype=torch.bfloat16 if SGLANG_OPT_USE_BF16_ROUTER_GEMM else torch.float32`, the variable on by default
  (srt/environ.py `EnvBool(True)`), where the entry (vLLM's) keeps it fp32. Releases before 0.5.23 not checked.
- A compressed-tensors weight-only int MoE's shape tensors: `CompressedTensorsWNA16MoE.create_weights`
  (srt/layers/quantization/compressed_tensors/schemes/compressed_tensors_wNa16_moe.py, 0.5.23; its Triton subclass
  on SM100 inherits it) registers `w13_weight_shape` and `w2_weight_shape`, [E, 2] each in the default dtype, and
  no post-loading step drops them (Kimi-K2.5: 60 MoE layers × 384 experts × 4 × 2 B = 184,320 B), as vLLM 0.33.0's
  WNA16 method does. Its act-order indices (`w13_weight_g_idx`, `w2_weight_g_idx` and their `_sort_indices`, int32)
  are emptied by the Marlin method's `process_weights_after_loading` where the checkpoint has no group act-order
  (Hopper and older); SGLang's Triton WNA16 MoE, the default on SM100 (`get_moe_scheme`), keeps them
  (weights_built.py's `wna16_act_order` row).

A compressed-tensors weight-only int (WNA16) linear module registers `weight_shape`, int64 [2] (16 B), whole on
every rank (0.5.23 compressed_tensors/schemes/compressed_tensors_wNa16.py `CompressedTensorsWNA16.create_weights`:
a BasevLLMParameter of 2 int64). The recon Llama-3.1-8B-Instruct-CT-w4a16 meta build (0.5.23): qkv_proj, o_proj,
gate_up_proj and down_proj each hold one, 2,048 B over 32 layers at TP 1 and on each rank at TP 2. Earlier releases
are not checked, so the book's count stands for them.

A bitsandbytes 8-bit (LLM.int8) checkpoint's per-row scales (SCB) are not on the GPU when the pools are sized: the
loader keeps the checkpoint's tensor, read on the CPU (`_quantized_8bit_generator` into `bnb_quant_state`,
srt/model_loader/loader.py; safetensors opened with device="cpu"), and `BitsAndBytesLinearMethod._apply_8bit_weight`
copies it to the GPU at the first forward (`quant_states[i].to(x.device)`, layers/quantization/bitsandbytes.py).
The recon Llama-3.1-8B-Instruct-bnb-8bit meta build at TP 1: int8 weights only, 9,081,200,640 B.
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.weights_built import CHECKED_ERAS
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import AttentionKind, ModelSpec

INDEXER_WK = "indexer.wk"  # the weights book's module name of DSA's index key projection
FUSED_INDEXER_ERAS: Eras[bool] = Eras((
    Era("", False, "releases before 0.5.23 not checked: the book's wk in the checkpoint's format stands"),
    Era("0.5.23", True, "0.5.23 dsa_indexer.py Indexer: wk_weights_proj = ReplicatedLinear(..., "
                        "params_dtype=torch.bfloat16) where not is_neox_style; first release not pinned"),
))  # fmt: skip

WNA16_SHAPE_SCALARS = 4  # w13_weight_shape and w2_weight_shape, [E, 2] each
WNA16_SHAPES_ERAS: Eras[bool] = Eras((
    Era("", False, "releases before 0.5.23 not checked: the book's count stands"),
    Era("0.5.23", True, "0.5.23 compressed_tensors_wNa16_moe.py CompressedTensorsWNA16MoE.create_weights: "
                        "w13_weight_shape, w2_weight_shape [E, 2]"),
))  # fmt: skip

FP32 = 4
INDEX_WEIGHTS_ERAS: Eras[int | None] = Eras((
    Era("", FP32, "read at 0.5.6.post2 (releases before 0.5.23 not checked: its rule stands): nsa_indexer.py "
                  "Indexer: weights_proj = ReplicatedLinear(..., params_dtype=torch.float32)"),
    Era("0.5.23", None, "0.5.23 dsa_indexer.py Indexer: weights_proj (or wk_weights_proj) params_dtype bfloat16; "
                        "first release not pinned"),
))  # fmt: skip

# An unquantized checkpoint's expert biases (gpt-oss's, where the model states expert_bias): UnquantizedFusedMoEMethod
# .create_weights builds w13_weight_bias [E, 2 × intermediate] and w2_weight_bias [E, hidden] in torch.float32 under
# `with_bias` (srt/layers/quantization/unquant.py, read at 0.5.6.post2 and 0.5.23), where the book (and vLLM 0.33.0,
# and SGLang's own Mxfp4MoEMethod) holds them in the model dtype
UNQUANT_EXPERT_BIAS_ERAS: Eras[int] = Eras((
    Era("", FP32, "unquant.py UnquantizedFusedMoEMethod.create_weights: w13/w2_weight_bias dtype=torch.float32 "
                  "(read at 0.5.6.post2 and 0.5.23)"),
))  # fmt: skip

BF16_ROUTER_CLASSES = frozenset({"MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"})
BF16_ROUTER_ERAS: Eras[bool] = Eras((
    Era("", False, "releases before 0.5.23 not checked: the entry's fp32 router stands"),
    Era("0.5.23", True, "0.5.23 minimax_m3.py MiniMaxM3MoE: gate params_dtype bfloat16 under "
                        "SGLANG_OPT_USE_BF16_ROUTER_GEMM (default True)"),
))  # fmt: skip


def fuses_indexer_wk(model: ModelSpec, version: ResolvedVersion) -> bool:
    """Whether this release builds the indexer's wk in bf16, fused with weights_proj (the module's docstring)."""
    return (
        model.attention_kind is AttentionKind.DSA
        and model.dsa_index_rope_interleaved
        and FUSED_INDEXER_ERAS.at(version)
    )


def with_layer_build(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the indexer's wk unquantized where this release fuses it (a quantized checkpoint's only), the
    router in the model dtype where this release's class builds it so, a WNA16 MoE's shape tensors, and the
    indexer's fp32 weights_proj of releases before 0.5.23."""
    update: dict[str, object] = {}
    if model.quant.quantized and fuses_indexer_wk(model, version):
        update["unquantized"] = (*parts.unquantized, INDEXER_WK)
    if model.architecture in BF16_ROUTER_CLASSES and BF16_ROUTER_ERAS.at(version):
        update["router_model_dtype"] = True
    if model.attention_kind is AttentionKind.DSA and INDEX_WEIGHTS_ERAS.at(version) is not None:
        update["index_weights_bytes"] = INDEX_WEIGHTS_ERAS.at(version)
    if model.moe is not None and model.moe.expert_bias and not model.quant.quantized:
        update["expert_bias_bytes"] = UNQUANT_EXPERT_BIAS_ERAS.at(version)
    if model.moe is not None and model.quant.weight_only_int and WNA16_SHAPES_ERAS.at(version):
        update["wna16_expert_scalars"] = WNA16_SHAPE_SCALARS
    return parts.model_copy(update=update) if update else parts

WNA16_SHAPE_BYTES = 2 * 8  # weight_shape: torch.empty(2, dtype=torch.int64)


def with_linear_shapes(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the weight_shape each WNA16 linear module of `model` holds in this release."""
    if not model.quant.weight_only_int or not CHECKED_ERAS.at(version):
        return parts
    return parts.model_copy(update={"linear_shape_bytes": WNA16_SHAPE_BYTES})


def with_host_scales(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with a bitsandbytes 8-bit checkpoint's row scales left on the host in this release."""
    quant = model.quant
    if quant.scheme != "bitsandbytes" or quant.weight_bits != 8 or not CHECKED_ERAS.at(version):
        return parts
    return parts.model_copy(update={"host_row_scales": True})
