"""vLLM's SigLIP vision tower under `--quantization fp8` at load: its attention linears are quantized, its MLP only
where its widths divide by 64 (docs/engines/vllm.md §3, "SigLIP's attention under online FP8").

Read in the wheels of v0.8.0, v0.9.1 and v0.34.0 (models/siglip.py, gemma3_mm.py, layers/quantization/fp8.py):
- the classes that build siglip.py's tower pass the launch's quant config to it (`SiglipVisionModel(config.
  vision_config, quant_config, …)`: gemma3_mm.py:400-401 at v0.8.0, :485-486 at v0.9.1, :555-557 at v0.34.0);
- `SiglipAttention` builds qkv_proj (QKVParallelLinear) and out_proj (RowParallelLinear) with it (siglip.py:166,
  :173 at v0.9.1; :358-370 at v0.34.0), and `Fp8Config.get_quant_method` gives every LinearBase the FP8 method
  unless the layer is in `ignored_layers`, which an online config leaves empty (fp8.py:118-130 at v0.9.1): FP8
  weights, 1 B each;
- `SiglipMLP` passes it to fc1 / fc2 only where hidden_size and intermediate_size divide by 64 (or for
  bitsandbytes / torchao): siglip.py:217-218 at v0.9.1, :422-429 at v0.34.0. Gemma-3's 1,152 × 4,304 MLP does not
  (4,304 = 67 × 64 + 16): it stays in the model's dtype.
kvtop's weights book counts the tower in the model's dtype: the attention's FP8 is named, not modelled (Gemma-3-27B:
27 blocks × 4 × 1,152² = 143,327,232 weights, ≈ 0.13 GiB less over the ranks that split them).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.architectures import SIGLIP_TABLE_SPLIT
from kvtop.domain.engines.vllm.flags import LOAD_CASTS
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

TOWER_FP8_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.8.0"),
    Era("0.8.0", True, "gemma3_mm.py:400-401 (v0.8.0), siglip.py:166-173 and fp8.py:118-130 (v0.9.1), "
                       "siglip.py:358-370 and :422-429 (v0.34.0)"),
))  # fmt: skip
# the classes that build siglip.py's SiglipVisionModel (architectures.SIGLIP_TABLE_SPLIT's, read at v0.9.1 and v0.13.0)
SIGLIP_CLASSES = frozenset(cls for cls, _ in SIGLIP_TABLE_SPLIT)


def tower_fp8_not_modelled(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why the weights book's SigLIP tower is not what vLLM holds: a launch that quantizes a 16-bit checkpoint to FP8
    at load holds the tower's qkv / out projections in FP8 (module docstring); None elsewhere."""
    if model.tower is None or model.architecture not in SIGLIP_CLASSES or not TOWER_FP8_ERAS.at(version):
        return None
    online = dict(LOAD_CASTS.online_quant).get((settings.quantization or "").strip().lower())
    if online is None or online.method != "fp8" or model.quant.source != online.source:
        return None
    return ("vision tower: vLLM holds SigLIP's qkv_proj and out_proj in FP8 under --quantization fp8 at load "
            "(siglip.py SiglipAttention takes the quant config; its MLP only where its widths divide by 64): "
            "counted in the model's dtype, not modelled")
