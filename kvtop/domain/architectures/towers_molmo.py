"""Molmo's vision backbone (`MolmoForCausalLM`, model_type molmo), counted as vLLM 0.33.0 molmo.py builds and shards
it. The checkpoint's config names no vision section: the ViT's shape is vLLM's own constant (`VisionBackboneConfig()`,
built whatever the config says), and only the image projector reads the language model's config.

vLLM 0.33.0 molmo.py `MolmoVisionBackbone`:
- `image_vit` VisionTransformer over VisionBackboneConfig (CLIP ViT-L/14-336 cut to 23 layers: width 1024, MLP 4096,
  16 heads of 64, 577 positions, patch 14): a class embedding, a positional table (577 × 1024) and an unbiased
  nn.Linear patch embedding (14 × 14 × 3 → 1024), a pre-LayerNorm (whole); 23 blocks of two LayerNorms, wq / wk / wv
  (Column, biased), wo (Row, biased), w1 (Column, biased), w2 (Row, biased): SigLIP's split (towers_vit.vit_blocks).
- `image_pooling_2d` MultiHeadDotProductAttention over the two ViT layers concatenated (VIT_LAYERS [-2, -9]): wq / wk /
  wv 2 × 1024 → 1024 (Column, biased), wo 1024 → 1024 (Row, biased).
- `image_projector` ImageProjectorMLP: merged_linear 1024 → 2 × intermediate_size ÷ 2 (Column, no bias), down_proj
  intermediate_size ÷ 2 → hidden_size (Row, no bias): the language model's `intermediate_size` and `hidden_size`.
- `pad_embed` nn.Parameter (2, 2 × 1024), whole.
Meta-built (registry sweep, recon--allenai--Molmo-7B-D-0924, vLLM 0.33.0): vision_backbone 809,900,032 B at TP 1,
406,292,480 B a rank at TP 2, reproduced by hand in tests/domain/test_molmo.py. SGLang 0.5.23 registers no Molmo.
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_vit import vit_blocks
from kvtop.domain.config_types import ConfigSection, Dim, Hidden
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "VisionBackboneConfig"
SOURCE = "vLLM 0.33.0 molmo.py (MolmoVisionBackbone over VisionBackboneConfig())"
# vLLM 0.33.0 molmo.py VisionBackboneConfig's defaults, the only values it builds the ViT with
VIT = {"layers": 23, "width": 1024, "mlp": 4096, "positions": 577, "patch": 14, "channels": 3}
VIT_LAYERS_POOLED = 2  # VIT_LAYERS = [-2, -9]: the pooling attention reads two layers' features concatenated


class MolmoProjectorFields(ConfigSection):
    """The language model's fields the image projector reads by attribute (MolmoConfig states them)."""

    hidden_size: Hidden
    intermediate_size: Dim


def molmo(projector: MolmoProjectorFields) -> TowerSpec:
    """The vision backbone's parameters: those split over TP (blocks, pooling, projector) and the rest (whole)."""
    width, mlp = VIT["width"], VIT["mlp"]
    whole, split = vit_blocks(VIT["layers"], width, mlp)
    # class embedding, positional table, unbiased patch Linear, pre-LayerNorm
    whole += width + VIT["positions"] * width + VIT["patch"] ** 2 * VIT["channels"] * width + 2 * width
    pooled = VIT_LAYERS_POOLED * width
    split += 3 * (pooled * width + width) + width * width  # image_pooling_2d wq, wk, wv (biased), wo
    whole += width  # wo's bias (Row)
    half = projector.intermediate_size // 2
    split += width * 2 * half + half * projector.hidden_size  # image_projector merged_linear, down_proj
    whole += 2 * pooled  # pad_embed
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE)
