"""`config.json` (a dict) → `ModelSpec`: the door, the nesting, the entry, its class defaults, the reader.

Every field kvtop reads is validated at the door (`config_schema`); a composite config's language model is
found under its text section (`nesting`); a field the file leaves out takes the class default of its
`model_type` (the entry's `defaults`); the entry is read by `reader.read_architecture`. A `model_type`
without an entry is read generically where its fields allow (`generic`), visibly, or refused naming the
field that stops it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.config_dtype import (
    checkpoint_dtype_bytes,
    checkpoint_half_dtype,
    unstated_dtype,
)
from kvtop.domain.architectures.coverage import (
    WRAPPERS,
    draft_reason,
    named_not_modelled,
    reason_not_modelled,
)
from kvtop.domain.architectures.description import Architecture
from kvtop.domain.architectures.eagle3 import read_dflash_fusion, read_eagle3_head
from kvtop.domain.architectures.fields import Fields
from kvtop.domain.architectures.generic import GENERIC_CLASS, generic_entry
from kvtop.domain.architectures.named_text import named_text
from kvtop.domain.architectures.nesting import (
    CLASS_TEXT,
    TEXT_SECTION_KEYS,
    class_text_model_type,
    served_config,
    text_type_field,
)
from kvtop.domain.architectures.reader import VISION_NOT_MODELLED, read_architecture
from kvtop.domain.architectures.registry import ARCHITECTURES, BY_CLASS_NAME
from kvtop.domain.architectures.rotary_factor import partial_rotary_factor
from kvtop.domain.architectures.strict_fields import strict_type_mismatches
from kvtop.domain.architectures.towers import read_tower
from kvtop.domain.architectures.towers_absent import absent_note, absent_section, not_modelled_note
from kvtop.domain.architectures.towers_catalog import AUDIO_BY_OUTER_TYPE, TOWERS_BY_CLASS
from kvtop.domain.architectures.towers_catalog import BY_OUTER_TYPE as TOWERS_BY_OUTER_TYPE
from kvtop.domain.architectures.towers_fields import ROOT, ROW_WORDS
from kvtop.domain.architectures.towers_named import named_tower
from kvtop.domain.config_schema import OuterConfig, TextConfig, VisionConfig, validated
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.model import ModelSpec, VisionSpec
from kvtop.domain.quant import quant_from_config
from kvtop.domain.unchecked_class import UncheckedClass

AUDIO_NOT_MODELLED = "audio tower weights (`audio_config`: not in the weights book)"
# Vision sections other than `vision_config` that say the class builds a tower (its weights "not modelled" unless a
# tower kind reads them): Ovis's `visual_tokenizer_config` (vLLM 0.33.0 ovis.py: `visual_tokenizer`, a SigLIP/AIMv2
# ViT with its head, and `vte`, the visual embedding table; meta-built, AIDC-AI/Ovis2-34B at TP 1 3,546,980,332 +
# 671,088,640 B beside the language model; towers_ovis reads an AIMv2 backbone's); Ovis2.5's and Ovis2.6's
# `vit_config` (vLLM 0.33.0 ovis2_5.py Ovis2_5.__init__: `visual_tokenizer`, a SigLIP2-NaViT with its head, from
# config.vit_config, and `vte`, visual_vocab_size × hidden)
OTHER_VISION_SECTIONS = ("visual_tokenizer_config", "vit_config")
# LLaVA-NeXT's own format (liuhaotian/llava-v1.6-*, lmms-lab/llava-onevision-*) names its tower by checkpoint id,
# `mm_vision_tower`, with no vision section: SGLang 0.5.23 models/llava.py builds the projector
# (multi_modal_projector) and loads that tower at load time, and serves the class as multimodal
# (configs/model_config.py's multimodal architectures); towers_named counts the ids it knows (the tower whole, as
# transformers' class), another id's weights are not in the book (VISION_NOT_MODELLED)
NAMED_TOWER = "mm_vision_tower"


def read_config(
    config: dict[str, Any],
    *,
    source: str,
    name: str | None,
    hf_quant_config: dict[str, Any] | None,
    hf_source: str,
    family: str | None,
    named_configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> ModelSpec:
    """See the module docstring; `family` forces the entry to read the config as (`--model-family`): the
    config's own class defaults then do not apply, so every field that entry reads must be in the file.
    `named_configs`: the checkpoints' configs kvtop holds, by Hub id, for a language model named by id (named_text)."""
    outer = validated(OuterConfig, config, source=source)  # first: the file must be an object
    if (served := served_config(config)) is not config:  # Qwen2.5-Omni: the thinker the engines build (SERVED_SECTION)
        config, outer = served, validated(OuterConfig, served, source=source)
    config, named_words = named_text(config, source, named_configs or {})  # Ultravox: the language model named by checkpoint id
    nested_key = next((key for key in TEXT_SECTION_KEYS if config.get(key) is not None), None)
    prefix = f"{nested_key}." if nested_key else ""
    architecture = outer.architectures[0] if outer.architectures else outer.model_type or "?"
    if family is None:  # a class kvtop names not modelled is refused so before its fields are read
        section_type = (config[nested_key] if nested_key else config).get("model_type")
        _refuse_not_modelled(architecture, (outer.model_type, section_type), source)
    text = validated(TextConfig, config[nested_key] if nested_key else config, source=source, prefix=prefix)
    stated_type = class_text_model_type(architecture, outer.model_type or "", text.model_type)
    section = config[nested_key] if nested_key else config
    raw_keys = frozenset(k for k, v in section.items() if v not in (None, False, 0, [], {}, ""))
    entry, reading = _entry(stated_type, architecture, text, raw_keys, family, source)
    stated = frozenset(text.model_fields_set)
    tie = text.tie_word_embeddings if "tie_word_embeddings" in stated else outer.tie_word_embeddings
    absent = {} if family is not None else {k: v for k, v in entry.defaults.items() if k not in stated}
    text = text.model_copy(update=absent)
    quant_cfg, quant_prefix = outer.quantization_config, "quantization_config."
    if quant_cfg is None and nested_key is not None:
        quant_cfg, quant_prefix = (
            config[nested_key].get("quantization_config"),
            f"{prefix}quantization_config.",
        )
    quant = quant_from_config(
        quant_cfg, hf_quant_config, source=source, prefix=quant_prefix, hf_source=hf_source
    )
    if outer.quantization_config is not None:  # validated above: a stated quant_method is a str
        literal = outer.quantization_config.get("quant_method")
        quant = quant.model_copy(update={"config_quant_method": literal if isinstance(literal, str) else ""})
    spec = read_architecture(
        Fields(
            text,
            source=source,
            prefix=prefix,
            model_type=entry.model_type,
            defaulted=frozenset(absent),
            structural_defaults=nested_key is not None,
            generic=entry.config_class == GENERIC_CLASS,
            untyped=not stated_type and entry.config_class == GENERIC_CLASS,
        ),
        entry,
        architecture=architecture,
        name=name or outer.name_or_path or architecture,
        dtype_bytes=checkpoint_dtype_bytes(outer, text, prefix, source),
        quant=quant,
        multimodal=outer.vision_config is not None or any(isinstance(config.get(k), dict) for k in OTHER_VISION_SECTIONS)
        or isinstance(config.get(NAMED_TOWER), str) or isinstance(config.get("audio_config"), dict)
        or (outer.model_type or "") in AUDIO_BY_OUTER_TYPE  # an audio tower in another section (Granite-Speech)
        or architecture in TOWERS_BY_CLASS  # or one its class names (Fun-ASR)
        or (entry.tower is not None and entry.tower.section == ROOT),  # or its top level sizes (Whisper's encoder)
        vision=_vision(outer.vision_config, source),
        tie_word_embeddings=tie,
        config_model_type=stated_type,
        reading=reading,
    )
    update: dict[str, Any] = {
        "outer_tie_word_embeddings": outer.tie_word_embeddings if nested_key else None,
        "auto_map_models": _auto_models(outer.auto_map),
        "rope_type": _rope_type(config[nested_key] if nested_key else config),
        "rope_factor": _rope_factor(config[nested_key] if nested_key else config),
        "rope_original_positions": _rope_original(config[nested_key] if nested_key else config),
        "mrope": _mrope(config[nested_key] if nested_key else config),
        "partial_rotary_factor": partial_rotary_factor(config[nested_key] if nested_key else config, entry.model_type),
        "text_section": nested_key or "",
        "text_config_of_own_type": nested_key == "text_config" and bool(outer.model_type)
        and outer.model_type == config["text_config"].get("model_type"),
        "strict_type_mismatches": strict_type_mismatches(stated_type, section, outer.model_type or ""),
        "mm_patch_merge_type": merge if isinstance(merge := config.get("mm_patch_merge_type"), str) else "",
        "top_level_rope": _top_level_rope(config[nested_key] if nested_key else config, spec.head_dim),
        "audio_tower": isinstance(config.get("audio_config"), dict),
        "read_from": (named_words,) if named_words else (),
        "half_dtype": checkpoint_half_dtype(outer, text, prefix),
        # a config that states no dtype: planned in 16 bit, said as assumed (`config_defaults_used`, the notes)
        "config_defaults": spec.config_defaults + tuple(d for d in (unstated_dtype(outer, text, prefix),) if d),
    }  # fmt: skip
    update["eagle3"] = read_eagle3_head(config, architecture, spec.hidden_size, source)
    update["dflash_fusion"] = read_dflash_fusion(config, architecture, spec.hidden_size, source)
    if family is None and outer.architectures and entry.config_class != GENERIC_CLASS:
        update["unchecked_class"] = _unchecked(architecture, entry, outer.model_type or "", nested_key, text.model_type)
    if (why := draft_reason(architecture)) is not None:
        update["speculative_draft"] = f"{architecture} (model_type {stated_type!r}) is not modelled by kvtop: {why}"
    # the outer model_type's tower first: a wrapper over a shared text entry with a tower of its own (MiniCPM-V 4.6
    # over Qwen3.5's text entry, whose Qwen ViT would misread MiniCPM's SigLIP section)
    tower = TOWERS_BY_OUTER_TYPE.get(outer.model_type or "") or TOWERS_BY_CLASS.get(architecture) or entry.tower
    read, absent_why, tower_words = None, None, None
    section = None if tower is None else config if tower.section == ROOT else config.get(tower.section)
    filled = tower is not None and section is None and not isinstance(config.get(NAMED_TOWER), str)
    if filled and tower is not None:  # the class builds its tower from the section its config class fills in
        section, absent_why = absent_section(tower, architecture)
    if tower is not None and isinstance(section, dict):  # `vision_config`, or the section the tower names
        read = read_tower(tower, section, source, spec.hidden_size, config)
    elif isinstance(config.get(NAMED_TOWER), str):  # a tower named by checkpoint id, or a folder the class ships
        read = named_tower(config, spec.hidden_size, source, architecture)  # (towers_named)
        tower_words = None if read is None or read.label == ROW_WORDS["vision"] else read.label
    if filled and tower is not None and isinstance(section, dict) and read is None:  # the defaults did not read
        absent_why = not_modelled_note(tower, architecture)
    if filled and tower is not None and (read is not None or absent_why is not None):
        # the class builds a tower from the section its config class fills in: the engines serve it as multimodal
        # (SGLang's is_multimodal and VLM fraction read hf_config.vision_config, which the class filled in)
        update["multimodal"] = True
        if tower.section == "vision_config" and isinstance(section, dict):
            as_class = _class_keys(tower.config_class, {**tower.defaults, **section})  # the filled section: its defaults
            update["vision"] = _vision(as_class, source)
    if tower is not None and tower.filled_vision is not None:  # the engine fills in a vision_config (Phi-4-MM)
        layers, width = tower.filled_vision  # whether kvtop reads the towers or not: the engine serves it multimodal
        fields = (("hidden_size", width), ("num_hidden_layers", layers))  # the filled SiglipVisionConfig's own names
        update.update(multimodal=True, vision=VisionSpec(num_layers=layers, hidden_size=width, stated=fields))
    update["audio_tower"] = update["audio_tower"] or (tower is not None and tower.audio_elsewhere)
    if absent_why is not None:  # the engine builds a default tower kvtop has no defaults for: named, not zero
        update["not_modelled"] = (*(n for n in spec.not_modelled if n != VISION_NOT_MODELLED), absent_why)
    if read is not None:  # its bytes join the weights book
        has_audio = isinstance(config.get("audio_config"), dict)
        label = tower.label(has_audio) if tower is not None else read.label
        label = tower_words or label  # Yi-VL's: the subfolder's sizes assumed (towers_named.SUBFOLDER_TOWERS)
        if filled and tower is not None:
            label = f"{label}; {absent_note(tower)}"
        kind = tower.row_kind(has_audio) if tower is not None else read.kind
        update["tower"] = read if tower is None else read.model_copy(update={"label": label, "kind": kind})
        audio = tower is not None and tower.audio_counted  # its audio encoder counted too (MiniCPM-o 2.6)
        update["not_modelled"] = tuple(note for note in spec.not_modelled
                                       if note != VISION_NOT_MODELLED and not (audio and note.startswith("audio")))
        update["not_modelled"] += tower.notes if tower is not None else ()
        if isinstance(config.get("audio_config"), dict) and not audio:  # Gemma-4 E2B/E4B: the audio tower is not read
            update["not_modelled"] += (AUDIO_NOT_MODELLED,)
    elif isinstance(config.get("audio_config"), dict) and not any(n.startswith("audio") for n in spec.not_modelled):
        update["not_modelled"] = (*update.get("not_modelled", spec.not_modelled), AUDIO_NOT_MODELLED)  # not read
    spec = spec.model_copy(update=update)
    if family is None or family == stated_type:
        return spec
    forced = f"model_type {stated_type!r} read as {family} (--model-family): what it does not read is omitted"
    return spec.model_copy(update={"not_modelled": (*spec.not_modelled, forced)})


