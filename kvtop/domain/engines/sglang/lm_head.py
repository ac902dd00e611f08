"""Where SGLang quantizes the LM head as the checkpoint's linear layers (docs/engines/sglang.md §20).

ModelOpt's FP8 and NVFP4 configs give a `ParallelLMHead` the same linear method as the decoder's matrices unless
`exclude_modules` names it (`ModelOptQuantConfig._get_quant_method`, srt/layers/quantization/modelopt_quant.py,
read at 0.5.23), and most classes build their head with the quant config. So an hf_quant_config.json that
excludes nothing (Nemotron-3-Super-120B-A12B-FP8's) gets an FP8 head with its fp32 weight and input scales,
where the checkpoint's own head is bf16. The other schemes quantize a head only where the checkpoint names it
(AWQ's lm_head_quantized, compressed-tensors' lm_head target), which the book already reads; a MIXED_PRECISION
checkpoint lists its quantized modules (the book's `mixed`). Checked against NemotronH built on the meta device
(docs/fidelity.md, reading A17 before this rule); earlier releases are not checked, so the book's head stands.
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.weights_built import CHECKED_ERAS
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import ModelSpec

QUANTIZED_HEAD_METHODS = frozenset({"fp8", "nvfp4"})  # ModelOptFp8Config, ModelOptFp4Config (an NVFP4 checkpoint)
# SGLang 0.5.23's classes that build ParallelLMHead without the quant config (or with None): their head stays in
# the model dtype whatever the checkpoint (models/<file>.py, read at 0.5.23)
HEAD_WITHOUT_QUANT = frozenset({
    "ChatGLMModel", "DbrxForCausalLM", "ExaoneForCausalLM", "FalconMambaForCausalLM", "Grok1ForCausalLM",
    "Grok1ModelForCausalLM", "InternLM2ForCausalLM", "Mamba2ForCausalLM", "MiniCPMForCausalLM",
    "MiniCPMSALAForCausalLM", "MiniCPM3ForCausalLM", "MiniMaxM2ForCausalLM", "MixtralForCausalLM",
    "QuantMixtralForCausalLM", "OPTForCausalLM", "QWenLMHeadModel", "StableLmForCausalLM", "XverseForCausalLM",
    "ZayaForCausalLM",
})  # fmt: skip


def quantizes_head(model: ModelSpec, version: ResolvedVersion) -> bool:
    """Whether this release's class for `model` holds its LM head in the checkpoint's ModelOpt format."""
    quant = model.quant
    if quant.scheme != "modelopt" or quant.mixed or quant.method not in QUANTIZED_HEAD_METHODS:
        return False
    spared = model.architecture in HEAD_WITHOUT_QUANT or quant.spares(("lm_head",))
    return not spared and CHECKED_ERAS.at(version)


def with_quantized_head(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the LM head in the checkpoint's format where this release quantizes it."""
    if not parts.lm_head or not quantizes_head(model, version):
        return parts
    return parts.model_copy(update={"lm_head_quantized": True})
