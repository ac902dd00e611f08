"""Nemotron Nano VL V2's vision tower (C-RADIO: a ViT named by `vision_config.args.model`) and its `mlp1`
projector, counted as vLLM 0.33.0 and SGLang 0.5.23 build and shard them (towers.py picks this kind by the outer
model_type `NemotronH_Nano_VL_V2`).

Both engines size the ViT from a table by name (vLLM transformers_utils/configs/radio.py and SGLang configs/radio.py
VIT_TIMM_DIM_BY_NAME: width, depth, heads, MLP width), never from the section's own sizes, and build it as RADIO's
patch generator and InternViT's blocks (vLLM radio.py RadioInternVisionModel, SGLang models/radio.py: both reuse
their InternViT encoder, so its blocks shard as InternViT's do, `towers_intern.BLOCK_CLASS`):
- the patch generator: an image embedder Linear(3 × patch² → width, no bias); a position table of
  round(cpe_max_size ÷ patch)² rows (cpe_max_size 2048; SGLang's max_img_size, never read from the config); one
  class token plus registers up to `register_multiple` (ClsToken: register_multiple − tokens % register_multiple),
  vLLM one class token per distinct teacher where `cls_token_per_teacher`, SGLang always one; where
  video_temporal_patch_size > 1 a video embedder Linear(3 × T × patch² → width, no bias); all whole on every rank;
- per block (InternVisionEncoderLayer, qkv_bias True, LayerNorm): two LayerNorms, ls1 and ls2, fused qkv with
  bias and the output projection (split where the heads divide), fc1 with bias and fc2 (split), the biases of
  proj and fc2 whole;
- mlp1 (vLLM nano_nemotron_vl.py NemotronH_Nano_VL_V2.__init__, SGLang nano_nemotron_vl.py): nn.Sequential(
  RMSNorm(vit_hidden_size × r²), Linear(→ projector_hidden_size, no bias), ReLU², Linear(→ text hidden, no bias)),
  r = round(1 ÷ downsample_ratio): plain nn.Linear, whole on every rank.
Where the engines' readings part (a token count, a position table, a patch size or a ViT only one of them names; vLLM's
vision_final_layernorm beside MTP layers; a sound encoder) the tower is not modelled and the plan's note stays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from kvtop.domain.architectures.towers_intern import BLOCK_CLASS
from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import ConfigSection, Dim, Factor, Flag, Hidden, Name
from kvtop.domain.errors import InputError
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "RadioConfig"
SOURCE = "vLLM 0.33.0 radio.py, nano_nemotron_vl.py; SGLang 0.5.23 models/radio.py, nano_nemotron_vl.py"
# (width, depth, heads, MLP width) by name: the table both engines hold (vLLM's adds vit_so400m_patch16_224, which
# SGLang's lacks: not modelled)
VIT_DIMS: Mapping[str, tuple[int, int, int, int]] = {
    "vit_small_patch16_224": (384, 12, 6, 1536),
    "vit_base_patch16_224": (768, 12, 12, 3072),
    "vit_large_patch16_224": (1024, 24, 16, 4096),
    "vit_huge_patch16_224": (1280, 32, 16, 5120),
}
# vLLM RadioConfig.cpe_max_size's default; SGLang's RadioConfig.max_img_size, never configured
CPE_MAX_SIZE = 2048
# RadioConfig fields vLLM takes from `args` (RadioConfig(**args)) that SGLang never reads, at their defaults
SAME_AS_SGLANG = {
    "qkv_bias": True,
    "qk_normalization": False,
    "norm_type": "layer_norm",
    "cpe_max_size": CPE_MAX_SIZE,
}


class RadioArgs(ConfigSection):
    """`vision_config.args`: the ViT's name, the registers and the teachers (class tokens)."""

    model: Name
    register_multiple: int | None = Field(default=None, strict=True, ge=1, le=4096)
    cls_token_per_teacher: Flag = False
    teachers: list[dict[str, Any]] = Field(default_factory=list, max_length=4096)