def _entry(
    stated_type: str,
    architecture: str,
    text: TextConfig,
    raw_keys: frozenset[str],
    forced: str | None,
    source: str,
) -> tuple[Architecture, str]:
    """(the entry to read with, how it reads): the forced one, the config's own, else a generic reading."""
    if forced is not None:
        if forced not in ARCHITECTURES:
            raise InputError(
                f"unknown family {forced!r}; families: {', '.join(sorted(ARCHITECTURES))}",
                field="--model-family",
            )
        return ARCHITECTURES[forced], f"read as {forced} (--model-family)"
    if stated_type in ARCHITECTURES:
        entry = ARCHITECTURES[stated_type]
        return entry, f"architecture entry {entry.model_type} ({entry.config_class})"
    if (
        architecture in BY_CLASS_NAME
    ):  # the engines load the class this name registers, whatever model_type says
        entry = BY_CLASS_NAME[architecture]
        what = f"model_type {stated_type!r}" if stated_type else "no model_type"
        return (
            entry,
            f"architecture entry {entry.model_type} ({entry.config_class}), by its class {architecture} ({what})",
        )
    why = reason_not_modelled(architecture)
    if why is not None:
        what = f"model_type {stated_type!r}" if stated_type else "no model_type"
        raise UnsupportedModelError(f"{architecture} ({what}) is not modelled by kvtop: {why}", field="architectures",
                                    source=source)  # fmt: skip
    return generic_entry(stated_type, architecture, text, raw_keys, source)


