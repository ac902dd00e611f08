"""The KV-cache scale scalars SGLang's attention modules hold for a quantized checkpoint (docs/engines/sglang.md
§20), as the stage parts the weights book reads (`StageParts.attention_scalars`, as vLLM's kv_scales.py).

k_scale and v_scale, fp32 scalars, on each RadixAttention built with the quant config
(`BaseKVCacheMethod.create_weights`, quantization/kv_cache.py, read at 0.5.23): DeepseekV2/V3/V32 (attn_mqa and
attn_mha, deepseek_v2.py), DeepseekV4 (attn_mqa, deepseek_v4.py), MiniMaxM2, Llama, MiMoV2 (mimo_v2.py) and NemotronH (its attention layers, nemotron_h.py) pass it (qwen3.py and most others pass none). An `fp8` checkpoint's
Fp8Config and a Quark checkpoint's QuarkConfig (quark/quark.py) always give the method; ModelOpt's NVFP4 config
too (a null kv_cache_quant_algo reads "auto"), ModelOpt's FP8 config only with a kv_cache_quant_algo
(modelopt_quant.py `from_config`), a compressed-tensors config only with a static per-tensor FP8 kv_cache_scheme
(CompressedTensorsKVCacheMethod; Laguna, models/laguna.py). Checked against the classes built on meta (docs/fidelity.md, reading A9 before
this rule); earlier releases are not checked, so the book's count stands for them.
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.weights_built import CHECKED_ERAS
from kvtop.domain.engines.sglang.weights_built import SCALE_FP32 as SCALE_BYTES
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import ModelSpec
from kvtop.domain.quant import QuantSpec

# SGLang's classes whose RadixAttention takes the quant config: RadixAttention modules a layer
# (0.5.23: GlmMoeDsaForCausalLM subclasses DeepseekV2ForCausalLM, glm4_moe.py; KimiK25 builds DeepseekV3's
# language model, kimi_k25.py; gemma4_causal.py Gemma4Attention and qwen3_5.py Qwen3_5AttentionDecoderLayer pass
# quant_config to their RadixAttention, on attention layers only; mimo_v2.py MiMoV2Attention on every layer,
# full and sliding, for both EntryClass classes)
KV_SCALED = {"DeepseekV2ForCausalLM": 2, "DeepseekV3ForCausalLM": 2, "DeepseekV32ForCausalLM": 2,
             "GlmMoeDsaForCausalLM": 2, "KimiK25ForConditionalGeneration": 2,
             "MiniMaxM2ForCausalLM": 1, "LlamaForCausalLM": 1,
             "Gemma4ForCausalLM": 1, "Gemma4ForConditionalGeneration": 1,
             "Qwen3_5ForCausalLM": 1, "Qwen3_5MoeForCausalLM": 1, "Qwen3_5ForConditionalGeneration": 1,
             "Qwen3_5MoeForConditionalGeneration": 1,
             "NemotronHForCausalLM": 1, "DeepseekV4ForCausalLM": 1, "LagunaForCausalLM": 1,
             "MiMoV2ForCausalLM": 1, "MiMoV2FlashForCausalLM": 1}  # fmt: skip (nemotron_h.py NemotronHAttention: 8 of Nemotron-3-Super's 88 layers)


def _kv_method(quant: QuantSpec) -> bool:
    """Whether the checkpoint's quant config gives a RadixAttention its KV cache method (k/v scales)."""
    if quant.scheme in ("fp8", "quark"):  # Fp8Config, QuarkConfig: QuarkKVCacheMethod on every RadixAttention
        return True
    if quant.scheme == "compressed-tensors":  # CompressedTensorsKVCacheMethod, for static per-tensor FP8 only
        return quant.kv_cache_quant_algo == "FP8"
    if quant.scheme == "modelopt":
        # MIXED_PRECISION too, with no KV algorithm stated: Qwen3.6-35B-A3B-NVFP4's 10 full-attention layers hold
        # k/v scales in the 0.5.23 meta build (the sweep's language_model 80 B above kvtop's without them)
        return quant.method in ("nvfp4", "mixed") or bool(quant.kv_cache_quant_algo)
    return False


def with_input_scale_width(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the width SGLang gives a mixed-precision checkpoint's W4A16 input_scale: fp32 (ModelOpt W4A16
    NVFP4), where vLLM's is the model dtype."""
    if not model.quant.mixed or not CHECKED_ERAS.at(version):
        return parts
    return parts.model_copy(update={"unused_input_scale_bytes": SCALE_BYTES})


def with_kv_scales(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the k/v scales this release's class holds on each attention layer of `model`."""
    modules = KV_SCALED.get(model.architecture, 0)
    if not modules or not _kv_method(model.quant) or not CHECKED_ERAS.at(version):
        return parts
    return parts.model_copy(update={"attention_scalars": modules * 2, "attention_scalar_bytes": SCALE_BYTES})
