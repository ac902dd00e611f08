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


def with_layer_build(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with what this release's classes add to each layer of `model` (the model as served)."""
    unquantized: tuple[str, ...] = ()
    if model.attention_kind is AttentionKind.DSA and model.quant.quantized and INDEXER_WK_UNQUANTIZED_ERAS.at(version):
        unquantized = (INDEXER_WK,)
    scalars = attention_scalars(model, version)
    if not scalars and not unquantized:
        return parts
    return parts.model_copy(update={"attention_scalars": scalars, "unquantized": unquantized})
