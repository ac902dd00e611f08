"""What vLLM's classes build on each decoder layer other than the checkpoint's tensors (docs/engines/vllm.md §3.8),
as the stage parts the weights book reads (`StageParts.attention_scalars`, `StageParts.unquantized`).

- The KV-cache scale scalars of a quantized checkpoint's attention layers (kv_scales.py).
- DeepSeek sparse attention's indexer: v0.33.0 fuses wk with weights_proj into one MergedColumnParallelLinear built
  with `quant_config=None` ("FP8 wk weights are upcasted to BF16 during loading to maintain fusion",
  Indexer.__init__, vllm/model_executor/models/deepseek_v2.py), so wk is index_head_dim × hidden in the model dtype
  on every indexed layer whatever the checkpoint stores; v0.13.0 builds wk as a ReplicatedLinear with the
  checkpoint's quant_config (FP8 blocks in DeepSeek-V3.2's). The release between that fused them is not pinned.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.kv_scales import attention_scalars
from kvtop.domain.layout import StageParts
from kvtop.domain.model import AttentionKind, ModelSpec

INDEXER_WK = "indexer.wk"  # the weights book's module name of DSA's index key projection
INDEXER_WK_UNQUANTIZED_ERAS: Eras[bool] = Eras((
    Era("", False, "read at v0.13.0 (other releases before 0.33.0 not checked: v0.13.0's rule stands): "
        "deepseek_v2.py Indexer: wk = ReplicatedLinear(..., quant_config=quant_config)"),
    Era("0.33.0", True, "v0.33.0 deepseek_v2.py Indexer: wk_weights_proj = MergedColumnParallelLinear(..., "
                        "quant_config=None); first release not pinned"),
))  # fmt: skip


# compressed-tensors WNA16 experts' w13_weight_shape and w2_weight_shape, [E, 2] each in the default dtype
# (compressed_tensors_moe_wna16.py CompressedTensorsWNA16MoEMethod.create_weights, chosen on CUDA for every
# weight-only int group/channel MoE): Kimi-K2.5's 60 MoE layers × 384 experts × 4 × 2 B = 184,320 B on the meta build
WNA16_EXPERT_SCALARS_ERAS: Eras[int] = Eras((
    Era("", 0, "releases before 0.33.0 not checked: the book's count stands"),
    Era("0.33.0", 4, "v0.33.0 compressed_tensors_moe_wna16.py: w13_weight_shape, w2_weight_shape [E, 2]"),
))  # fmt: skip


def with_layer_build(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with what this release's classes add to each layer of `model` (the model as served)."""
    unquantized: tuple[str, ...] = ()
    if model.attention_kind is AttentionKind.DSA and model.quant.quantized and INDEXER_WK_UNQUANTIZED_ERAS.at(version):
        unquantized = (INDEXER_WK,)
    scalars = attention_scalars(model, version)
    wna16 = WNA16_EXPERT_SCALARS_ERAS.at(version) if model.moe is not None and model.quant.weight_only_int else 0
    if not scalars and not unquantized and not wna16:
        return parts
    return parts.model_copy(update={"attention_scalars": scalars, "unquantized": unquantized,
                                    "wna16_expert_scalars": wna16})  # fmt: skip
