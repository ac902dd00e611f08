"""MiniMax-M3's vision tower (a CLIP-like ViT with 3-D RoPE) and its two projectors, counted as vLLM 0.33.0
builds and shards them (towers.py picks this kind by the outer model_type `minimax_m3_vl`).

vLLM models/minimax_m3/common/vision_tower.py (`MiniMaxVLVisionModel`): a Conv3d patch embedding without bias
(channels × temporal patch × patch² → width), a pre-LayerNorm, every block (two LayerNorms, qkv and out_proj
with biases, fc1 and fc2 with biases), no post-LayerNorm (`require_post_norm=False`; SGLang 0.5.23's
minimax_vl_common.py MiniMaxVLVisionTransformer builds one, weight and bias, where every block is used:
`post_norm_params`); the projector linear_1 (width → `projector_hidden_size`) and linear_2 (→ text), biased by the
vision config's `multimodal_projector_bias` (default true); the patch merger linear_1 (text × merge² →
`projector_hidden_size`) and linear_2 (→ text), biased by `patch_merge_bias` (default true). qkv, fc1 and both
linear_1s are column-parallel (their biases split), out_proj, fc2 and both linear_2s row-parallel (biases whole).
"""

from __future__ import annotations

from pydantic import Field

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Hidden
from kvtop.domain.tower_spec import TowerSpec


class Compression(ConfigSection):
    """`img_token_compression_config` (vision_tower.py's defaults where absent)."""

    spatial_merge_size: Dim = 2
    temporal_patch_size: Dim = 2


class MiniMaxVisionFields(ConfigSection):
    """The vision config's projector fields (vision_tower.py reads them off the vision config)."""

    img_token_compression_config: Compression = Field(default_factory=Compression)
    multimodal_projector_bias: Flag = True
    patch_merge_bias: Flag = True


class MiniMaxOuterFields(ConfigSection):
    """The outer config's `projector_hidden_size` (absent: the language model's width)."""

    projector_hidden_size: Hidden | None = None


def minimax_vl(
    values: dict[str, int], fields: MiniMaxVisionFields, outer: MiniMaxOuterFields, text_hidden: int,
    config_class: str, source: str,
) -> TowerSpec:  # fmt: skip
    """The tower and projectors' parameters, whole and split over TP."""
    width, mlp, depth = values["hidden_size"], values["intermediate_size"], values["depth"]
    compression = fields.img_token_compression_config
    mid = outer.projector_hidden_size or text_hidden
    whole = values["in_channels"] * compression.temporal_patch_size * values["patch_size"] ** 2 * width + 2 * width
    whole += depth * (2 * 2 * width + width + width)  # two LayerNorms, out_proj's and fc2's biases
    split = depth * (3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    for wide, bias in ((width, fields.multimodal_projector_bias),
                       (text_hidden * compression.spatial_merge_size**2, fields.patch_merge_bias)):  # fmt: skip
        split += wide * mid + (mid if bias else 0) + mid * text_hidden
        whole += text_hidden if bias else 0
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source,
                     post_norm_params=2 * width)  # fmt: skip
