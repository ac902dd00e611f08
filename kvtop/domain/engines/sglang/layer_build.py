"""What SGLang's classes build on each decoder layer otherwise than the checkpoint and the architecture's entry say
(docs/engines/sglang.md §20), as the stage parts the weights book reads (`StageParts.unquantized`,
`StageParts.router_model_dtype`).

- DSA's indexer key projection: on CUDA, SGLang 0.5.23's `Indexer.__init__` (srt/layers/attention/dsa/
  dsa_indexer.py) fuses `wk` with `weights_proj` into one `wk_weights_proj` ReplicatedLinear of (index_head_dim +
  index_n_heads) × hidden built with `params_dtype=torch.bfloat16` and no quant config (deepseek_weight_loader.py
  loads an FP8 wk into it as bf16) where the indexer's rope is interleaved: `use_dsa_indexer_fusion = _is_cuda and
  not SGLANG_DISABLE_DSA_INDEXER_FUSION and not is_neox_style`, `deepseek_v2.py` passing `is_neox_style = not
  config.indexer_rope_interleave` (GLM-5's configs state true; DeepSeek-V3.2's state none, so its wk stays in the
  checkpoint's FP8 blocks). The fusion came with sgl-project/sglang PR 27705 and was narrowed to interleaved ropes
  by PR 30111 (mid-2026); the first release holding it is not pinned, so releases before 0.5.23 keep the book's.
- MiniMax-M3's router: `MiniMaxM3MoE.__init__` (srt/models/minimax_m3.py, 0.5.23) builds `gate` with
  `params_dtype=torch.bfloat16 if SGLANG_OPT_USE_BF16_ROUTER_GEMM else torch.float32`, the variable on by default
  (srt/environ.py `EnvBool(True)`), where the entry (vLLM's) keeps it fp32. Releases before 0.5.23 not checked.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import AttentionKind, ModelSpec

INDEXER_WK = "indexer.wk"  # the weights book's module name of DSA's index key projection
FUSED_INDEXER_ERAS: Eras[bool] = Eras((
    Era("", False, "releases before 0.5.23 not checked: the book's wk in the checkpoint's format stands"),
    Era("0.5.23", True, "0.5.23 dsa_indexer.py Indexer: wk_weights_proj = ReplicatedLinear(..., "
                        "params_dtype=torch.bfloat16) where not is_neox_style; first release not pinned"),
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
    """`parts` with the indexer's wk unquantized where this release fuses it (a quantized checkpoint's only) and
    the router in the model dtype where this release's class builds it so."""
    update: dict[str, object] = {}
    if model.quant.quantized and fuses_indexer_wk(model, version):
        update["unquantized"] = (*parts.unquantized, INDEXER_WK)
    if model.architecture in BF16_ROUTER_CLASSES and BF16_ROUTER_ERAS.at(version):
        update["router_model_dtype"] = True
    return parts.model_copy(update=update) if update else parts
