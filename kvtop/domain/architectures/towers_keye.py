"""Keye-VL's SigLIP tower and projector (KeyeForConditionalGeneration, KeyeVL1_5ForConditionalGeneration), counted as
vLLM 0.33.0 models/keye.py and keye_vl1_5.py build them. SGLang 0.5.23 registers neither class.

The config is Qwen3's at its top level (vLLM builds Qwen3ForCausalLM over it: keye.py:1231-1235, the qwen3 entry by
class, table_dense) with a SigLIP `vision_config` read by attribute (no defaults: a field it lacks does not build):
- KeyeSiglipVisionModel (keye.py:193-690): `embeddings`: a biased Conv2d patch num_channels × patch² → width, a
  position table of (image_size ÷ patch_size)² rows and a packing position table of 32,768 rows (nn.Embedding),
  whole; every one of num_hidden_layers blocks (KeyeSiglipEncoderLayer): two LayerNorms (weight, bias), qkv_proj
  (QKVParallelLinear width → 3 × width, biased) and out_proj (RowParallelLinear, biased), SiglipMLP fc1 (Column,
  biased) and fc2 (Row, biased); the post_layernorm; the rotary embedding holds a buffer only;
- `mlp_AR`, the projector over 2 × 2 merged patches (4 × width): Keye's Projector (keye.py:764-800) pre_norm
  LayerNorm of width, Keye-VL-1.5's KeyeVL1_5Projector (keye_vl1_5.py:197-232) of 4 × width; linear_1 (Column,
  4 × width → 4 × width, biased) and linear_2 (Row, 4 × width → text width, biased).
Split over TP: qkv, fc1, linear_1 with their biases, out_proj's, fc2's and linear_2's weights; whole: the rest.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.architectures.towers_vit import vit_blocks
from kvtop.domain.config_types import ConfigSection, Dim, Heads, Hidden, Intermediate, Layers
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "Keye's vision_config (SigLIP fields)"
SOURCE = "vLLM 0.33.0 models/keye.py (KeyeSiglipVisionModel, Projector), keye_vl1_5.py (KeyeVL1_5Projector)"
PACKING_POSITIONS = 32_768  # keye.py KeyeVisionEmbeddings.packing_position_embedding
MERGE = 2 * 2  # the projectors' merge_kernel_size (2, 2), a constant in both files
KEYE_1_5 = "KeyeVL1_5ForConditionalGeneration"  # its pre_norm spans the merged width


class KeyeVisionFields(ConfigSection):
    """`vision_config`: the SigLIP sizes keye.py reads by attribute."""

    hidden_size: Hidden
    intermediate_size: Intermediate
    num_hidden_layers: Layers
    num_attention_heads: Heads
    num_channels: Dim
    image_size: Dim
    patch_size: Dim


def keye(vision: KeyeVisionFields, architecture: str, text_hidden: int) -> TowerSpec:
    """The tower and projector as vLLM builds them (module docstring)."""
    w, m, blocks = vision.hidden_size, vision.intermediate_size, vision.num_hidden_layers
    positions = (vision.image_size // vision.patch_size) ** 2 + PACKING_POSITIONS
    blocks_whole, split = vit_blocks(blocks, w, m)  # SigLIP's blocks, split as vLLM's siglip.py splits them
    whole = vision.num_channels * vision.patch_size**2 * w + w + positions * w  # patch (biased), two tables
    whole += blocks_whole + 2 * w  # post_layernorm
    merged = MERGE * w
    whole += 2 * (merged if architecture == KEYE_1_5 else w) + text_hidden  # pre_norm; linear_2's bias
    split += merged * merged + merged + merged * text_hidden  # linear_1 with its bias; linear_2's weight
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE,
                     divided_heads=(vision.num_attention_heads,))  # fmt: skip


TOWER = Tower(CONFIG_CLASS, SOURCE, kind="keye")
TOWERS_BY_CLASS: Mapping[str, Tower] = {"KeyeForConditionalGeneration": TOWER, KEYE_1_5: TOWER}
