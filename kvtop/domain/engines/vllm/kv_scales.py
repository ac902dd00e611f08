"""Which attention layers vLLM gives a KV-cache quant method (docs/engines/vllm.md §3.8), and what follows.

`_init_kv_cache_quant` (v0.33.0 vllm/model_executor/layers/attention/attention.py; v0.13.0
vllm/attention/layer.py) asks the checkpoint's quantization config for the attention layer's method; where it is
a `BaseKVCacheMethod`:
- `create_weights` registers four scalar parameters on the layer, q_scale, k_scale, v_scale and prob_scale
  (quantization/kv_cache.py; `torch.tensor(-1.0)` built under the model's default dtype: 2 B each in bf16),
  kept after loading: 8 B a bf16 layer the checkpoint does not count;
- `--kv-cache-dtype fp8_e5m2` raises "fp8_e5m2 kv-cache is not supported with fp8 checkpoints." (v0.33.0 spares a
  compressed-tensors checkpoint without a kv_cache_scheme).

Which configs return one, read from both wheels' `get_quant_method`:
- Fp8Config (quant_method fp8, and `--quantization fp8` at load): `Attention` only (MLAAttention is not one);
- ModelOpt FP8 / NVFP4 (ModelOptQuantConfigBase): v0.13.0 `Attention` only; v0.33.0 `(Attention, MLAAttention)`;
  a checkpoint's `quant_method: mxfp8` is ModelOptMxFp8Config (v0.33.0; MiniMax-M3-MXFP8's meta build: q/k/v/prob_scale
  on its 3 full-attention layers, 24 B);
  ModelOpt MIXED_PRECISION (v0.33.0): `Attention` only where the checkpoint names a KV algorithm;
- compressed-tensors and Quark: `Attention` only.
AWQ, GPTQ, MXFP4, bitsandbytes and FBGEMM FP8 give the attention layer none.

compressed-tensors' own method (v0.33.0 `CompressedTensorsKVCacheMethod.create_weights`, compressed_tensors.py)
overrides the four: q_scale, k_scale and v_scale in fp32 and q/k/v_zero_point in the default dtype, one value each
(a kv_cache_scheme of strategy `attn_head` gives each the layer's KV heads: not modelled, no such checkpoint at
hand): 18 B a bf16 layer (the recon Llama-3.1-8B CT meta build: 576 B over 32 layers).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.model import ModelSpec

SCALARS = 4  # q_scale, k_scale, v_scale, prob_scale
SOURCE = "BaseKVCacheMethod.create_weights (vllm/model_executor/layers/quantization/kv_cache.py)"
E5M2_SOURCE = "_init_kv_cache_quant (vllm/model_executor/layers/attention/attention.py; v0.13.0 attention/layer.py)"

# ModelOpt's KV-cache method on MLA layers: v0.13.0's ModelOptQuantConfigBase.get_quant_method tests `Attention`
# only; `(Attention, MLAAttention)` from v0.17.0 (modelopt.py:176; v0.16.0 :182 Attention only)
MODELOPT_MLA_SCALES_ERAS: Eras[bool] = Eras((
    Era("", False, "read at v0.13.0, through v0.16.0: modelopt.py "
        "ModelOptQuantConfigBase.get_quant_method: isinstance(layer, Attention)"),
    Era("0.17.0", True, "first in v0.17.0: modelopt.py:176 isinstance(layer, (Attention, MLAAttention)) (v0.16.0 "
        ":182 Attention only)"),
))
# compressed-tensors without a kv_cache_scheme keeps fp8_e5m2 from v0.24.0; v0.13.0-v0.23.0 refuse every one
CT_E5M2_UNSTATED_REFUSED_ERAS: Eras[bool] = Eras((
    Era("", True, "read at v0.13.0, through v0.23.0: "
        "attention/layer.py: any BaseKVCacheMethod refuses fp8_e5m2"),
    Era("0.24.0", False, "first in v0.24.0: layers/attention/attention.py:170-182 CompressedTensorsKVCacheMethod "
        "without kv_cache_scheme keeps fp8_e5m2 (v0.23.0 refuses every BaseKVCacheMethod)"),
))
# CompressedTensorsKVCacheMethod's own create_weights: (fp32 scales, zero points) a layer; None: the base method's
CT_KV_SCALARS_ERAS: Eras[tuple[int, int] | None] = Eras((
    Era("", None, "v0.13.0 and v0.14.0: CompressedTensorsKVCacheMethod has no create_weights of its own (the base "
                  "method's four scalars)"),
    Era("0.15.0", (3, 3), "first in v0.15.0: compressed_tensors.py:1000 CompressedTensorsKVCacheMethod.create_weights: "
                          "q/k/v_scale fp32, q/k/v_zero_point default dtype (the same at v0.33.0 :1144)"),
))  # fmt: skip
_PLAIN_ONLY = ("fp8", "compressed-tensors", "quark")  # schemes whose config gives `Attention` alone a method
# Classes whose indexed layers attend through a class of their own, no `Attention`: v0.33.0
# models/minimax_m3/nvidia/model.py MiniMaxM3SparseAttention (AttentionLayerBase; set_default_quant_scales registers
# its scales as buffers), MiniMaxM3Attention (an `Attention`) on the layers sparse_attention_config leaves plain
# (MiniMax-M3-MXFP8's meta build: q/k/v/prob_scale on its 3 plain layers only, 24 B)
OWN_SPARSE_ATTENTION = frozenset({"MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"})


def has_kv_cache_method(model: ModelSpec, version: ResolvedVersion) -> bool:
    """Whether vLLM gives this model's attention layers a KV-cache quant method (the model as served)."""
    quant = model.quant
    if not quant.quantized or model.compressed is not None:  # DeepSeek-V4's DeepseekV4Attention is no `Attention`
        return False  # (v0.33.0 --params of DeepSeek-V4-Flash: no q/k/v/prob_scale)
    if quant.scheme in ("modelopt", "mxfp8"):  # mxfp8: ModelOptMxFp8Config, a ModelOptQuantConfigBase
        if quant.method == "mixed":
            return model.mla is None and bool(quant.kv_cache_quant_algo)
        return model.mla is None or MODELOPT_MLA_SCALES_ERAS.at(version)
    return quant.scheme in _PLAIN_ONLY and model.mla is None


def attention_scalars(model: ModelSpec, version: ResolvedVersion) -> int:
    """The scalar parameters vLLM registers on each attention layer beside the checkpoint's tensors."""
    return SCALARS if has_kv_cache_method(model, version) else 0


def scalars_unindexed_only(model: ModelSpec) -> bool:
    """Whether only the layers without an indexer hold `attention_scalars` (the indexed ones are no `Attention`)."""
    return model.architecture in OWN_SPARSE_ATTENTION


def ct_attention_scalars(model: ModelSpec, version: ResolvedVersion) -> tuple[int, int] | None:
    """compressed-tensors' fp32 scales and default-dtype zero points on each attention layer, where this release's
    CompressedTensorsKVCacheMethod builds its own; None: the base method's `attention_scalars`."""
    if model.quant.scheme != "compressed-tensors" or not has_kv_cache_method(model, version):
        return None
    return CT_KV_SCALARS_ERAS.at(version)


def refuses_e5m2(model: ModelSpec, version: ResolvedVersion) -> bool:
    """Whether `--kv-cache-dtype fp8_e5m2` stops this model's launch at its attention layers."""
    if not has_kv_cache_method(model, version):
        return False
    quant = model.quant
    return quant.scheme != "compressed-tensors" or quant.kv_scheme_stated or CT_E5M2_UNSTATED_REFUSED_ERAS.at(version)