def _unchecked(
    architecture: str, entry: Architecture, outer_type: str, section_key: str | None, nested_type: str | None
) -> UncheckedClass | None:
    """The class read through an entry that does not list it (`UncheckedClass`); None where it is checked: an entry's
    own class, a class fixed to a language model (nesting.CLASS_TEXT), a wrapper read through its text section
    (coverage.WRAPPERS), or a speculative draft (said as one: `speculative_draft`)."""
    if architecture in BY_CLASS_NAME or architecture in CLASS_TEXT or architecture in WRAPPERS:
        return None
    if draft_reason(architecture) is not None:
        return None
    return UncheckedClass(
        architecture=architecture, read_as=entry.model_type, config_class=entry.config_class,
        chosen_by=text_type_field(outer_type, section_key, nested_type),
    )  # fmt: skip


def _refuse_not_modelled(architecture: str, model_types: tuple[object, ...], source: str) -> None:
    """Refuse a class coverage names not modelled, where no entry reads it (its class or a stated model_type): the
    same refusal `_entry` makes, before the fields' types are checked (a class's list-valued fields would otherwise be
    refused as "must be an integer" rather than by its reason). A class coverage names by name
    (`coverage.NAMED_NOT_MODELLED`: the decoders' and the speech classes' tables) is refused so even where its
    model_type has an entry: the engines build the class, not the model_type (MiMo-V2.5-ASR's qwen2)."""
    named = named_not_modelled(architecture) is not None
    if not named and (
        architecture in BY_CLASS_NAME or any(isinstance(t, str) and t in ARCHITECTURES for t in model_types)
    ):
        return
    why = reason_not_modelled(architecture)
    if why is not None:
        stated = next((t for t in model_types if isinstance(t, str) and t), "")
        what = f"model_type {stated!r}" if stated else "no model_type"
        raise UnsupportedModelError(f"{architecture} ({what}) is not modelled by kvtop: {why}", field="architectures",
                                    source=source)  # fmt: skip


