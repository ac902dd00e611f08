"""The tower size SGLang's VLM fraction factor reads of a config's vision section (docs/engines/sglang.md §5).

`adjust_mem_fraction_for_vlm` takes `getattr(vision_config, "num_hidden_layers", 24)` and
`getattr(vision_config, "hidden_size", 1024)` of the config *object* SGLang's `get_config` builds: the attribute of that
name, which is config.json's key of the same name unless the config class renames or defaults it, and SGLang's
default where the object has none. So a class that keeps the count as `depth` (Qwen2-VL … Qwen3.5's vision configs)
is read as 24 layers, and a class that leaves the section a dict as 24 × 1024, whatever kvtop reads for the tower's
bytes (`ModelSpec.vision.num_layers`, which takes `depth`). The same two getattrs in every form of the rule: v0.4.9.post3
(#6881) server_args.py … v0.5.6.post2 `ServerArgs.adjust_mem_fraction_for_vlm`, v0.5.23 `arg_groups/memory_hook.py`.
Checked by each release's `get_config` (0.5.6.post2, 0.5.23) over the multimodal configs under tests/data.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.model import VisionSpec

LAYERS_ATTR, WIDTH_ATTR = "num_hidden_layers", "hidden_size"
GETATTR_DEFAULTS = (24, 1024)  # adjust_mem_fraction_for_vlm's defaults: a ViT-L/14 (24 layers of 1,024)
# (config key the class stores as the attribute, the class's default where the key is absent)
Attribute = tuple[str, int]
Reading = tuple[Attribute, Attribute]  # (num_hidden_layers, hidden_size)
DEFAULT_READING: Reading = ((LAYERS_ATTR, GETATTR_DEFAULTS[0]), (WIDTH_ATTR, GETATTR_DEFAULTS[1]))

# The config classes whose vision config gives num_hidden_layers / hidden_size from other keys, or defaults them where
# config.json states neither (the engine's classes are refused where a release does not register them).
CLASS_READING_ERAS: Eras[Mapping[str, Reading]] = Eras((
    Era("", {
        # configs/kimi_k3.py KimiK3VisionConfig: self.num_hidden_layers = vt_num_hidden_layers (default 27),
        # self.hidden_size = vt_hidden_size (default 1024)
        "KimiK3ForConditionalGeneration": (("vt_num_hidden_layers", 27), ("vt_hidden_size", 1024)),
        # configs/kimi_k25.py KimiK25Config builds KimiK25VisionConfig(**vision_config), whose num_hidden_layers and
        # hidden_size default to 27 and 1152; the published section's vt_num_hidden_layers / vt_hidden_size stay
        # attributes of their own names (**kwargs), so the class defaults are read
        "KimiK25ForConditionalGeneration": ((LAYERS_ATTR, 27), (WIDTH_ATTR, 1152)),
    }, "0.5.23 configs/kimi_k3.py KimiK3VisionConfig, configs/kimi_k25.py KimiK25VisionConfig"),
))  # fmt: skip

# The config classes that leave `vision_config` the dict config.json holds: getattr of a dict finds neither
# attribute, so the factor reads 24 × 1024 (a term of 1, × 0.95 alone).
DICT_SECTION_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset({
        # XiaomiMiMo/MiMo-V2.5 configuration_mimo_v2.py MiMoV2Config sets config.json's fields as they are (no
        # config class in SGLang 0.5.23's registry; models/mimo_v2.py turns the dict into MiMoVLVisionConfig itself)
        "MiMoV2ForCausalLM",
    }), "configuration_mimo_v2.py MiMoV2Config (the checkpoint's); SGLang 0.5.23 models/mimo_v2.py reads the dict"),
))  # fmt: skip


def _read(vision: VisionSpec, attribute: Attribute, name: str, whose: str) -> tuple[int, str]:
    """One attribute's value, and the words for it where the section does not state it under its key."""
    key, default = attribute
    stated = vision.field(key)
    if stated is not None:
        return stated, "" if key == name else f"{name} {stated} from {key}"
    return default, f"{name} {default}, {whose} default: the section states no {key}"


def vision_reading(architecture: str, vision: VisionSpec, version: ResolvedVersion) -> tuple[VisionSpec, str]:
    """(layers and width as adjust_mem_fraction_for_vlm reads them, why where that is not kvtop's tower reading)."""
    if architecture in DICT_SECTION_ERAS.at(version):
        read = VisionSpec(num_layers=GETATTR_DEFAULTS[0], hidden_size=GETATTR_DEFAULTS[1])
        return (
            read,
            f"{architecture}'s config class keeps vision_config a dict: getattr reads SGLang's defaults",
        )
    reading = CLASS_READING_ERAS.at(version).get(architecture, DEFAULT_READING)
    whose = "SGLang's" if reading == DEFAULT_READING else "the config class's"
    (layers, on_layers), (width, on_width) = (
        _read(vision, reading[0], LAYERS_ATTR, whose),
        _read(vision, reading[1], WIDTH_ATTR, whose),
    )
    read = VisionSpec(num_layers=layers, hidden_size=width)
    if (layers, width) == (vision.num_layers, vision.hidden_size):
        return read, ""
    words = "; ".join(
        w
        for w, value, kvtop in ((on_layers, layers, vision.num_layers), (on_width, width, vision.hidden_size))
        if w and value != kvtop
    )
    return read, f"SGLang's vision_config: {words} (the tower's {vision.num_layers} × {vision.hidden_size})"
