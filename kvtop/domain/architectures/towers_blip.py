"""BLIP-2's vision model, Q-Former and projection, and Granite-4.0-Vision's SigLIP and window Q-Former projectors,
counted as vLLM 0.33.0 builds and shards them (towers.py picks these kinds by the outer model_type `blip-2` and
`granite4_vision`; SGLang 0.5.23 registers neither class).

vLLM 0.33.0 blip2.py `Blip2QFormerModel` (whole: every linear nn.Linear): a final LayerNorm and, per layer, the
self-attention (query, key, value and the output dense, biased, and a LayerNorm), on every
`cross_attention_frequency`-th layer (index 0 first) a cross-attention whose key and value read the vision width,
and the query MLP (intermediate_query, output_query with a LayerNorm); no word embeddings, no text-side MLP.
- `blip-2` (blip2.py Blip2ForConditionalGeneration): blip.py BlipVisionModel with every layer (a class embedding,
  a biased Conv2d patch, (image ÷ patch)² + 1 positions, blocks of two LayerNorms, qkv biased by `qkv_bias`
  (QKVParallelLinear), projection (Row, bias whole), fc1 (Column) and fc2 (Row) with biases, a post-LayerNorm),
  `query_tokens` (num_query_tokens × Q-Former width), the Q-Former (its encoder width is the vision width:
  Blip2Config writes it) and `language_projection` (nn.Linear, biased, whole). Blip2Config's defaults:
  vision_model 1,971,904,512 B at TP 1, 987,477,120 B a rank at TP 2; qformer 210,275,328 B, query_tokens
  49,152 B, language_projection 1,181,184 B (meta-built).
- `granite4_vision` (granite4_vision.py Granite4VisionForConditionalGeneration): siglip.py SiglipVisionModel over
  the vision_config whatever its model_type, every layer, no post-LayerNorm (`require_post_norm=False`) and no
  head; `image_newline` (text wide); one WindowQFormerDownsampler per `deepstack_layer_map` entry and four more
  (`spatial_projectors`), each a one-layer Q-Former of the vision width (intermediate 3,072, cross-attention on
  its layer), a LayerNorm, `query` (q² rows of `downsample_rate` "q/w"), `image_positions` (w² rows) and
  `out_linear` vision → text with bias (nn.Linear: whole). Granite4VisionConfig's defaults (CLIP-B/32 sizes, the
  stated map of 4): vision_tower 174,904,320 B at TP 1, 89,905,152 B a rank at TP 2, the projectors
  101,328,896 B each group (meta-built).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from kvtop.domain.architectures.towers_vit import vit_blocks
from kvtop.domain.config_types import ConfigSection, Dim, Flag, Hidden, Intermediate, Layers
from kvtop.domain.tower_spec import TowerSpec

GRANITE_QFORMER_MLP = (
    3072  # granite4_vision.py WindowQFormerDownsampler: Blip2QFormerConfig(intermediate_size=3072)
)
GRANITE_SPATIAL_PROJECTORS = 4  # granite4_vision.py: `spatial_projectors`, one per offset group


def qformer_params(width: int, encoder: int, mlp: int, layers: int, cross_every: int) -> int:
    """vLLM blip2.py Blip2QFormerModel's parameters: per layer the self-attention (4 biased width² linears, a
    LayerNorm), a cross-attention on layers whose index divides by `cross_every` (query width², key and value
    encoder × width, output width², biased, a LayerNorm), the query MLP (width → mlp → width, biased, a
    LayerNorm); a final LayerNorm."""
    attention = 4 * width * width + 4 * width + 2 * width
    cross = 2 * width * width + 2 * encoder * width + 4 * width + 2 * width
    query_mlp = width * mlp + mlp + mlp * width + width + 2 * width
    crossed = sum(1 for index in range(layers) if index % cross_every == 0)
    return layers * (attention + query_mlp) + crossed * cross + 2 * width


class Blip2VisionFields(ConfigSection):
    """Blip2VisionConfig's fields (transformers models/blip_2: its class defaults where absent)."""

    hidden_size: Hidden = 1408
    intermediate_size: Intermediate = 6144
    num_hidden_layers: Layers = 39
    image_size: Dim = 224
    patch_size: Dim = 14
    qkv_bias: Flag = True


class Blip2QFormerFields(ConfigSection):
    """Blip2QFormerConfig's fields the Q-Former's size reads (its class defaults where absent); its
    encoder_hidden_size is the vision width (Blip2Config writes it)."""

    hidden_size: Hidden = 768
    intermediate_size: Intermediate = 3072
    num_hidden_layers: Layers = 12
    cross_attention_frequency: Dim = 2


class Blip2OuterFields(ConfigSection):
    """Blip2Config's `num_query_tokens` (its class default 32)."""

    num_query_tokens: Dim = 32


def blip2(
    vision: Blip2VisionFields, qformer: Blip2QFormerFields, outer: Blip2OuterFields, text_hidden: int,
    config_class: str, source: str,
) -> TowerSpec:  # fmt: skip
    """BLIP-2's vision model, query tokens, Q-Former and language projection: the vision blocks' qkv (with its
    bias), projection, fc1 (with its bias) and fc2 split over TP, the rest whole."""
    width, mlp, depth = vision.hidden_size, vision.intermediate_size, vision.num_hidden_layers
    positions = (vision.image_size // vision.patch_size) ** 2 + 1
    whole = width + 3 * vision.patch_size**2 * width + width + positions * width + 2 * width  # post-LayerNorm
    blocks_whole, split = vit_blocks(depth, width, mlp, qkv_bias=vision.qkv_bias)  # projection: the blocks' out
    whole += blocks_whole
    q_width = qformer.hidden_size
    whole += outer.num_query_tokens * q_width
    whole += qformer_params(q_width, width, qformer.intermediate_size, qformer.num_hidden_layers,
                            qformer.cross_attention_frequency)  # fmt: skip
    whole += q_width * text_hidden + text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)


class GraniteOuterFields(ConfigSection):
    """Granite4VisionConfig's projector fields (no class default: vLLM cannot build the class without them)."""

    downsample_rate: str = Field(pattern=r"^[1-9][0-9]{0,3}/[1-9][0-9]{0,3}$")
    deepstack_layer_map: list[list[int]] = Field(min_length=1, max_length=1024)


def granite4_vision(
    values: Mapping[str, Any], outer: GraniteOuterFields, text_hidden: int, config_class: str, source: str
) -> TowerSpec:
    """Granite-4.0-Vision's SigLIP (every layer, no post-LayerNorm, no head), image_newline and projectors."""
    width, mlp, depth = values["hidden_size"], values["intermediate_size"], values["depth"]
    positions = (values["image_size"] // values["patch_size"]) ** 2
    whole = values["in_channels"] * values["patch_size"] ** 2 * width + width + positions * width
    whole += depth * (2 * 2 * width + width + width)  # two LayerNorms, out's and fc2's biases
    split = depth * (3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    whole += text_hidden  # image_newline
    query_side, window_side = (int(side) for side in outer.downsample_rate.split("/"))
    downsampler = qformer_params(width, width, GRANITE_QFORMER_MLP, 1, 1) + 2 * width
    downsampler += (query_side**2 + window_side**2) * width + width * text_hidden + text_hidden
    whole += (len(outer.deepstack_layer_map) + GRANITE_SPATIAL_PROJECTORS) * downsampler
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)
