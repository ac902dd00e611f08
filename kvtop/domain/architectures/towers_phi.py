"""Phi-3-vision's / Phi-3.5-vision's image tower (`Phi3VForCausalLM`), counted as vLLM 0.33.0 builds and shards it
(towers.py picks this kind by the `phi3_v` entry; the config names it `img_processor`, not `vision_config`).

vLLM phi3v.py `Phi3HDImageEmbedding`: a CLIP ViT-L/14-336 whose shape is vLLM's own constant
(`CLIP_VIT_LARGE_PATCH14_336_CONFIG`: 24 layers of width 1024, MLP 4096, patch 14 of a 336 image), built up to
`img_processor.layer_idx` (−2: 23 layers, no post-LayerNorm: clip.py `require_post_norm` is off when layers are
dropped, on with all 24); the HD separators `glb_GN` and `sub_GN` (image_dim_out × 4 each); `img_projection`, nn.Linear
image_dim_out × 4 → text and text → text with biases (whole on every rank). clip.py splits each block's qkv and
fc1 (with their biases) and out_proj and fc2 (QKV/Column/Row/RowParallelLinear); the embeddings, norms and the
row-parallel biases are whole. The config's `img_processor.model_name` is not read (vLLM ignores it too).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator

from kvtop.domain.architectures.towers_vit import _feature_layers, layers_built
from kvtop.domain.config_types import ConfigSection, Hidden
from kvtop.domain.tower_spec import TowerSpec

# vLLM phi3v.py CLIP_VIT_LARGE_PATCH14_336_CONFIG (not read from the checkpoint's config)
CLIP_L14_336 = {"depth": 24, "hidden_size": 1024, "intermediate_size": 4096, "in_channels": 3, "image_size": 336,
                "patch_size": 14}  # fmt: skip


class Phi3VImageFields(ConfigSection):
    """`img_processor`'s fields vLLM reads (absent: phi3v.py's defaults)."""

    layer_idx: Annotated[int, BeforeValidator(_feature_layers)] = -2
    image_dim_out: Hidden = 1024


def phi3v_tower(fields: Phi3VImageFields, text_hidden: int, config_class: str, source: str) -> TowerSpec | None:
    """The CLIP tower, separators and projection (None where `image_dim_out` is not the CLIP's width: another
    image encoder than the one vLLM builds)."""
    clip = CLIP_L14_336
    width, mlp = clip["hidden_size"], clip["intermediate_size"]
    if fields.image_dim_out != width:
        return None
    depth = layers_built(fields.layer_idx, clip["depth"])
    positions = (clip["image_size"] // clip["patch_size"]) ** 2 + 1
    whole = 3 * width + clip["in_channels"] * clip["patch_size"] ** 2 * width + positions * width  # class, pre-LN
    whole += depth * (2 * 2 * width + width + width)  # two LayerNorms, out_proj's and fc2's biases
    whole += 2 * width if depth == clip["depth"] else 0  # clip.py builds the post-LayerNorm only with every layer
    split = depth * (3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    merged = 4 * fields.image_dim_out
    whole += 2 * merged + merged * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)
