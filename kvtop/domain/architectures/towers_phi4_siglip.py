"""Phi-4-reasoning-vision's SigLIP2 tower and LLaVA projector, counted as vLLM 0.33.0 builds and shards them
(towers_catalog.BY_OUTER_TYPE picks this kind for the outer model_type "phi4-siglip"; SGLang 0.5.23 registers no
Phi4ForCausalLMV).

vLLM 0.33.0 models/phi4siglip.py `Phi4ForCausalLMV.__init__`:
- `vision_tower`: siglip2.py Siglip2Model over `vision_config` (a dict turned into Siglip2VisionConfig, patch_size
  16 where the dict omits it) built to layer -2 whatever the config says (`num_hidden_layers_override` =
  layers − 1) and without its post-LayerNorm (`require_post_norm=False`): a biased linear patch embedding
  channels × patch² → width and a `num_patches`-row nn.Embedding (whole), then SigLIP2 blocks (two LayerNorms;
  qkv, out, fc1, fc2 biased, QKV / Row / Column / Row-parallel);
- `multi_modal_projector`: llava.py LlavaMultiModalProjector `mm_hidden_size` → the language model's width → that
  width, both biased (linear_1 Column-, linear_2 RowParallelLinear: linear_2's bias whole).
Meta-built (registry sweep, recon--microsoft--Phi-4-reasoning-vision-15B: SigLIP2 so400m 1152 wide, 27 layers,
MLP 4304, 256 patches; text 5120): vision_tower 794,815,808 B and projector 64,245,760 B at TP 1, 398,768,416 B
and 32,128,000 B a rank at TP 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.towers_vit import siglip_encoder
from kvtop.domain.config_types import ConfigSection, Hidden
from kvtop.domain.tower_spec import TowerSpec

SOURCE = "vLLM 0.33.0 models/phi4siglip.py (Siglip2Model to layer -2, LlavaMultiModalProjector)"
LAYER = -2  # phi4siglip.py's fixed layer_idx: mm_vision_select_layer is not read


class Phi4SiglipOuterFields(ConfigSection):
    """The outer config's `mm_hidden_size`, the projector's input (read by attribute: no default)."""

    mm_hidden_size: Hidden | None = None


def phi4_siglip(
    values: Mapping[str, Any], outer: Phi4SiglipOuterFields, text_hidden: int, config_class: str
) -> TowerSpec | None:
    """The vision tower and projector's parameters (whole model): those split over TP and the rest; None where the
    config states no mm_hidden_size (vLLM cannot build the projector)."""
    if outer.mm_hidden_size is None:
        return None
    layers = values["depth"] + LAYER + 1
    whole, split = siglip_encoder(values, values["num_patches"], layers=layers, post_norm=False)
    split += outer.mm_hidden_size * text_hidden + text_hidden + text_hidden * text_hidden  # linear_1, linear_2
    whole += text_hidden  # linear_2's bias
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=SOURCE)
