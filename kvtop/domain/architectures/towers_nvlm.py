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

from kvtop.domain.architectures.towers_intern import InternChatFields, InternVitFields, intern_vit_body
from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import ConfigSection, Intermediate
from kvtop.domain.tower_spec import TowerSpec

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
    body = intern_vit_body(values, vit, outer, where=where, dummy_heads=DUMMY_HEADS)
    text_mlp = validated(
        NvlmTextFields, config.get("llm_config"), source=where, prefix="llm_config."
    ).intermediate_size
    shuffled = body.shuffled_width
    mlp1 = 2 * shuffled + shuffled * text_mlp + text_mlp * text_hidden  # mlp1: LayerNorm, two Linears
    return TowerSpec(params=body.whole + mlp1 + body.split + body.heads_split, tp_split_params=body.split,
                     head_split_params=body.heads_split, heads=body.heads, config_class=config_class,
                     source=SOURCE)  # fmt: skip
