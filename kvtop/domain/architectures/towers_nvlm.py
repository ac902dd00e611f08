"""NVLM-D's vision tower (InternViT-6B with dummy heads) and its `mlp1` projector, counted as vLLM 0.33.0 builds and
shards them (towers.py picks this kind by the outer model_type `NVLM_D`; SGLang 0.5.23 has no NVLM-D class).

vLLM nvlm_d.py (`NVLM_D_Model`, an InternVLChatModel) builds InternViT (intern_vit.py) up to `select_layer` with
`num_dummy_heads=7`: its attention holds heads + 7 heads of hidden ÷ heads each (`dummy_dim`), so qkv is
hidden → 3 × dummy_dim (`qkv_bias`), proj dummy_dim → hidden (with bias), and the q and k RMSNorms where
`qk_normalization` are over dummy_dim, whole on every rank (q and k are gathered before them). qkv and proj split
over TP where heads + 7 divide by TP, else they are built whole; fc1 (with its bias) and fc2 always split. The
rest is InternViT's (towers_intern.py): a class embedding, a Conv2d patch embedding with bias, (image ÷ patch)²
+ 1 positions, two norms a block, ls1 and ls2, fc2's bias. NVLM-D's `mlp1` (`_init_mlp1`) is
nn.Sequential(LayerNorm(width × r²), Linear(width × r² → the text model's intermediate_size, no bias), GELU,
Linear(intermediate → text hidden, no bias)), r = 1 ÷ `downsample_ratio`: plain nn.Linear, whole on every rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.towers_intern import InternChatFields, InternVitFields
from kvtop.domain.architectures.towers_vit import layers_built
from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import ConfigSection, Intermediate
from kvtop.domain.errors import InputError
from kvtop.domain.model import TowerSpec

DUMMY_HEADS = 7  # vLLM 0.33.0 nvlm_d.py NVLM_D_Model._init_vision_model: InternVisionModel(num_dummy_heads=7)
SOURCE = "nvidia/NVLM-D-72B remote code (InternVisionModel, NVLM_D_Model.mlp1); vLLM nvlm_d.py, intern_vit.py"


class NvlmTextFields(ConfigSection):
    """The language model's width mlp1 projects through (`llm_config.intermediate_size`)."""

    intermediate_size: Intermediate


def nvlm_d(
    values: Mapping[str, Any], vision_config: dict[str, Any], config: dict[str, Any], text_hidden: int,
    config_class: str, *, where: str,
) -> TowerSpec:  # fmt: skip
    """The tower and projector's parameters: whole, split over TP, and split only where heads + 7 divide."""
    vit = validated(InternVitFields, vision_config, source=where, prefix="vision_config.")
    outer = validated(InternChatFields, config, source=where)
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
    text_mlp = validated(
        NvlmTextFields, config.get("llm_config"), source=where, prefix="llm_config."
    ).intermediate_size
    dummy = (heads + DUMMY_HEADS) * (width // heads)
    positions = (values["image_size"] // values["patch_size"]) ** 2 + 1
    norm = (2 if vit.norm_type == "layer_norm" else 1) * width
    whole = width + values["in_channels"] * values["patch_size"] ** 2 * width + width + positions * width
    # per block: two norms, proj's bias, q/k norms over dummy_dim, ls1 and ls2, fc2's bias
    whole += depth * (2 * norm + width + (2 * dummy if vit.qk_normalization else 0) + 2 * width + width)
    split = depth * (width * mlp + mlp + mlp * width)  # fc1 (with its bias) and fc2
    heads_split = depth * (
        3 * dummy * width + (3 * dummy if vit.qkv_bias else 0) + dummy * width
    )  # qkv, proj
    shuffled = width * ratio * ratio
    whole += 2 * shuffled + shuffled * text_mlp + text_mlp * text_hidden  # mlp1: LayerNorm, two Linears
    return TowerSpec(params=whole + split + heads_split, tp_split_params=split, head_split_params=heads_split,
                     heads=heads + DUMMY_HEADS, config_class=config_class, source=SOURCE)  # fmt: skip
