"""LLaVA-OneVision-2's vision tower (its OneVision encoder) and patch merger, counted as vLLM 0.33.0
llava_onevision2.py builds and shards them (towers_catalog.BY_OUTER_TYPE picks this kind for the outer model_type
`llava_onevision2`; SGLang 0.5.23 registers no LlavaOnevision2 class).

vLLM 0.33.0 llava_onevision2.py `LlavaOnevision2VisionTower.__init__`: an unbiased Conv2d patch embedding
(num_channels × patch² → width: no temporal axis, whatever temporal_patch_size says), `layernorm_pre` (LayerNorm,
weight and bias), `num_hidden_layers` blocks (`LlavaOnevision2VisionTowerBlock`: two LayerNorms; qkv a biased
QKVParallelLinear of num_attention_heads for queries, keys and values alike; proj a RowParallelLinear with its bias,
whole; fc1 a biased ColumnParallelLinear width → intermediate_size; fc2 a RowParallelLinear back, its bias whole),
no post norm, and the merger (`LlavaOnevision2PatchMerger`: ln_q a LayerNorm over width, mlp.0 a biased
ColumnParallelLinear of width × merge² square, mlp.2 a RowParallelLinear to the language model's width,
`config.text_config.hidden_size`, its bias whole). The rotary tables are non-persistent buffers, not parameters.
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_vit import vit_blocks
from kvtop.domain.config_types import ConfigSection, Dim, Hidden, Intermediate, Layers
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "LlavaOnevision2VisionConfig"
SOURCE = "vLLM 0.33.0 llava_onevision2.py (LlavaOnevision2VisionTower); lmms-lab configuration_llava_onevision2.py"


class OneVision2Fields(ConfigSection):
    """The `vision_config` fields vLLM's tower reads (LlavaOnevision2VisionConfig's defaults where absent; vLLM
    reads num_channels with getattr's default 3)."""

    hidden_size: Hidden = 1024
    intermediate_size: Intermediate = 4096
    num_hidden_layers: Layers = 24
    num_channels: Dim = 3
    patch_size: Dim = 14
    spatial_merge_size: Dim = 2


def onevision2(vision: OneVision2Fields, text_hidden: int) -> TowerSpec:
    """The encoder and merger: parameters whole, and those vLLM splits over TP."""
    width, mlp, depth = vision.hidden_size, vision.intermediate_size, vision.num_hidden_layers
    merged = width * vision.spatial_merge_size**2
    whole = vision.num_channels * vision.patch_size**2 * width + 2 * width  # patch embedding; layernorm_pre
    blocks_whole, split = vit_blocks(depth, width, mlp)  # the blocks: CLIP's / SigLIP's layout and split
    whole += blocks_whole
    whole += 2 * width + text_hidden  # ln_q; mlp.2's bias
    split += merged * merged + merged + merged * text_hidden  # mlp.0 with its bias; mlp.2
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE)
