"""Llama-Nemotron-Nano-VL's projector (`mlp1`), counted as vLLM builds it, beside its vision model named "not
modelled" (model_type `Llama_Nemotron_Nano_VL`, class Llama_Nemotron_Nano_VL; SGLang 0.5.23 registers none).

vLLM 0.33.0 models/nemotron_vl.py LlamaNemotronVLChatModel (0.13.0 the same code, lines 430-449):
- `vision_model` (_init_vision_model, lines 167-177): AutoModel.from_config(config.vision_config,
  trust_remote_code), the checkpoint's own C-RADIO modelling code (nvidia/C-RADIOv2-H radio_model.py: a timm ViT
  under RADIO's patch generator and input conditioner), which vLLM does not ship and no config field kvtop reads
  sizes: `VISION_MODEL_NOT_MODELLED`, a named part beside the counted projector.
- `mlp1` (_init_mlp1, lines 179-202): nn.Sequential(LayerNorm(vit_hidden_size · int(1 / downsample_ratio)², bias),
  Linear(that → projector_hidden_size, bias), GELU, Linear(projector_hidden_size → the text config's
  hidden_size, bias)): plain nn modules, whole on every rank, in the model's dtype (no quant_config passed).
The outer fields are read as vLLM reads them (config.vit_hidden_size, config.projector_hidden_size,
config.downsample_ratio: attributes with no fallback), so a config without one is refused by the field's name.
"""

from __future__ import annotations

from typing import Any

from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import ConfigSection, Factor, Hidden
from kvtop.domain.errors import InputError
from kvtop.domain.tower_spec import TowerSpec

SOURCE = "vLLM 0.33.0 models/nemotron_vl.py LlamaNemotronVLChatModel._init_mlp1 (lines 179-202)"
CONFIG_CLASS = "Llama_Nemotron_Nano_VL (outer fields)"
OUTER_TYPE = "Llama_Nemotron_Nano_VL"
WORDS = "the projector (mlp1) alone; its C-RADIO vision model is not modelled"
VISION_MODEL_NOT_MODELLED = (
    "vision model of Llama_Nemotron_Nano_VL (the checkpoint's own C-RADIO code: vLLM 0.33.0 nemotron_vl.py builds "
    "AutoModel.from_config(vision_config, trust_remote_code), which no engine ships): not in the weights book; "
    "its projector (mlp1) is counted"
)


class NemotronVlOuterFields(ConfigSection):
    """The outer fields _init_mlp1 reads (no defaults: vLLM reads the attributes without a fallback)."""

    vit_hidden_size: Hidden
    projector_hidden_size: Hidden
    downsample_ratio: Factor


def mlp1(outer: dict[str, Any], text_hidden: int, source: str) -> TowerSpec:
    """`mlp1`'s parameters (module docstring): LayerNorm and two biased Linears, whole on every rank."""
    fields = validated(NemotronVlOuterFields, outer, source=source)
    scale = int(1 / fields.downsample_ratio)  # vLLM's int(1 / self.downsample_ratio): truncated, as Python does
    if scale < 1:
        raise InputError(f"must be at most 1 (vLLM's int(1 / ratio) is 0 above it; got {fields.downsample_ratio})",
                         field="downsample_ratio", source=source)  # fmt: skip
    shuffled = fields.vit_hidden_size * scale * scale
    width = fields.projector_hidden_size
    params = 2 * shuffled + (shuffled * width + width) + (width * text_hidden + text_hidden)
    return TowerSpec(params=params, tp_split_params=0, config_class=CONFIG_CLASS, source=SOURCE)
