"""Ovis2.5's visual tokenizer (a SigLIP2-NaViT with its head) and visual embedding table, counted as vLLM 0.33.0
ovis2_5.py builds and shards them (towers.py picks this kind by the outer model_type `ovis2_5`; its section is
`vit_config`).

vLLM 0.33.0 ovis2_5.py `VisualTokenizer._init_backbone` builds siglip2navit.py `Siglip2NavitModel` for a
`vit_config` of model_type `siglip2_navit` (another one: "Unsupported visual tokenizer model_type"): a biased patch
embedding (Conv2dLayer, or a ReplicatedLinear of channels × patch² where `num_patches` > 0), a position table where
`preserve_original_pe` ((image ÷ patch)² rows, or `num_patches`), blocks of two LayerNorms, qkv (QKVParallelLinear,
biased), out_proj (Row, its bias whole), fc1 (Column, biased) and fc2 (Row, its bias whole), and a post LayerNorm;
then the head: a ReplicatedLinear width × hidden_stride² → visual_vocab_size − 4 (ovis2_5.py INDICATOR_IDS) without
bias and a LayerNorm over that width (whole). `vte` (ovis.py VisualEmbedding, an nn.Embedding of visual_vocab_size
× the outer config's hidden_size: whole). AIDC-AI/Ovis2.5-9B meta-built: visual_tokenizer 1,431,273,936 B at TP 1,
1,019,993,952 B a rank at TP 2; vte 536,870,912 B at both. SGLang 0.5.23 registers no `Ovis2_5` class.
"""

from __future__ import annotations

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Hidden, Intermediate, Layers, Name
from kvtop.domain.tower_spec import TowerSpec

NAVIT_TYPE = "siglip2_navit"
INDICATOR_TOKENS = 4  # vLLM 0.33.0 ovis2_5.py INDICATOR_IDS: four ids reserved from the head's width
SOURCE = "vLLM 0.33.0 ovis2_5.py (VisualTokenizer, vte), siglip2navit.py; AIDC-AI/Ovis2.5-9B configuration_ovis2_5.py"


class Siglip2NavitFields(ConfigSection):
    """The `vit_config` fields vLLM's Siglip2NavitModel and the head read (every one stated: no class defaults)."""

    model_type: Name
    hidden_size: Hidden
    intermediate_size: Intermediate
    num_hidden_layers: Layers
    num_channels: Dim
    image_size: Dim
    patch_size: Dim
    num_patches: int
    preserve_original_pe: Flag
    hidden_stride: Dim


class Ovis25OuterFields(ConfigSection):
    """Ovis2_5_Config's own fields the vte reads."""

    visual_vocab_size: Dim
    hidden_size: Hidden


def ovis2_5(vit: Siglip2NavitFields, outer: Ovis25OuterFields, config_class: str) -> TowerSpec | None:
    """The visual tokenizer and vte; None where the backbone is not a SigLIP2-NaViT."""
    if vit.model_type != NAVIT_TYPE:
        return None
    width, mlp, depth = vit.hidden_size, vit.intermediate_size, vit.num_hidden_layers
    whole = vit.num_channels * vit.patch_size**2 * width + width  # the patch embedding and its bias
    if vit.preserve_original_pe:
        rows = vit.num_patches if vit.num_patches > 0 else (vit.image_size // vit.patch_size) ** 2
        whole += rows * width
    whole += (
        depth * (4 * width + width + width) + 2 * width
    )  # two LayerNorms, out_proj's and fc2's biases; post
    split = depth * (3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    head = outer.visual_vocab_size - INDICATOR_TOKENS
    whole += width * vit.hidden_stride**2 * head + 2 * head  # the head's linear and LayerNorm
    whole += outer.visual_vocab_size * outer.hidden_size  # vte
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=SOURCE)