def _auto_models(auto_map: dict[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """`auto_map`'s model classes (`AutoModel…` keys; a list's last entry is the class, "repo--module.Class")."""
    found = []
    for key, value in (auto_map or {}).items():
        target = value[-1] if isinstance(value, list) and value else value
        if key.startswith("AutoModel") and isinstance(target, str):
            found.append((key, target.split("--")[-1]))
    return tuple(found)


# The vision config classes (transformers 5.19.0) that name their layer count `num_hidden_layers`, where a tower's
# defaults say `depth` (towers_fields.TowerConfig reads either): a filled section's fields under the class's own names,
# which an engine's rule reads by attribute (VisionSpec.stated; Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Glm4v's classes keep
# `depth`).
_LAYERS_NAMED_NUM_HIDDEN_LAYERS = frozenset({
    "Llama4VisionConfig", "Idefics3VisionConfig", "SiglipVisionConfig", "Siglip2VisionConfig",
    "PixelShuffleSiglip2VisionConfig", "CLIPVisionConfig",
})  # fmt: skip


def _class_keys(config_class: str, section: dict[str, Any]) -> dict[str, Any]:
    """`section` with a tower default's `depth` under the class's own name (`_LAYERS_NAMED_NUM_HIDDEN_LAYERS`)."""
    if config_class not in _LAYERS_NAMED_NUM_HIDDEN_LAYERS or "depth" not in section:
        return section
    renamed = {k: v for k, v in section.items() if k != "depth"}
    return {**renamed, "num_hidden_layers": section.get("num_hidden_layers", section["depth"])}


def _vision(vision: dict[str, Any] | None, source: str) -> VisionSpec | None:
    """`vision_config`'s layer count and width; SGLang's defaults (24, 1024) stand in for absent ones."""
    if vision is None:
        return None
    tower = validated(VisionConfig, vision, source=source, prefix="vision_config.")
    sizes: dict[str, Any] = {"num_layers": tower.num_hidden_layers, "hidden_size": tower.hidden_size}
    stated = tuple(sorted((k, v) for k, v in vision.items() if isinstance(v, int) and not isinstance(v, bool)))
    indexes = vision.get("deepstack_visual_indexes")  # Qwen3-VL's deepstack layers: their count is what engines read
    levels = len(indexes) if isinstance(indexes, list) else None
    return VisionSpec(**{k: v for k, v in sizes.items() if v is not None}, stated=stated, deepstack_levels=levels)


def _rope_type(section: dict[str, Any]) -> str:
    """The RoPE type the language model's section states (`rope_type`, else the legacy `type`), or ''."""
    for key in ("rope_scaling", "rope_parameters"):
        block = section.get(key)
        if isinstance(block, dict):
            stated = block.get("rope_type", block.get("type"))
            if isinstance(stated, str):
                return stated
    return ""


def _rope_factor(section: dict[str, Any]) -> float:
    """The `factor` of the rope block `_rope_type` reads (1.0 where it states none, or not a positive number)."""
    for key in ("rope_scaling", "rope_parameters"):
        block = section.get(key)
        if isinstance(block, dict) and isinstance(block.get("rope_type", block.get("type")), str):
            stated = block.get("factor")
            return float(stated) if isinstance(stated, int | float) and not isinstance(stated, bool) and stated > 0 else 1.0
    return 1.0


def _rope_original(section: dict[str, Any]) -> int:
    """The `original_max_position_embeddings` of the rope block `_rope_type` reads, else the section's top-level one
    where the section states a rope block (Phi-3 / Phi-4-mini longrope configs state it there: vLLM's
    patch_rope_parameters copies it into the block, v0.12.0 transformers_utils/config.py:316-318); 0 where neither."""
    def whole(stated: object) -> int:
        return stated if isinstance(stated, int) and not isinstance(stated, bool) and stated > 0 else 0

    for key in ("rope_scaling", "rope_parameters"):
        block = section.get(key)
        if isinstance(block, dict) and isinstance(block.get("rope_type", block.get("type")), str):
            return whole(block.get("original_max_position_embeddings")) or whole(section.get("original_max_position_embeddings"))
    return 0


def _mrope(section: dict[str, Any]) -> bool:
    """Whether the language model's rope block (`rope_scaling` / `rope_parameters`) states `mrope_section`."""
    return any(isinstance(block := section.get(key), dict) and "mrope_section" in block
               for key in ("rope_scaling", "rope_parameters"))  # fmt: skip


def _top_level_rope(section: dict[str, Any], head_dim: int) -> tuple[int, int] | tuple[()]:
    """A rope the section states at its top level (`rope_type` with `original_max_position_embeddings` and
    `scaling_factor`, as xAI's Grok-2 config.json does): (positions, rotary width), the positions
    ceil(original × factor) as `torch.arange` counts them; () where any of the three is missing."""
    stated, positions, factor = (section.get(k) for k in ("rope_type", "original_max_position_embeddings", "scaling_factor"))
    if not stated or isinstance(positions, bool) or not isinstance(positions, int) or isinstance(factor, bool):
        return ()
    if not isinstance(factor, int | float) or factor <= 0 or positions <= 0:
        return ()
    return math.ceil(positions * factor), head_dim // 2 if section.get("rope_rotate_half_dims") else head_dim
