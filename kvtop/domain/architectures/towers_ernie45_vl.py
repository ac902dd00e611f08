"""ERNIE-4.5-VL's DFNRope vision transformer and variable-resolution resampler (`Ernie4_5_VLMoeForConditionalGeneration`,
the checkpoint's own format, model_type ernie4_5_moe_vl), counted as vLLM 0.33.0 ernie45_vl.py and SGLang 0.5.23
ernie45_vl.py / ernie45_moe_vl.py build and shard them (the same bytes in both: registry sweep, recon config).

- `vision_model` Ernie4_5_VisionTransformer over `vision_config` (DFNRopeVisionTransformerConfig: embed_dim, depth,
  mlp_ratio, in_channels, patch_size): an unbiased nn.Linear patch embedding in_channels × patch² → embed_dim
  (whole); `depth` blocks of two LayerNorms, qkv (QKVParallelLinear, biased), proj (Row), fc1 (Column, biased) of
  int(embed_dim × mlp_ratio) and fc2 (Row): SigLIP's split (towers_vit.vit_blocks); a final LayerNorm (whole).
- `resampler_model` VariableResolutionResamplerModel(pixel_hidden_size, hidden_size, spatial_conv_size,
  temporal_conv_size): every linear a ColumnParallelLinear with its bias (so split over TP, biases too) — spatial
  s → s twice (s = pixel_hidden_size × spatial_conv_size²), where use_temporal_conv temporal s × temporal_conv_size
  → s and s → s, `mlp` s → hidden_size; LayerNorms over s after the spatial and temporal stages and an RMSNorm over
  hidden_size (whole).
Meta-built (registry sweep, recon--baidu--ERNIE-4.5-VL-28B-A3B-PT, both engines): vision_model 1,260,866,560 B and
resampler_model 288,450,560 B at TP 1, 631,434,240 B and 144,248,320 B a rank at TP 2, reproduced by hand in
tests/test_engine_diff_ernie45_vl.py.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field

from kvtop.domain.architectures.towers_vit import vit_blocks
from kvtop.domain.config_types import ConfigSection, Dim, Flag, Hidden, Layers
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "DFNRopeVisionTransformerConfig"
SOURCE = "vLLM 0.33.0 ernie45_vl.py (Ernie4_5_VisionTransformer, VariableResolutionResamplerModel); SGLang 0.5.23"
WORDS = "the vision tower and its resampler"


class DFNRopeVisionFields(ConfigSection):
    """`vision_config`: the fields the engines read by attribute (no default: the checkpoint states them)."""

    embed_dim: Hidden
    depth: Layers
    mlp_ratio: float = Field(gt=0, le=64)
    in_channels: Dim = Field(validation_alias=AliasChoices("in_channels", "in_chans"))
    patch_size: Dim


class ErnieResamplerFields(ConfigSection):
    """The outer config's resampler fields (read by attribute)."""

    pixel_hidden_size: Hidden
    spatial_conv_size: Dim
    temporal_conv_size: Dim
    use_temporal_conv: Flag


def ernie45_vl(vision: DFNRopeVisionFields, outer: ErnieResamplerFields, text_hidden: int) -> TowerSpec:
    """The vision transformer's and resampler's parameters: those split over TP and the rest (whole)."""
    width = vision.embed_dim
    whole, split = vit_blocks(vision.depth, width, int(width * vision.mlp_ratio))
    whole += vision.in_channels * vision.patch_size**2 * width + 2 * width  # patch Linear, final LayerNorm
    spatial = outer.pixel_hidden_size * outer.spatial_conv_size**2
    split += 2 * (spatial * spatial + spatial)  # spatial_linear1, spatial_linear2
    whole += 2 * spatial  # spatial_norm
    if outer.use_temporal_conv:
        split += spatial * outer.temporal_conv_size * spatial + spatial + spatial * spatial + spatial
        whole += 2 * spatial  # temporal_norm
    split += spatial * text_hidden + text_hidden  # mlp
    whole += text_hidden  # after_norm (RMSNorm)
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE,
                     label=WORDS)  # fmt: skip
