"""A vision-language class read from a config without its tower's section: the engines still build the tower from
the sub-config the config class fills in (transformers 5.20.2 sub_configs_defaults), so kvtop books it from the
catalog's `Tower.absent_default`, says so in the tower row's note, and names it "not modelled" where it has none.

Expected bytes: the engines' meta builds of the registry default configs (tests/data/engine_diff/registry/
vllm-0.33.0.json rows `default--<Class>`, whose section is the one the config class fills in), or by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.architectures.towers_absent import TEXT_ONLY_CLASSES
from kvtop.domain.architectures.towers_coverage import tower_of
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

REGISTRY = DATA / "engine_diff" / "registry" / "configs"


def _less(path: str, section: str = "vision_config") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / path).read_text())
    del data[section]
    return data


def _vision_rows(config: dict[str, Any]) -> list[Any]:
    book = weights_book(model_from_config(config), ParallelLayout(tp=1), range(0, 1), first_stage=True,
                        last_stage=False)  # fmt: skip
    return [row for row in book.rows if row.component in TOWER_KINDS]


@pytest.mark.parametrize(
    ("name", "engine_bytes"),
    [
        # vLLM 0.33.0 default--Glm4vForConditionalGeneration, TP 1: visual 1,784,996,864 B
        ("Glm4vForConditionalGeneration", 1_784_996_864),
        # vLLM 0.33.0 default--LlavaNextVideoForConditionalGeneration, TP 1: vision_tower 581,818,368 +
        # multi_modal_projector 41,959,424 B (LlavaNextVideoConfig fills in a CLIP-L/336, not CLIPVisionConfig())
        ("LlavaNextVideoForConditionalGeneration", 581_818_368 + 41_959_424),
    ],
)
def test_a_missing_vision_config_books_the_tower_the_engine_builds(name: str, engine_bytes: int) -> None:
    """Before: no tower row and no note (the engine's bytes above silently left out)."""
    (row,) = _vision_rows(_less(f"engine_diff/registry/configs/{name}.json"))
    assert int(row.bytes) == engine_bytes
    assert "no vision_config in the file:" in row.note and "as the engine builds it" in row.note


def test_qwen2_5_vl_7b_without_vision_config_books_the_class_default_tower() -> None:
    """Qwen2_5_VLConfig fills in Qwen2_5_VLVisionConfig() (transformers 5.20.2 configuration_qwen2_5_vl.py: depth 32,
    hidden 3584, intermediate 3420, patch 14, temporal 2, merge 2, out_hidden 3584), which vLLM 0.33.0
    qwen2_5_vl.py builds. By hand, per block: 2 RMSNorms 2*3584, qkv 3584*3*3584 + 3*3584, proj 3584*3584 + 3584,
    gate and up 2*(3584*3420 + 3420), down 3420*3584 + 3584 = 88,183,992; 32 blocks, the unbiased Conv3d patch
    3*2*14*14*3584, the merger's RMSNorm 3584 and MLP (14336*14336 + 14336) + (14336*3584 + 3584):
    3,083,025,152 parameters, 6,166,050,304 B in bf16 (before: no tower row, nothing booked)."""
    (row,) = _vision_rows(_less("configs/heldout/Qwen--Qwen2.5-VL-7B-Instruct.json"))
    assert int(row.bytes) == 6_166_050_304
    assert "Qwen2_5_VLVisionConfig defaults" in row.note


def test_a_tower_without_known_defaults_is_named_not_modelled() -> None:
    """Qwen3-VL's tower has no absent_default in the catalog yet: no row, and a named "not modelled" line."""
    config = _less("engine_diff/configs/Qwen--Qwen3-VL-8B-Instruct.json")
    assert _vision_rows(config) == []
    notes = model_from_config(config).not_modelled
    assert any("without `vision_config`" in note and "Qwen3VLVisionConfig" in note for note in notes)


@pytest.mark.parametrize(
    "name", ["Step3TextForCausalLM", "Qwen3_5ForCausalLM", "MuseGlimmerForCausalLM", "Step3p5ForCausalLM"]
)
def test_a_text_only_class_on_a_tower_entry_gains_no_tower(name: str) -> None:
    """Text-only classes sharing an entry with a tower build none (vLLM 0.33.0 step3_text.py, qwen3_5.py's
    Qwen3_5ForCausalLM, muse_glimmer.py, step3p5.py): their registry default configs have no vision_config, and no
    tower row nor tower note appears."""
    config = json.loads((REGISTRY / f"{name}.json").read_text())
    assert "vision_config" not in config
    assert _vision_rows(config) == []
    assert not any("vision" in note for note in model_from_config(config).not_modelled)


def _tower_classes() -> list[str]:
    return sorted(
        path.stem
        for path in REGISTRY.glob("*.json")
        if (tower := tower_of(path.stem)) is not None
        and path.stem not in TEXT_ONLY_CLASSES
        and tower.absent_default is not None
    )


@pytest.mark.parametrize("name", _tower_classes())
def test_every_default_config_less_its_section_books_the_same_tower(name: str) -> None:
    """The registry default config's section is the one its config class fills in (transformers 5.20.2
    sub_configs_defaults), so the config less that section must give the bytes it gives with it: 31 classes,
    each `absent_default` in the catalog checked against the config class's own filling."""
    config = json.loads((REGISTRY / f"{name}.json").read_text())
    tower = tower_of(name)
    assert tower is not None
    (full,) = _vision_rows(config)
    served = config.get("thinker_config", config)  # the Omni / ASR thinker the engines build (nesting.SERVED_SECTION)
    del served[tower.section]
    (less,) = _vision_rows(config)
    assert int(less.bytes) == int(full.bytes)