class RadioVisionFields(ConfigSection):
    """The RADIO section's fields beyond `args` (the engines' getattr defaults where absent)."""

    args: dict[str, Any]
    patch_size: Dim | None = None
    video_temporal_patch_size: Dim = 1
    separate_video_embedder: Flag = True


class NanoVlOuterFields(ConfigSection):
    """NemotronH_Nano_VL_V2_Config's fields the projector reads (SGLang 0.5.23's copy's defaults where absent)."""

    patch_size: Dim = 16
    downsample_ratio: Factor = 0.5
    vit_hidden_size: Hidden = 1280
    projector_hidden_size: Hidden = 4096


def _tokens(register_multiple: int | None, class_tokens: int) -> int:
    """ClsToken's rows: the class tokens and the registers up to `register_multiple`."""
    return class_tokens + (register_multiple - class_tokens % register_multiple if register_multiple else 0)


def radio(
    vision_config: dict[str, Any], outer: dict[str, Any], text_hidden: int, source: str
) -> TowerSpec | None:
    """The tower and projector's parameters (None where the engines' builds part: the note stays)."""
    section = validated(RadioVisionFields, vision_config, source=source, prefix="vision_config.")
    args = validated(RadioArgs, section.args, source=source, prefix="vision_config.args.")
    around = validated(NanoVlOuterFields, outer, source=source)
    text = outer.get("llm_config") or outer.get("text_config") or {}
    if (
        args.model not in VIT_DIMS
        or outer.get("sound_config")
        or (text.get("num_nextn_predict_layers") or 0) > 0
    ):
        return None
    if any(section.args.get(key, value) != value for key, value in SAME_AS_SGLANG.items()):
        return None
    patch = section.patch_size or 16  # vLLM: the section's, else 16; SGLang: the section's, else the outer's
    if patch != (section.patch_size or around.patch_size):
        return None
    teachers = (
        len({str(t.get("name")) for t in args.teachers})
        if args.cls_token_per_teacher and args.teachers
        else 1
    )
    tokens = _tokens(args.register_multiple, teachers)
    if tokens != _tokens(args.register_multiple, 1):  # SGLang builds one class token
        return None
    temporal = section.video_temporal_patch_size
    # vLLM refuses a shared embedder; SGLang builds no video embedder
    if temporal > 1 and not section.separate_video_embedder:
        return None
    ratio = round(1 / around.downsample_ratio)
    if ratio * around.downsample_ratio != 1:
        raise InputError(f"must be 1 ÷ a whole number (got {around.downsample_ratio})", field="downsample_ratio",
                         source=source)  # fmt: skip
    width, depth, heads, mlp = VIT_DIMS[args.model]
    rows = round(CPE_MAX_SIZE / patch) ** 2
    embedders = 3 * patch**2 * width + (3 * temporal * patch**2 * width if temporal > 1 else 0)
    whole = embedders + rows * width + tokens * width
    # per block: two LayerNorms, ls1 and ls2, the biases of proj and fc2
    whole += depth * (2 * 2 * width + 2 * width + width + width)
    split = depth * (width * mlp + mlp + mlp * width)  # fc1 (with its bias) and fc2
    heads_split = depth * (3 * width * width + 3 * width + width * width)  # qkv (with its bias) and proj
    shuffled = around.vit_hidden_size * ratio * ratio
    mlp1 = shuffled + shuffled * around.projector_hidden_size + around.projector_hidden_size * text_hidden
    head_dim = width // heads
    return TowerSpec(params=whole + mlp1 + split + heads_split, tp_split_params=split, head_split_params=heads_split,
                     heads=heads, config_class=CONFIG_CLASS, source=SOURCE, block_class=BLOCK_CLASS,
                     head_params=depth * (4 * head_dim * width + 3 * head_dim))  # fmt: skip
