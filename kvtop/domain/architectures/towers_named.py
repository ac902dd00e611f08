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

Yi-VL (SGLang 0.5.23 models/yivl.py YiVLForCausalLM) names no checkpoint but a folder its own checkpoint ships
(`mm_vision_tower` "./vit/clip-vit-H-14-laion2B-s32B-b79K-yi-vl-*-448"): load_weights (yivl.py:41-48) loads
`CLIPVisionModel.from_pretrained(_name_or_path, torch_dtype=float16, subfolder=…)`, whole; its projector
(YiVLMultiModalProjector, yivl.py:96-108) is nn.Linear mm_hidden → hidden, LayerNorm, nn.Linear hidden → hidden,
LayerNorm, biased, whole. kvtop reads config.json only: the tower is sized as the folder's published config
(SUBFOLDER_TOWERS, tests/data/configs/towers_named/SOURCES.md), an assumption the weights row states.
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
# Towers a class loads from a folder inside its own checkpoint (`mm_vision_tower` a relative path), by class: the
# folder's published config (CLIP ViT-H/14 at 448: Yi-VL-34B's vit/…-yi-vl-34B-448/config.json), the LayerNorms
# the class's projector adds (text-wide, weight and bias each), and the row's words for the assumed sizes
YI_VL_CLIP_H14_448: Mapping[str, Any] = {
    "model_type": "clip_vision_model", "depth": 32, "hidden_size": 1280, "intermediate_size": 5120, "in_channels": 3,
    "image_size": 448, "patch_size": 14,
}  # fmt: skip
YI_VL_SOURCE = (
    "SGLang 0.5.23 models/yivl.py YiVLForCausalLM.load_weights (CLIPVisionModel.from_pretrained(subfolder="
    "mm_vision_tower), whole) and YiVLMultiModalProjector"
)
YI_VL_WORDS = (
    "the vision tower and its projector; the engine sizes the CLIP from the checkpoint's mm_vision_tower folder, "
    "which kvtop does not read: Yi-VL's published CLIP ViT-H/14-448 sizes assumed"
)
SUBFOLDER_TOWERS: Mapping[str, tuple[Mapping[str, Any], int, str, str]] = {
    "YiVLForCausalLM": (YI_VL_CLIP_H14_448, 2, YI_VL_SOURCE, YI_VL_WORDS),
}
CONFIG_CLASSES = {"clip_vision_model": "CLIPVisionConfig", "siglip_vision_model": "SiglipVisionConfig"}
# The classes whose configs name their tower by checkpoint id (`mm_vision_tower`), with the engine code that loads
# it: named_tower reads the id, class_verdict (docs/multimodal.md's verdict, towers_coverage) reads this and
# NAMED_TOWERS, so the doc says what the plan books. SGLang 0.5.23: models/llava.py EntryClass (lines 898-903) and
# load_weights (lines 477-481: CLIP or SigLIP by the id); models/llavavid.py load_weights (lines 226-235: CLIP only)
LLAVAVID_SOURCE = (
    "SGLang 0.5.23 models/llavavid.py LlavaVidForCausalLM.load_weights (CLIPVisionModel.from_pretrained("
    "mm_vision_tower), whole) and LlavaMultiModalProjector"
)
# class → (the source, the model types of NAMED_TOWERS its load_weights can build)
_BOTH = frozenset({"clip_vision_model", "siglip_vision_model"})
NAMED_TOWER_CLASSES: Mapping[str, tuple[str, frozenset[str]]] = {
    "LlavaLlamaForCausalLM": (NAMED_TOWER_SOURCE, _BOTH), "LlavaQwenForCausalLM": (NAMED_TOWER_SOURCE, _BOTH),
    "LlavaMistralForCausalLM": (NAMED_TOWER_SOURCE, _BOTH),
    "LlavaVidForCausalLM": (LLAVAVID_SOURCE, frozenset({"clip_vision_model"})),
}  # fmt: skip


def class_verdict(architecture: str) -> str | None:
    """What the plan books for this class's named tower, in the words docs/multimodal.md shows (the config class and
    source first, then where it holds); None for a class that names no tower by id or folder."""
    if architecture in SUBFOLDER_TOWERS:
        values, _, source, _ = SUBFOLDER_TOWERS[architecture]
        return (f"{CONFIG_CLASSES[values['model_type']]} ({source}); planned where mm_vision_tower names the "
                "checkpoint's own folder: the CLIP sized as Yi-VL's published vit/ config (CLIP ViT-H/14-448, "
                "assumed: kvtop does not read the folder; towers_named.SUBFOLDER_TOWERS)")  # fmt: skip
    if architecture not in NAMED_TOWER_CLASSES:
        return None
    source, types = NAMED_TOWER_CLASSES[architecture]
    ids = sorted(name for name, values in NAMED_TOWERS.items() if values["model_type"] in types)
    classes = " or ".join(sorted(CONFIG_CLASSES[t] for t in types))
    return (f"{classes} ({source}); planned where mm_vision_tower names a checkpoint kvtop holds ({', '.join(ids)}; "
            "towers_named.NAMED_TOWERS); another id keeps the note 'vision tower weights … not modelled'")  # fmt: skip


class NamedTowerFields(ConfigSection):
    """The outer config's fields naming the tower and sizing the projector's input."""

    mm_vision_tower: Name
    mm_hidden_size: Hidden


def named_tower(outer: dict[str, Any], text_hidden: int, source: str, architecture: str = "") -> TowerSpec | None:
    """The named tower and the projector, whole on every rank; None where the id is not in NAMED_TOWERS (nor the
    class in SUBFOLDER_TOWERS), or names a kind the class does not build (NAMED_TOWER_CLASSES: LlavaVid, CLIP only)."""
    values = NAMED_TOWERS.get(str(outer.get("mm_vision_tower")))
    norms, tower_source, words = 0, NAMED_TOWER_SOURCE, ""
    if architecture in SUBFOLDER_TOWERS:
        values, norms, tower_source, words = SUBFOLDER_TOWERS[architecture]
    if architecture in NAMED_TOWER_CLASSES and values is not None:  # LLaVA-NeXT-Video builds CLIP only
        tower_source, types = NAMED_TOWER_CLASSES[architecture]
        values = values if values["model_type"] in types else None
    if values is None:
        return None
    fields = validated(NamedTowerFields, outer, source=source)
    if fields.mm_hidden_size != values["hidden_size"]:  # SGLang sets vision_config.hidden_size = mm_hidden_size
        raise InputError(f"must be {fields.mm_vision_tower}'s width, {values['hidden_size']} (got "
                         f"{fields.mm_hidden_size})", field="mm_hidden_size", source=source)  # fmt: skip
    config_class = CONFIG_CLASSES[values["model_type"]]
    every_layer = {**values, "vision_feature_layer": -1}
    as_transformers = llava_tower(every_layer, text_hidden, LlavaProjectorConfig(), "llava", config_class,
                                  tower_source).transformers_params  # fmt: skip
    as_transformers += norms * 2 * text_hidden  # the projector's LayerNorms (Yi-VL's ln_1, ln_2)
    spec = TowerSpec(params=as_transformers, tp_split_params=0, config_class=config_class, source=tower_source,
                     transformers_params=as_transformers)  # fmt: skip
    return spec.model_copy(update={"label": words}) if words else spec
