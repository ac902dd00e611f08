"""Ovis's (Ovis1.6 / Ovis2) visual tokenizer and visual embedding table, counted as vLLM 0.33.0 ovis.py builds and
shards them (towers.py picks this kind by the outer model_type `ovis`; its section is `visual_tokenizer_config`).

vLLM 0.33.0 ovis.py `VisualTokenizer` over an AIMv2 backbone (vLLM configs/ovis.py reads `backbone_config` model_type
`aimv2` as transformers' Aimv2VisionConfig, its defaults where absent): aimv2.py AIMv2Model without its post-norm
(`require_post_norm=False`) — a biased Conv2d patch and an RMSNorm, a (image ÷ patch)² × width position table, blocks
of two RMSNorms, qkv (QKVParallelLinear, biased by `qkv_bias`), proj (Row) and the SwiGLU fc13 (MergedColumn) and fc2
(Row), biased by `mlp_bias` — then the head: a ReplicatedLinear width × hidden_stride² → vocab_size − 5 (the image
indicator tokens) without bias and a LayerNorm over that width (whole). `vte` (VisualEmbedding, an nn.Embedding of
vocab_size × the language model's width: whole). AIDC-AI/Ovis2-34B meta-built: visual_tokenizer 3,546,980,332 B at
TP 1, 2,313,854,956 B a rank at TP 2, vte 671,088,640 B at both. A SigLIP backbone (Ovis1.6's
`siglip_visual_tokenizer`) or `depths` (the backbone's layer count by another field) is not read: None, the note
stays (no engine figure for them here). SGLang 0.5.23 registers no `Ovis` class.
"""

from __future__ import annotations

from pydantic import Field

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Hidden, Intermediate, Layers, Name
from kvtop.domain.tower_spec import TowerSpec

IMAGE_INDICATOR_TOKENS = 5  # ovis.py IMAGE_INDICATOR_IDS: [-301 … -305], reserved from the head's width


class Aimv2BackboneFields(ConfigSection):
    """transformers' Aimv2VisionConfig fields (its class defaults where absent)."""

    model_type: Name
    hidden_size: Hidden = 1024
    intermediate_size: Intermediate = 2816
    num_hidden_layers: Layers = 24
    num_channels: Dim = 3
    image_size: Dim = 224
    patch_size: Dim = 14
    qkv_bias: Flag = False
    mlp_bias: Flag = False


class OvisTokenizerFields(ConfigSection):
    """vLLM configs/ovis.py BaseVisualTokenizerConfig's fields (its defaults where absent)."""

    model_type: Name | None = None
    vocab_size: Dim = 16384
    hidden_stride: Dim = 1
    depths: str | list[int] | None = None
    backbone_config: dict[str, object] = Field(default_factory=dict)


def ovis(tokenizer: OvisTokenizerFields, backbone: Aimv2BackboneFields, text_hidden: int, config_class: str,
         source: str) -> TowerSpec | None:  # fmt: skip
    """The visual tokenizer and vte; None where the backbone is not AIMv2 or `depths` is stated."""
    if tokenizer.model_type != "aimv2_visual_tokenizer" or backbone.model_type != "aimv2":
        return None
    if tokenizer.depths is not None:
        return None
    width, mlp, depth = backbone.hidden_size, backbone.intermediate_size, backbone.num_hidden_layers
    positions = (backbone.image_size // backbone.patch_size) ** 2
    whole = backbone.num_channels * backbone.patch_size**2 * width + width + width + positions * width
    whole += depth * (
        2 * width + (width if backbone.mlp_bias else 0) * 2
    )  # two RMSNorms; proj's, fc2's biases
    qkv_bias = 3 * width if backbone.qkv_bias else 0
    mlp_bias = 2 * mlp if backbone.mlp_bias else 0
    split = depth * (3 * width * width + qkv_bias + width * width + 2 * width * mlp + mlp_bias + mlp * width)
    head = tokenizer.vocab_size - IMAGE_INDICATOR_TOKENS
    whole += width * tokenizer.hidden_stride**2 * head + 2 * head
    whole += tokenizer.vocab_size * text_hidden  # vte
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)
