"""A multimodal class read from a config without its tower's section (`vision_config`, `audio_config`, …): the
engines still build the tower, from the sub-config transformers (or the engine's config class) fills in where the
section is None. Which section that is, per tower, is data (`Tower.absent_default`); a tower without one is named
"not modelled", never booked as zero. Only a class the catalog gives a tower (`towers_coverage.tower_of`) builds
one; the text-only classes that share an entry with a tower are listed here.
"""

from __future__ import annotations

from typing import Any

from kvtop.domain.architectures.towers_coverage import tower_of
from kvtop.domain.architectures.towers_fields import Tower

# Text-only classes on an entry that carries a tower (table_dense, table_hybrid, table_layouts, table_moe): vLLM
# 0.33.0 / SGLang 0.5.23 build these without a vision model whatever the config holds
TEXT_ONLY_CLASSES = frozenset({
    "Gemma3ForCausalLM", "MuseGlimmerForCausalLM", "Step3p7FlashForCausalLM", "Step3p5ForCausalLM",
    "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "Step3TextForCausalLM",
})  # fmt: skip
# Classes served with an entry's tower that the entry does not list: vLLM 0.33.0's registry serves HfMoondream with
# Moondream3's class (registry default--HfMoondream meta-built as Moondream3ForCausalLM's, tower included)
SERVED_WITH_TOWER = frozenset({"HfMoondream"})


def absent_note(tower: Tower) -> str:
    """The tower row's note where the section was filled in: the class defaults, or the sizes the outer config
    class fills in (llava's CLIP-L/336); a tower sized from another file of the checkpoint says so (absent_words)."""
    if tower.absent_words:
        return tower.absent_words
    built = (
        f"transformers' {tower.config_class} defaults"
        if not tower.absent_default
        else (f"the {tower.config_class} its config class fills in")
    )
    return f"no {tower.section} in the file: {built}, as the engine builds it"


def not_modelled_note(tower: Tower, architecture: str) -> str:
    """The plan's "not modelled" line where the engine builds a default tower kvtop has no defaults for."""
    return (f"{tower.label(False).removeprefix('the ')} weights ({architecture} without `{tower.section}`: the engine "
            f"builds {tower.config_class}'s default tower; kvtop has no defaults for it): not in the weights book")  # fmt: skip


def absent_section(tower: Tower, architecture: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the section to read the tower from, the not-modelled note) for a config lacking `tower.section`:
    (None, None) for a class without a tower (text-only, or one the catalog does not give it); the section the
    catalog says the config class fills in; else a named not-modelled note."""
    if architecture in TEXT_ONLY_CLASSES or (
        tower_of(architecture) is None and architecture not in SERVED_WITH_TOWER
    ):
        return None, None
    if tower.absent_default is not None:
        return dict(tower.absent_default), None
    return None, not_modelled_note(tower, architecture)
