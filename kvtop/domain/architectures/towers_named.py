"""Vision towers a config names by checkpoint id instead of describing them: LLaVA-NeXT's own format
(liuhaotian/llava-v1.6-*, lmms-lab/llava-onevision-*) states `mm_vision_tower` and no vision section.

SGLang 0.5.23 models/llava.py: LlavaLlamaForCausalLM / LlavaQwenForCausalLM / LlavaMistralForCausalLM build the
projector in __init__ (LlavaMultiModalProjector: linear_1 mm_hidden_size → hidden and linear_2 hidden → hidden, with
biases, nn.Linear, whole on every rank) and, in `LlavaBaseForCausalLM.load_weights`, load the named checkpoint's
tower with transformers' own class: `CLIPVisionModel.from_pretrained(mm_vision_tower, torch_dtype=float16)` where
the id holds "clip", `SiglipVisionModel` where it holds "siglip". That is the whole model, whole on every rank (no
TP): every layer whatever `mm_vision_select_layer` (−2 selects a hidden state, `encode_images`, it drops no layer),
the post-LayerNorm, and SigLIP's pooling head (`vision_use_head`, SiglipVisionConfig's default True). Its shape is
the checkpoint's published config, which kvtop cannot fetch: NAMED_TOWERS holds the ones known (copies and sources
in tests/data/configs/towers_named/); another id keeps the tower "not modelled" (reader.VISION_NOT_MODELLED).
The tower is held in float16 whatever the model's dtype: bytes are the model's dtype bytes, right for the 2-byte
dtypes SGLang serves (bfloat16 / float16), not for `--dtype float32`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.towers_phi import CLIP_L14_336
from kvtop.domain.architectures.towers_vit import LlavaProjectorConfig, llava_tower
from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import ConfigSection, Hidden, Name
from kvtop.domain.errors import InputError
from kvtop.domain.tower_spec import TowerSpec

NAMED_TOWER_SOURCE = (
    "SGLang 0.5.23 models/llava.py LlavaBaseForCausalLM.load_weights (CLIPVisionModel / SiglipVisionModel "
    "from_pretrained(mm_vision_tower), whole) and LlavaMultiModalProjector"
)
# The published config.json's vision model of each checkpoint (tests/data/configs/towers_named/SOURCES.md), in the
# key names towers_vit reads. CLIP ViT-L/14-336 is the shape vLLM's phi3v.py states as a constant (towers_phi).
NAMED_TOWERS: Mapping[str, Mapping[str, Any]] = {
    "openai/clip-vit-large-patch14-336": {**CLIP_L14_336, "model_type": "clip_vision_model"},
    "google/siglip-so400m-patch14-384": {
        "model_type": "siglip_vision_model", "depth": 27, "hidden_size": 1152, "intermediate_size": 4304,
        "in_channels": 3, "image_size": 384, "patch_size": 14, "vision_use_head": True,
    },
}  # fmt: skip
CONFIG_CLASSES = {"clip_vision_model": "CLIPVisionConfig", "siglip_vision_model": "SiglipVisionConfig"}


class NamedTowerFields(ConfigSection):
    """The outer config's fields naming the tower and sizing the projector's input."""

    mm_vision_tower: Name
    mm_hidden_size: Hidden


def named_tower(outer: dict[str, Any], text_hidden: int, source: str) -> TowerSpec | None:
    """The named tower and the projector, whole on every rank; None where the id is not in NAMED_TOWERS."""
    values = NAMED_TOWERS.get(str(outer.get("mm_vision_tower")))
    if values is None:
        return None
    fields = validated(NamedTowerFields, outer, source=source)
    if fields.mm_hidden_size != values["hidden_size"]:  # SGLang sets vision_config.hidden_size = mm_hidden_size
        raise InputError(f"must be {fields.mm_vision_tower}'s width, {values['hidden_size']} (got "
                         f"{fields.mm_hidden_size})", field="mm_hidden_size", source=source)  # fmt: skip
    config_class = CONFIG_CLASSES[values["model_type"]]
    every_layer = {**values, "vision_feature_layer": -1}
    as_transformers = llava_tower(every_layer, text_hidden, LlavaProjectorConfig(), "llava", config_class,
                                  NAMED_TOWER_SOURCE).transformers_params  # fmt: skip
    return TowerSpec(params=as_transformers, tp_split_params=0, config_class=config_class, source=NAMED_TOWER_SOURCE,
                     transformers_params=as_transformers)  # fmt: skip
