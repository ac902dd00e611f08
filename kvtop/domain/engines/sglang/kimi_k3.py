"""What SGLang's Kimi-K3 classes build their own way around the latent experts (docs/engines/sglang.md §20), as the
stage parts the weights book reads (`StageParts.unquantized`, `StageParts.expert_bias`).

- The latent projections in bf16: `KimiK3MoE.__init__` (0.5.23 srt/models/kimi_k3.py) builds
  `routed_expert_down_proj` and `routed_expert_up_proj` (ReplicatedLinear, hidden ↔ routed_expert_hidden_size) with
  `quant_config=None` unless the quant config says `supports_kimi_k3_quantized_latent_projections` (only ModelSlim's
  and the expert-pack configs do), where a compressed-tensors MXFP4 checkpoint's `Linear` target, which its ignore
  list does not spare, would quantize them (vLLM 0.33.0 passes its quant config, Mxfp4Config, which
  quantizes no linear: engines/vllm/kimi_k3.py).
- Expert biases: the same `__init__` swaps a compressed-tensors MXFP4 config for `Mxfp4Config` (off NPU), whose
  `Mxfp4MoEMethod.create_weights` (srt/layers/quantization/mxfp4.py) registers `w13_weight_bias` [E, 2 × I] and
  `w2_weight_bias` [E, latent] in bf16 wherever it is not ROCm (`create_bias = with_bias or not _is_hip`), though the
  checkpoint holds none. The meta build of moonshotai--Kimi-K3 at TP 1: 1,012,924,416 + 590,872,576 B over its 92
  MoE layers; at TP 2 w13's halves, w2's whole.

0.5.6.post2 has no Kimi-K3 class (srt/models holds kimi_linear.py only): releases before 0.5.23 keep the book's.
The MXFP4 method's padding (`Mxfp4MoEMethod.create_weights`: a rank's expert width to 128 under Marlin or SM100's
FlashInfer, 64 with triton_kernels, the input width to 256 under Marlin; ROCm's aiter the width to 256) is not read:
K3's widths (3,072 ÷ TP up to TP 8 = 384, the 3,584 latent) are already multiples of 128 and 256, so none pads on
CUDA; another latent MXFP4 model's might.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import ModelSpec

KIMI_K3_CLASSES = frozenset({"KimiK3ForConditionalGeneration", "KimiK3LinearForCausalLM"})
KIMI_K3_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.6.post2 has no kimi_k3.py; releases between not checked: the book's"),
    Era("0.5.23", True, "0.5.23 kimi_k3.py KimiK3MoE: latent projections quant_config=None; Mxfp4Config's "
                        "Mxfp4MoEMethod creates w13/w2 biases off ROCm"),
))  # fmt: skip


def with_kimi_k3_build(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with Kimi-K3's latent projections unquantized and its MXFP4 experts' biases (the module docstring)."""
    if model.architecture not in KIMI_K3_CLASSES or model.moe is None or not KIMI_K3_ERAS.at(version):
        return parts
    update: dict[str, object] = {}
    if model.moe.latent_size:
        update["unquantized"] = (*parts.unquantized, *(f".{name}" for name in model.moe.latent_modules))
    if model.quant.method == "mxfp4":
        update["expert_bias"] = True
    return parts.model_copy(update=update) if update else parts
