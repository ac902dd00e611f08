"""docs/multimodal.md's tower verdict for a class is what the plan books for every real config under tests/data that
names the class (`model_from_config`, the ModelSpec `kvtop plan` renders: its `vision` weights row is `ModelSpec.tower`).

The doc's verdicts come from `towers_coverage.tower_verdict`; a class's verdict once disagreed with the plan for
LLaVA-NeXT's own format (LlavaLlama/Qwen/Mistral/VidForCausalLM: the tower named by `mm_vision_tower`, booked through
towers_named, while the doc said "not modelled") and for wrappers whose outer model_type the verdict's table lacked.
A config the plan refuses for a field (not the class) has no tower row to compare, and is left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.reader import VISION_NOT_MODELLED
from kvtop.domain.architectures.towers_named import NAMED_TOWER_CLASSES, SUBFOLDER_TOWERS
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

DOC = DATA.parents[1] / "docs" / "multimodal.md"
# Files whose plan differs from their class's verdict for a reason of the file, not the class: none since session 47
# (MLC's Ministral-3-3B, outer model_type 'ministral3', now gets Pixtral by its class: test below)
FILE_DISAGREES: dict[str, tuple[str, str]] = {}


def _doc_verdicts() -> dict[str, tuple[str, str]]:
    """class → (tower verdict, reason) as the doc's table states it: 'tower', 'no_tower' or 'not_modelled'."""
    verdicts = {}
    for line in DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) != 5 or cells[0] in ("class", "---"):
            continue
        name, _, language, tower, reason = cells
        kind = "tower" if tower == "planned" else "not_modelled" if language == "not modelled" else "no_tower"
        verdicts[name] = (kind, reason)
    return verdicts


def _configs(names: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """(path under tests/data, config) for every JSON object there whose first architecture is one of `names`."""
    found = []
    for path in sorted(DATA.rglob("*.json")):
        try:
            config = json.loads(path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        archs = config.get("architectures") if isinstance(config, dict) else None
        if isinstance(archs, list) and archs and archs[0] in names:
            found.append((str(path.relative_to(DATA)), config))
    return found


def _plan_verdict(config: dict[str, Any], source: str) -> str | None:
    """What the plan does with the config's tower; None where it refuses the file for a field, not the class."""
    try:
        model = model_from_config(config, source=source)
    except UnsupportedModelError as refused:
        return "not_modelled" if "is not modelled by kvtop: " in str(refused) else None
    except InputError:
        return None
    return "tower" if model.tower is not None else "no_tower"


def test_the_doc_says_what_the_plan_books_for_every_config_at_hand() -> None:
    doc = _doc_verdicts()
    compared, disagree = [], {}
    for path, config in _configs(set(doc)):
        plan = _plan_verdict(config, path)
        if plan is None:
            continue
        compared.append(path)
        said = doc[config["architectures"][0]][0]
        if plan != said:
            disagree[path] = (said, plan)
    assert disagree == FILE_DISAGREES
    named = {path for path, _ in _configs(set(NAMED_TOWER_CLASSES) | set(SUBFOLDER_TOWERS))}
    assert len(named) == 5 and named <= set(compared)  # the four LLaVA-NeXT-format classes' configs and Yi-VL's


@pytest.mark.parametrize("name", sorted({*NAMED_TOWER_CLASSES, *SUBFOLDER_TOWERS}))
def test_a_named_towers_verdict_names_the_source_the_plan_books(name: str) -> None:
    """The reason starts with the tower's config class and the engine code the plan's row cites (Yi-VL's: yivl.py,
    not llava's LlavaMultiModalProjector)."""
    kind, reason = _doc_verdicts()[name]
    assert kind == "tower"
    for path, config in _configs({name}):
        tower = model_from_config(config, source=path).tower
        assert tower is not None
        assert reason.startswith(f"{tower.config_class}") or reason.startswith("CLIPVisionConfig or SiglipVisionConfig")
        assert f"({tower.source})" in reason, path


def test_llava_next_video_books_clip_l_whole_on_every_rank() -> None:
    """SGLang 0.5.23 models/llavavid.py load_weights (lines 226-235): CLIPVisionModel.from_pretrained(mm_vision_tower,
    float16), whole; LlavaMultiModalProjector linear_1 1024 → 4096 and linear_2 4096 → 4096, biased (llava.py).
    By hand: CLIP-L/336 303,507,456 parameters (tests/data/configs/towers_named/SOURCES.md) × 2 B = 607,014,912;
    projector (4096 × 1024 + 4096 + 4096 × 4096 + 4096) × 2 B = 41,959,424: 648,974,336 B on each of TP 1 and 2,
    as SGLang 0.5.23's meta build holds them (the registry rows: vision_tower, multi_modal_projector)."""
    path = "configs/recon/recon--lmms-lab--LLaVA-NeXT-Video-7B.json"
    model = model_from_config(json.loads((DATA / path).read_text()), source=path)
    for tp in (1, 2):
        book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True)
        assert next(row for row in book.rows if row.component == "vision").bytes == 648_974_336
        row = row_of("sglang", "0.5.23", Path(path).stem, tp)
        built = row["stages"][0]["param_bytes"]
        assert (built["vision_tower"], built["multi_modal_projector"]) == (607_014_912, 41_959_424)


def test_llava_next_video_over_siglip_stays_not_modelled() -> None:
    """LlavaVidForCausalLM loads CLIPVisionModel whatever the id (llavavid.py:232), never SigLIP: a SigLIP id is not
    booked as SigLIP; the plan names the tower not modelled."""
    path = Path("configs/heldout/wave4a/lmms-lab--llava-onevision-qwen2-7b-ov.json")
    config = {**json.loads((DATA / path).read_text()), "architectures": ["LlavaVidForCausalLM"]}
    model = model_from_config(config, source=str(path))
    assert model.tower is None and VISION_NOT_MODELLED in model.not_modelled


def test_mistral3_class_books_pixtral_whatever_its_outer_model_type() -> None:
    """MLC's copy of Ministral-3-3B states the outer model_type 'ministral3' (the published checkpoint's is mistral3);
    vLLM 0.33.0 builds the tower by class: registry.py:541-543 Mistral3ForConditionalGeneration, mistral3.py:401
    (asserts PixtralVisionConfig), 479-486 (PixtralHFVisionModel, Mistral3MultiModalProjector). By hand from its
    vision_config (width 1,024, MLP 4,096, 24 layers, patch 14, 3 channels; merge 2; text 3,072; no projector bias),
    pixtral.py and mistral3.py: patch_conv 3·14²·1,024 = 602,112; ln_pre 1,024; a layer 2·1,024 norms + 4·1,024² +
    3·1,024·4,096 = 16,779,264, × 24 = 402,702,336; projector norm 1,024, patch merger 4·1,024·1,024 = 4,194,304,
    linear_1 1,024·3,072 = 3,145,728, linear_2 3,072² = 9,437,184: 420,083,712 parameters; split over TP: the layers'
    24·16,777,216 and linear_1 + linear_2 = 415,236,096. (Both engines refuse this file for its text section:
    docs/fidelity_registry.md "both refuse"; no engine bytes for it, so the arithmetic is the check.)"""
    path = "configs/heldout/mlc--ministral3_3b_2512.json"
    config = json.loads((DATA / path).read_text())
    assert config["model_type"] == "ministral3"
    tower = model_from_config(config, source=path).tower
    assert tower is not None and tower.config_class == "PixtralVisionConfig"
    assert (tower.params, tower.tp_split_params) == (420_083_712, 415_236_096)
    assert tower.projector_params == 3_145_728 + 9_437_184
