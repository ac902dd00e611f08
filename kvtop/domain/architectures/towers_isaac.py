"""Isaac's vision embedding (vLLM's PixelShuffleSiglip2VisionConfig), counted as vLLM 0.33.0 builds and shards it
(towers_catalog.BY_OUTER_TYPE picks this kind for the outer model_type "isaac"; SGLang 0.5.23 registers no Isaac).

vLLM 0.33.0 models/isaac.py `IsaacVisionEmbedding`:
- `transformer` (its own Siglip2VisionTransformer): a biased ReplicatedLinear patch embedding channels × patch² →
  width and a `num_patches`-row nn.Embedding (whole), `depth` SigLIP2 blocks (two LayerNorms; qkv, out, fc1, fc2
  biased, QKV / Row / Column / Row-parallel) and the post-LayerNorm: towers_vit's SigLIP2 with every layer;
- after the pixel shuffle, `linear_fc1` (ColumnParallelLinear width × pixel_shuffle_scale_factor² → 4 × that) and
  `linear_fc2` (RowParallelLinear → the outer config's hidden_size), neither biased: split over TP.
transformers_utils/configs/isaac.py IsaacConfig builds the section as PixelShuffleSiglip2VisionConfig, whose
pixel_shuffle_scale_factor (default 1) wins over the outer pixel_shuffle_scale (read only where the section lacks
the field, which the class always sets).
Meta-built (registry sweep, default--IsaacForConditionalGeneration: IsaacConfig's defaults, a SigLIP2 768 wide,
12 layers, 256 patches, scale 1, text 4,096): 201,570,816 B at TP 1, 101,629,440 B a rank at TP 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.towers_vit import siglip2_every_layer
from kvtop.domain.config_types import ConfigSection, Dim, Hidden
from kvtop.domain.tower_spec import TowerSpec

SOURCE = "vLLM 0.33.0 transformers_utils/configs/isaac.py (PixelShuffleSiglip2VisionConfig), models/isaac.py"


class IsaacVisionFields(ConfigSection):
    """PixelShuffleSiglip2VisionConfig's pixel shuffle (its class default 1)."""

    pixel_shuffle_scale_factor: Dim = 1


class IsaacOuterFields(ConfigSection):
    """The outer config's hidden_size, linear_fc2's output (IsaacConfig, a Qwen3Config: the text model's width)."""

    hidden_size: Hidden | None = None


def isaac(
    values: Mapping[str, Any],
    shuffle: IsaacVisionFields,
    outer: IsaacOuterFields,
    text_hidden: int,
    config_class: str,
) -> TowerSpec:
    """The vision embedding's parameters (whole model): those split over TP and the rest."""
    whole, split = siglip2_every_layer(values)
    shuffled = values["hidden_size"] * shuffle.pixel_shuffle_scale_factor**2
    out = outer.hidden_size or text_hidden
    split += shuffled * 4 * shuffled + 4 * shuffled * out  # linear_fc1, linear_fc2
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=SOURCE)
