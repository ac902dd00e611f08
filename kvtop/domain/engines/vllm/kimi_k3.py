"""What vLLM's Kimi-K3 class builds its own way (docs/engines/vllm.md §3.8), as the stage parts the weights book
reads (`StageParts.unquantized`).

The latent projections in bf16: vLLM 0.33.0 rewrites a compressed-tensors `mxfp4-pack-quantized` checkpoint's
`quant_method` to "mxfp4" for KimiK3ForConditionalGeneration (model_executor/models/config.py
KimiK3ForConditionalGenerationConfig.verify_and_update_model_config), so the quant config is `Mxfp4Config`, whose
`get_quant_method` (layers/quantization/mxfp4.py) gives every LinearBase `UnquantizedLinearMethod` ("MXFP4 linear
layer is not implemented") and only the routed experts `Mxfp4MoEMethod`. KimiMoE's `routed_expert_down_proj` and
`routed_expert_up_proj` (kimi_k3/nvidia/model.py, ReplicatedLinear hidden ↔ routed_expert_hidden_size), which the
checkpoint's ignore list does not spare, are therefore built bf16, whole on every rank: the meta build of
moonshotai--Kimi-K3 at TP 1 holds [3584, 7168] and [7168, 3584] bf16 on each of its 92 MoE layers (4,726,980,608 B
each over the model). K3's other linear modules are spared by the checkpoint's own ignore list, so the book already
keeps them in the model dtype. 0.13.0 has no Kimi-K3 class (model_executor/models holds kimi_linear.py only).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import ModelSpec

# the classes vLLM 0.33.0's models/config.py registers KimiK3ForConditionalGenerationConfig for
KIMI_K3_CLASSES = frozenset({"KimiK3ForConditionalGeneration", "KimiK3MTPModel"})
MXFP4_REWRITE_ERAS: Eras[bool] = Eras((
    Era("", False, "0.13.0 has no Kimi-K3 class; releases between not checked: the checkpoint's quant config"),
    Era("0.33.0", True, "0.33.0 models/config.py KimiK3ForConditionalGenerationConfig: compressed-tensors "
                        "mxfp4-pack-quantized -> Mxfp4Config, every linear UnquantizedLinearMethod"),
))  # fmt: skip


def with_kimi_k3_build(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with Kimi-K3's latent projections unquantized where vLLM re-reads its MXFP4 checkpoint (above)."""
    quant = model.quant
    rewritten = quant.scheme == "compressed-tensors" and quant.method == "mxfp4"
    if model.architecture not in KIMI_K3_CLASSES or not rewritten or not MXFP4_REWRITE_ERAS.at(version):
        return parts
    if model.moe is None or not model.moe.latent_size:
        return parts
    latent = tuple(f".{name}" for name in model.moe.latent_modules)  # the entry's names (table_hybrid.py)
    return parts.model_copy(update={"unquantized": (*parts.unquantized, *latent)})
