"""InternVL's vision tower (InternViT) and its `mlp1` projector, counted as vLLM 0.33.0 builds and shards them
(towers.py reads the fields and picks this kind by the outer model_type `internvl_chat`).

vLLM internvl.py (`InternVLChatModel`) builds InternViT (intern_vit.py) up to `select_layer` (−1: every layer):
a class embedding, a Conv2d patch embedding with bias, (image ÷ patch)² + 1 positions, and blocks of two norms
(LayerNorm, or RMSNorm for `norm_type` rms_norm), fused qkv (`qkv_bias`), an output projection with bias, q and
k RMSNorms over the width where `qk_normalization`, the layer scales ls1 and ls2, and fc1 / fc2 with biases.
fc1 (Column, with its bias) and fc2 (Row) always split over TP; qkv (QKVParallelLinear, with its bias) and proj
(Row) only where the head count divides by TP — else the attention is built whole (`use_data_parallel`). The
projector `mlp1` is nn.Sequential(LayerNorm(width × r²), Linear(width × r² → text), GELU, Linear(text → text))
with r = 1 ÷ `downsample_ratio`: plain nn.Linear, whole on every rank. SGLang 0.5.23 internvl.py splits the same
parts where the heads divide, but where they do not pads them with zero heads to a multiple of TP
(vision_utils.update_vit_attn_dummy_heads_config: qkv, proj and, split, one head's `head_params`; the q/k RMSNorms
over the padded width, whole, `head_norm_params`): each engine's TowerSplit.blocks["InternVisionModel"].

InternVL's transformers format (`internvl`, vLLM interns1.py + interns1_vit.py) holds the same tensors under
other names (InternVLVisionConfig: `attention_bias`, `use_qk_norm`, image and patch sizes as pairs, an optional
mask token, a final LayerNorm unless `use_mean_pooling`), builds every layer, and keeps q/k/v and the output
projection nn.Linear (whole): only fc1 (with its bias) and fc2 split over TP; its projector is nn.Linear too.
SGLang 0.5.23 interns1.py builds internvl.py's InternVisionModel over that config: the attention split as in
InternVL's remote-code format (zero heads padded), each engine's TowerSplit.blocks["InternVLVisionModel"].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from kvtop.domain.architectures.towers_vit import layers_built
from kvtop.domain.config_types import MAX_DIM, ConfigSection, Factor, Flag, Name
from kvtop.domain.errors import InputError
from kvtop.domain.tower_spec import TowerSpec

# the engines' rules for its attention (TowerSplit.blocks): vLLM whole where the heads do not divide, SGLang pads them
BLOCK_CLASS = "InternVisionModel"
# the transformers format's encoder (vLLM interns1_vit.py: q/k/v and projection nn.Linear; SGLang interns1.py builds
# internvl.py's InternVisionModel over it: split, zero heads padded)
HF_BLOCK_CLASS = "InternVLVisionModel"


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
    body = intern_vit_body(values, vit, outer, where=where)
    shuffled = body.shuffled_width
    mlp1 = 2 * shuffled + shuffled * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden
    head_dim = values["hidden_size"] // body.heads
    per_head = body.depth * (4 * head_dim * values["hidden_size"] + (3 * head_dim if vit.qkv_bias else 0))
    return TowerSpec(params=body.whole + mlp1 + body.split + body.heads_split, tp_split_params=body.split,
                     head_split_params=body.heads_split, heads=body.heads, config_class=config_class,
                     source=source, block_class=BLOCK_CLASS, head_params=per_head,
                     head_norm_params=body.depth * 2 * head_dim if vit.qk_normalization else 0)  # fmt: skip


@dataclass(frozen=True)
class InternVitBody:
    """InternViT's parameters up to `select_layer`, before a projector: whole on every rank, split over TP (fc1,
    fc2), split only where the heads divide (qkv, proj); the heads those divide by; the pixel-shuffled width."""

    whole: int
    split: int
    heads_split: int
    heads: int
    shuffled_width: int
    depth: int  # the blocks built (up to select_layer)


def intern_vit_body(
    values: Mapping[str, Any], vit: InternVitFields, outer: InternChatFields, *, where: str, dummy_heads: int = 0
) -> InternVitBody:
    """InternViT as vLLM's intern_vit.py builds it, with `dummy_heads` more heads of hidden ÷ heads each (NVLM-D's
    `num_dummy_heads`: qkv, proj and the q/k norms over the padded width); fields named when bad."""
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
    padded = (heads + dummy_heads) * (width // heads)
    positions = (values["image_size"] // values["patch_size"]) ** 2 + 1
    norm = (2 if vit.norm_type == "layer_norm" else 1) * width
    whole = width + values["in_channels"] * values["patch_size"] ** 2 * width + width + positions * width
    # per block: two norms, proj's bias, q/k norms (over the padded width), ls1 and ls2, fc2's bias
    whole += depth * (2 * norm + width + (2 * padded if vit.qk_normalization else 0) + 2 * width + width)
    split = depth * (width * mlp + mlp + mlp * width)  # fc1 (with its bias) and fc2
    qkv_bias = 3 * padded if vit.qkv_bias else 0
    heads_split = depth * (3 * padded * width + qkv_bias + padded * width)  # qkv (with its bias) and proj
    return InternVitBody(whole=whole, split=split, heads_split=heads_split, heads=heads + dummy_heads,
                         shuffled_width=width * ratio * ratio, depth=depth)  # fmt: skip


def _square(value: Any) -> Any:
    """An integer or a pair of equal ones (InternVL's images and patches are square): the side."""
    pair = value if isinstance(value, list) else [value, value]
    if len(pair) != 2 or pair[0] != pair[1] or isinstance(pair[0], bool) or not isinstance(pair[0], int):
        raise ValueError("must be an integer or a pair of equal integers")
    if not 1 <= pair[0] <= MAX_DIM:
        raise ValueError(f"must be between 1 and {MAX_DIM:,}")
    return pair[0]


Side = Annotated[int, BeforeValidator(_square)]


class InternVlVisionFields(ConfigSection):
    """InternVLVisionConfig's fields beyond the shared ones (its class defaults where absent)."""

    image_size: Side = 448
    patch_size: Side = 14
    attention_bias: Flag = False
    use_qk_norm: Flag = False
    norm_type: Name = "layer_norm"
    use_mask_token: Flag = False
    use_absolute_position_embeddings: Flag = True
    use_mean_pooling: Flag = True


def intern_vl_hf(
    values: Mapping[str, Any], vit: InternVlVisionFields, ratio_field: InternChatFields, text_hidden: int,
    config_class: str, source: str, *, where: str,
) -> TowerSpec:  # fmt: skip
    """The transformers-format tower and projector: only fc1 and fc2 split over TP (vLLM interns1_vit.py)."""
    width, mlp, depth = values["hidden_size"], values["intermediate_size"], values["depth"]
    if vit.norm_type not in ("layer_norm", "rms_norm"):
        raise InputError(f"must be layer_norm or rms_norm (got {vit.norm_type!r})", field="vision_config.norm_type",
                         source=where)  # fmt: skip
    ratio = round(1 / ratio_field.downsample_ratio)
    if ratio * ratio_field.downsample_ratio != 1:
        raise InputError(f"must be 1 ÷ a whole number (got {ratio_field.downsample_ratio})", field="downsample_ratio",
                         source=where)  # fmt: skip
    image, patch = vit.image_size, vit.patch_size
    norm = (2 if vit.norm_type == "layer_norm" else 1) * width
    whole = width + (width if vit.use_mask_token else 0) + values["in_channels"] * patch**2 * width + width
    whole += ((image // patch) ** 2 + 1) * width if vit.use_absolute_position_embeddings else 0
    heads = values["num_attention_heads"]
    attention = 4 * width * width + (3 * width if vit.attention_bias else 0)  # q, k, v (with biases), projection
    whole += depth * (width + (2 * width if vit.use_qk_norm else 0) + 2 * norm + 2 * width + width)
    whole += 0 if vit.use_mean_pooling else 2 * width
    split = depth * (width * mlp + mlp + mlp * width)  # fc1 (with its bias) and fc2
    shuffled = width * ratio * ratio
    whole += 2 * shuffled + shuffled * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden
    head_dim = width // heads if heads and width % heads == 0 else 0
    # the attention, whole in vLLM (nn.Linear), split by SGLang with zero heads padded (TowerSplit.blocks HF_BLOCK_CLASS)
    per_head = depth * (4 * head_dim * width + (3 * head_dim if vit.attention_bias else 0))
    # transformers' InternVLVisionModel and InternVLMultiModalProjector hold the same parameters (every layer): a
    # Transformers backend builds them whole on every rank (SGLang 0.5.23)
    return TowerSpec(params=whole + split + depth * attention, tp_split_params=split, config_class=config_class,
                     source=source, transformers_params=whole + split + depth * attention,
                     head_split_params=depth * attention, heads=heads, block_class=HF_BLOCK_CLASS,
                     head_params=per_head, head_norm_params=depth * 2 * head_dim if vit.use_qk_norm else 0)  # fmt: skip
