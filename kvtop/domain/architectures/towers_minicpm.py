"""MiniCPM-V 4.6's and 4.7's vision tower (`vpm`), window-attention merger (`vit_merger`) and projector
(`merger`), counted as vLLM 0.33.0 builds and shards them (towers.py picks this kind by the outer model_type
`minicpmv4_6` or `minicpmv4_7`; the language model is the Qwen3.5 text entry).

vLLM 0.33.0 minicpmv4_6.py `MiniCPMV4_6ForConditionalGeneration.__init__`:
- `vpm`: Idefics2VisionTransformer (idefics2_vision_model.py): a Conv2d patch embedding with bias, a learned
  position table of (image_size ÷ patch_size)² rows (nn.Embedding: whole), `num_hidden_layers` blocks of two
  LayerNorms, qkv_proj (QKVParallelLinear, bias) and out_proj (RowParallelLinear, bias whole), fc1
  (ColumnParallelLinear, bias) and fc2 (RowParallelLinear, bias whole), a post-LayerNorm. 4.6 drops the last
  block where the outer config's `drop_vision_last_layer` is true (`_drop_vision_last_layer`); 4.7's class
  (minicpmv4_7.py) keeps every block whatever the field says.
- `vit_merger` (MiniCPMV4_6ViTWindowAttentionMerger): one more attention (qkv_proj QKVParallelLinear with bias,
  out_proj RowParallelLinear with bias), layer_norm1 over the width, then a pre_norm over 4 × width and two
  nn.Linear with biases, 4 × width → 4 × intermediate → width (whole: the 4 is the fixed 2 × 2 window).
- `merger` (MiniCPMV4_6Merger): built with its defaults, merge_kernel_size (2, 2) and times 1 (the config's
  `merge_kernel_size` and `merger_times` are not passed): one DownsampleMLP, a LayerNorm over 4 × width, nn.Linear
  4 × width → 4 × width and 4 × width → the language model's width, with biases (whole).
Parameter counts checked against the engine's meta build (tests/test_towers_minicpm.py).
SGLang 0.5.23 (minicpmv_vit.py MiniCPMV_ViTWindowAttentionMerger, MiniCPMV_DownsampleMLP) builds the same
parameters but the vit_merger's and the merger's linear_1 / linear_2 as Column/RowParallelLinear: split over TP
(linear_1 with its bias, linear_2's bias whole): `replicated_params`, split where TowerSplit.replicated_linears.
"""

from __future__ import annotations

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Intermediate, Layers, Name
from kvtop.domain.model import TowerSpec

WINDOW = 2 * 2  # the vit_merger's fixed 2 × 2 window and the merger's default merge_kernel_size (2, 2)


class MiniCPMVisionFields(ConfigSection):
    """MiniCPMV4_6VisionConfig's fields (transformers models/minicpmv4_6: its class defaults where absent)."""

    hidden_size: Hidden = 768
    intermediate_size: Intermediate = 3072
    num_hidden_layers: Layers = 12
    num_attention_heads: Heads = 12
    num_channels: Dim = 3
    image_size: Dim = 224
    patch_size: Dim = 16


class MiniCPMOuterFields(ConfigSection):
    """The outer MiniCPMV4_6Config field that changes the tower (its class default False)."""

    model_type: Name | None = None
    drop_vision_last_layer: Flag = False


def minicpm_v(
    vision: MiniCPMVisionFields, outer: MiniCPMOuterFields, reads_drop: bool, text_hidden: int,
    config_class: str, source: str,
) -> TowerSpec:  # fmt: skip
    """The vpm, vit_merger and merger parameters; `reads_drop`: the class honours drop_vision_last_layer (4.6)."""
    width, mlp = vision.hidden_size, vision.intermediate_size
    depth = vision.num_hidden_layers - (1 if reads_drop and outer.drop_vision_last_layer else 0)
    attention_split = 3 * width * width + 3 * width + width * width  # qkv with its bias, out_proj's weight
    block_split = attention_split + width * mlp + mlp + mlp * width  # fc1 with its bias, fc2's weight
    block_whole = 2 * 2 * width + width + width  # two LayerNorms, out_proj's and fc2's biases
    positions = (vision.image_size // vision.patch_size) ** 2
    vpm_whole = vision.num_channels * vision.patch_size**2 * width + width + positions * width + 2 * width
    wide, wide_mlp = WINDOW * width, WINDOW * mlp
    vit_merger_whole = width + 2 * width + 2 * wide + wide * wide_mlp + wide_mlp + wide_mlp * width + width
    merger_whole = 2 * wide + wide * wide + wide + wide * text_hidden + text_hidden
    split = depth * block_split + attention_split
    whole = vpm_whole + depth * block_whole + vit_merger_whole + merger_whole
    # the two MLPs vLLM builds nn.Linear (whole) and SGLang Column/RowParallelLinear (linear_2's bias whole in both)
    mlps = wide * wide_mlp + wide_mlp + wide_mlp * width + wide * wide + wide + wide * text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source,
                     replicated_params=mlps)  # fmt: skip
