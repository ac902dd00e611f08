"""dots.vlm1's vision transformer and patch merger (`DotsVLMForCausalLM`, outer model_type dots_vlm), counted as
SGLang 0.5.23 dots_vlm_vit.py builds them (vLLM 0.33.0 registers no DotsVLM class).

- `vision_tower` DotsVisionTransformer over `vision_config` (DotsVisionConfig, configs/dots_vlm.py; its defaults
  where the section leaves a field out): DotsPatchEmbed's Conv2dLayer num_channels → embed_dim of patch_size²
  (biased, Conv2dLayer's default) and an RMSNorm over embed_dim; `num_hidden_layers` DotsVisionBlocks of two RMSNorms,
  a VisionAttention (qkv_proj QKVParallelLinear and proj RowParallelLinear, biased where use_bias: split over TP but proj's
  bias, the heads padded with zero heads to a multiple of TP, `_update_vision_config` num_dummy_heads) and DotsSwiGLUFFN
  (fc1, fc3 embed_dim → intermediate_size, fc2 back: nn.Linear, whole on every rank); a post_trunk_norm RMSNorm where
  post_norm; the PatchMerger (pre_norm "layernorm": LayerNorm over embed_dim with its bias, then nn.Linear
  s → s and s → hidden_size with biases, s = embed_dim × spatial_merge_size²; whole).
Meta-built (registry sweep, default--DotsVLMForCausalLM, SGLang 0.5.23): vision_tower 2,524,182,528 B at TP 1,
2,127,820,800 B a rank at TP 2, reproduced by hand in tests/domain/test_dots_vlm_tower.py.
"""

from __future__ import annotations

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Layers
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "DotsVisionConfig"
SOURCE = (
    "SGLang 0.5.23 models/dots_vlm_vit.py (DotsVisionTransformer), configs/dots_vlm.py (DotsVisionConfig)"
)
BLOCK_CLASS = "DotsVisionTransformer"  # the engines' rules for its blocks' attention: TowerSplit.blocks


class DotsVisionFields(ConfigSection):
    """`vision_config`: the fields dots_vlm_vit.py reads, DotsVisionConfig's `__init__` defaults where absent."""

    embed_dim: Hidden = 1536
    hidden_size: Hidden = 1536
    intermediate_size: Hidden = 4224
    num_hidden_layers: Layers = 42
    num_attention_heads: Heads = 12
    num_channels: Dim = 3
    patch_size: Dim = 14
    spatial_merge_size: Dim = 2
    use_bias: Flag = False
    post_norm: Flag = True


def dots_vlm(vision: DotsVisionFields) -> TowerSpec:
    """The vision transformer's and merger's parameters: the blocks' attention split over TP, the rest whole."""
    width, heads = vision.embed_dim, vision.num_attention_heads
    head_dim = width // heads
    bias = 1 if vision.use_bias else 0
    attention = vision.num_hidden_layers * (3 * width * width + width * width + bias * 3 * width)  # qkv, proj
    head = vision.num_hidden_layers * (
        3 * head_dim * width + width * head_dim + bias * 3 * head_dim
    )  # a dummy head's
    mlp = 3 * width * vision.intermediate_size + bias * (
        2 * vision.intermediate_size + width
    )  # fc1, fc3, fc2
    whole = vision.num_hidden_layers * (
        mlp + 2 * width + bias * width
    )  # norm1, norm2, proj's bias (Row: whole)
    whole += (
        vision.num_channels * vision.patch_size**2 * width + width + width
    )  # patch conv (biased), its RMSNorm
    whole += width if vision.post_norm else 0  # post_trunk_norm
    merged = width * vision.spatial_merge_size**2
    whole += (
        2 * width + merged * merged + merged + merged * vision.hidden_size + vision.hidden_size
    )  # the merger
    return TowerSpec(params=whole + attention, tp_split_params=0, config_class=CONFIG_CLASS, source=SOURCE,
                     head_split_params=attention, heads=heads, block_class=BLOCK_CLASS, head_params=head)  # fmt: skip
