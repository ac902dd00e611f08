"""NVILA's and NVILA-Lite's SigLIP and projector, and Sarashina2-Vision's Qwen2-VL ViT with its output norm, as
SGLang 0.5.23 builds them (towers_catalog.BY_OUTER_TYPE picks these kinds for the outer model_types nvila,
nvila_lite and sarashina2_vision; vLLM 0.33.0 registers none of the three classes).

- NVILA (models/nvila.py:105-122) and NVILA-Lite (nvila_lite.py): `vision_tower` is transformers'
  SiglipVisionModel(vision_config) as it is, not SGLang's TP layers: whole on every rank, every layer, the
  post-LayerNorm and the attention-pooling head where `vision_use_head` (SiglipVisionConfig's default True).
  `mm_projector` is nn.Sequential of nn.LayerNorm and nn.Linear (whole) over the module's constant MM_HIDDEN_SIZE
  (nvila.py:31: 3456; nvila_lite.py:31: 1152), not over vision_config's width: NVILA's (nvila.py:89-97) LayerNorm(4 ×
  3456), Linear 4 × 3456 → text, Linear text → text; NVILA-Lite's (nvila_lite.py:86-98) LayerNorm(9 × 1152),
  Linear 9 × 1152 → 3 × 1152, LayerNorm(3 × 1152), Linear 3 × 1152 → text, Linear text → text; all biased.
- Sarashina2-Vision (models/sarashina2_vision.py:61-72): `visual` is qwen2_vl.py's Qwen2VisionTransformer (the
  `qwen2_vl` kind's count and split), and `norm` an nn.LayerNorm(text hidden) over its output (weight and bias,
  whole).
Meta-built (registry sweep, SGLang 0.5.23, the composed default configs: SiglipVisionConfig() and Qwen2Config()
text 4,096 wide; Qwen2VLVisionConfig() and LlamaConfig()): NVILA vision_tower 185,768,448 B and mm_projector
146,872,320 B, NVILA-Lite mm_projector 133,608,192 B, at TP 1 and a rank at TP 2 alike; Sarashina2-Vision's norm
16,384 B (tests/domain/test_towers_nvila.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.architectures.towers_vit import siglip_encoder, siglip_pooling_head
from kvtop.domain.tower_spec import TowerSpec

SOURCE_NVILA = "SGLang 0.5.23 models/nvila.py (SiglipVisionModel, NVILAMultiModalProjector)"
SOURCE_NVILA_LITE = "SGLang 0.5.23 models/nvila_lite.py (SiglipVisionModel, NVILALiteMultiModalProjector)"
SOURCE_SARASHINA2 = "SGLang 0.5.23 models/sarashina2_vision.py, qwen2_vl.py (Qwen2VisionTransformer, norm)"
MM_HIDDEN = {"nvila": 3456, "nvila_lite": 1152}  # each module's constant MM_HIDDEN_SIZE (line 31)


def siglip_model(values: Mapping[str, Any]) -> int:
    """transformers' SiglipVisionModel: a biased Conv2d patch embedding, (image ÷ patch)² positions, `depth` blocks
    (two LayerNorms; q, k, v, out, fc1, fc2 biased), the post-LayerNorm and the pooling head where vision_use_head."""
    whole, split = siglip_encoder(values, (int(values["image_size"]) // int(values["patch_size"])) ** 2)
    head = siglip_pooling_head(values["hidden_size"], values["intermediate_size"]) if values.get("vision_use_head", True) else 0
    return whole + split + head


def projector(kind: str, text_hidden: int) -> int:
    """The mm_projector's parameters: LayerNorms and biased Linears over the module's MM_HIDDEN_SIZE."""
    mm = MM_HIDDEN[kind]
    if kind == "nvila":  # 2×2 downsample: 4 × mm wide
        return 2 * 4 * mm + (4 * mm * text_hidden + text_hidden) + (text_hidden * text_hidden + text_hidden)
    # NVILA-Lite's 3×3 downsample: 9 × mm, then 3 × mm
    first = 2 * 9 * mm + (9 * mm * 3 * mm + 3 * mm) + 2 * 3 * mm
    return first + (3 * mm * text_hidden + text_hidden) + (text_hidden * text_hidden + text_hidden)


def nvila(
    values: Mapping[str, Any], kind: str, text_hidden: int, config_class: str, source: str
) -> TowerSpec:
    """NVILA's or NVILA-Lite's tower and projector: whole on every rank (none of it is a TP layer)."""
    params = siglip_model(values) + projector(kind, text_hidden)
    return TowerSpec(params=params, tp_split_params=0, config_class=config_class, source=source)


def with_output_norm(qwen: TowerSpec, text_hidden: int, config_class: str, source: str) -> TowerSpec:
    """Sarashina2-Vision: the Qwen2-VL ViT as the qwen2_vl kind counts it, and the LayerNorm over its output."""
    return qwen.model_copy(update={"params": qwen.params + 2 * text_hidden, "config_class": config_class,
                                   "source": source})  # fmt: skip


# SiglipVisionConfig's class defaults where vision_config leaves a field out (NVILAConfig builds the section as one)
_SIGLIP = {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3, "image_size": 224,
           "patch_size": 16}  # fmt: skip
NVILA = Tower("SiglipVisionConfig", SOURCE_NVILA, _SIGLIP, kind="nvila")
NVILA_LITE = Tower("SiglipVisionConfig", SOURCE_NVILA_LITE, _SIGLIP, kind="nvila_lite")
BY_OUTER_TYPE = {"nvila": NVILA, "nvila_lite": NVILA_LITE}  # Sarashina2-Vision's: towers_catalog (QWEN2_VL's)
