"""InternVL's vision tower (InternViT) and its `mlp1` projector, counted as vLLM 0.33.0 builds and shards them
(towers.py reads the fields and picks this kind by the outer model_type `internvl_chat`).

vLLM internvl.py (`InternVLChatModel`) builds InternViT (intern_vit.py) up to `select_layer` (−1: every layer):
a class embedding, a Conv2d patch embedding with bias, (image ÷ patch)² + 1 positions, and blocks of two norms
(LayerNorm, or RMSNorm for `norm_type` rms_norm), fused qkv (`qkv_bias`), an output projection with bias, q and
k RMSNorms over the width where `qk_normalization`, the layer scales ls1 and ls2, and fc1 / fc2 with biases.
fc1 (Column, with its bias) and fc2 (Row) always split over TP; qkv (QKVParallelLinear, with its bias) and proj
(Row) only where the head count divides by TP — else the attention is built whole (`use_data_parallel`). The
projector `mlp1` is nn.Sequential(LayerNorm(width × r²), Linear(width × r² → text), GELU, Linear(text → text))
with r = 1 ÷ `downsample_ratio`: plain nn.Linear, whole on every rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from kvtop.domain.architectures.towers_vit import layers_built
from kvtop.domain.config_types import ConfigSection, Factor, Flag, Name
from kvtop.domain.errors import InputError
from kvtop.domain.model import TowerSpec


class InternVitFields(ConfigSection):
    """InternVisionConfig's fields beyond the shared ones (its class defaults where absent)."""

    qkv_bias: Flag = False
    qk_normalization: Flag = False
    norm_type: Name = "rms_norm"


class InternChatFields(ConfigSection):
    """InternVLChatConfig's fields the tower's size reads (its class defaults where absent)."""

    select_layer: int = Field(default=-1, strict=True, ge=-10_000, le=10_000)
    downsample_ratio: Factor = 0.5


def intern_vit(
    values: Mapping[str, Any], vit: InternVitFields, outer: InternChatFields, text_hidden: int, config_class: str,
    source: str, *, where: str,
) -> TowerSpec:  # fmt: skip
    """The tower and projector's parameters: whole, split over TP, and split only where the heads divide."""
    width, mlp, heads = values["hidden_size"], values["intermediate_size"], values["num_attention_heads"]
    if width % heads:
        raise InputError(f"must divide hidden_size ({width}) into whole heads (got {heads})",
                         field="vision_config.num_attention_heads", source=where)  # fmt: skip
    if vit.norm_type not in ("layer_norm", "rms_norm"):
        raise InputError(f"must be layer_norm or rms_norm (got {vit.norm_type!r})", field="vision_config.norm_type",
                         source=where)  # fmt: skip
    depth = layers_built(outer.select_layer, values["depth"])
    if not 1 <= depth <= values["depth"]:
        raise InputError(f"must name a layer of the {values['depth']} in vision_config (got {outer.select_layer})",
                         field="select_layer", source=where)  # fmt: skip
    ratio = round(1 / outer.downsample_ratio)
    if ratio * outer.downsample_ratio != 1:
        raise InputError(f"must be 1 ÷ a whole number (got {outer.downsample_ratio})", field="downsample_ratio",
                         source=where)  # fmt: skip
    positions = (values["image_size"] // values["patch_size"]) ** 2 + 1
    norm = (2 if vit.norm_type == "layer_norm" else 1) * width
    qkv_bias = 3 * width if vit.qkv_bias else 0
    whole = width + values["in_channels"] * values["patch_size"] ** 2 * width + width + positions * width
    # per block: two norms, proj's bias, q/k norms, ls1 and ls2, fc2's bias
    whole += depth * (2 * norm + width + (2 * width if vit.qk_normalization else 0) + 2 * width + width)
    split = depth * (width * mlp + mlp + mlp * width)  # fc1 (with its bias) and fc2
    heads_split = depth * (3 * width * width + qkv_bias + width * width)  # qkv (with its bias) and proj
    shuffled = width * ratio * ratio
    whole += 2 * shuffled + shuffled * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden  # mlp1
    return TowerSpec(params=whole + split + heads_split, tp_split_params=split, head_split_params=heads_split,
                     heads=heads, config_class=config_class, source=source)  # fmt: skip
