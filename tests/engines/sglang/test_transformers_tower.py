"""The vision tower of a class SGLang 0.5.23 serves through its Transformers backend (engines/sglang/
transformers_tower.py): transformers' own classes, every layer, whole on every rank.

Expected figures: SGLang 0.5.23's TransformersMultiModalForCausalLM built on the meta device by engine-diff's registry
sweep (`registry_sweep.py --engine sglang --only …`, sm90, KV auto): each row's `param_bytes` by child of the
backend's `model` (model.vision_tower, model.multi_modal_projector, model.image_newline, model.language_model),
tests/data/engine_diff/registry/sglang-0.5.23.json; and transformers' CLIPVisionModel / SiglipVisionModel built on
meta (counts quoted below). Never kvtop's own figures.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.sglang import architectures as sglang_architectures
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm import architectures as vllm_architectures
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS
from tests.data_paths import DATA

AT_0_5_23 = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
CONFIG_FILES = {
    "llava-hf--llava-v1.6-mistral-7b-hf": CONFIGS / "heldout" / "llava-hf--llava-v1.6-mistral-7b-hf.json",
    "transformers--LlavaOnevisionConfig-defaults": CONFIGS / "towers" / "transformers--LlavaOnevisionConfig-defaults.json",
    "OpenGVLab--InternVL3-1B-Pretrained-as-internvl": CONFIGS / "towers" / "OpenGVLab--InternVL3-1B-Pretrained-as-internvl.json",
}  # fmt: skip
TOWER_CHILDREN = ("model.vision_tower", "model.multi_modal_projector", "model.image_newline")


def _model(config: str) -> ModelSpec:
    path = CONFIG_FILES[config]
    return model_from_config(json.loads(path.read_text()), source=str(path))


def _engine_row(config: str, tp: int) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "registry" / "sglang-0.5.23.json").read_text())["rows"]
    return next(r for r in rows if r["config"] == config and r["tp"] == tp)


@pytest.mark.parametrize("tp", [1, 2])
@pytest.mark.parametrize("config", sorted(CONFIG_FILES))
def test_tower_and_language_model_equal_the_engines_meta_build(config: str, tp: int) -> None:
    """llava-v1.6-mistral-7b's tower, projector and image_newline: 648,982,528 B on each rank at TP 1 and TP 2;
    LlavaOnevisionConfig's defaults 838,511,680 B; InternVL3-1B (transformers format) 616,990,208 B; the
    language model and head (model.language_model + lm_head) the rest of the rank's bytes."""
    model, held = _model(config), _engine_row(config, tp)["stages"][0]["param_bytes"]
    parts = engine_rules("sglang").stage_parts(model, 0, 1, AT_0_5_23)
    assert parts.tower_as_transformers
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True,
                        tower_split=sglang_architectures.TOWER_SPLIT, parts=parts)  # fmt: skip
    (vision,) = [row for row in book.rows if row.component == "vision"]
    assert (vision.bytes, vision.shards) == (sum(held[child] for child in TOWER_CHILDREN if child in held), 1)
    assert book.total_bytes - vision.bytes == held["model.language_model"] + held["lm_head"]


def test_transformers_classes_hold_the_layers_and_norms_vllm_leaves_out() -> None:
    """transformers' CLIPVisionModel (24 layers of width 1,024 and MLP 4,096, image 336, patch 14) built on meta
    holds 303,507,456 parameters; vLLM's llava_next.py builds 23 layers (vision_feature_layer −2) and no
    post_layernorm: one layer and the post-LayerNorm less, 12,598,272 parameters (25,196,544 B in bf16: the
    difference SGLang's meta build showed over vLLM's count). SiglipVisionModel (LlavaOnevisionConfig's 26 × 1,152,
    MLP 4,304, image 384, patch 14) holds 397,747,744 without its pooling head and 412,986,096 with it
    (vision_use_head, SiglipVisionConfig's default): 15,238,352."""
    llava_next = _model("llava-hf--llava-v1.6-mistral-7b-hf").tower
    assert llava_next is not None
    # the class's 303,507,456 less its embeddings (patch 602,112, class 1,024, 577 positions 590,848) and pre/post
    # LayerNorms (4,096): 24 layers of 12,596,224; one of them and the post-LayerNorm's 2,048
    assert (
        llava_next.transformers_params - llava_next.params == (303_507_456 - 1_193_984 - 4_096) // 24 + 2_048
    )
    onevision = json.loads(CONFIG_FILES["transformers--LlavaOnevisionConfig-defaults"].read_text())
    without = model_from_config(onevision, source="defaults").tower
    onevision["vision_config"] = {**onevision["vision_config"], "vision_use_head": True}
    with_head = model_from_config(onevision, source="defaults, vision_use_head").tower
    assert without is not None and with_head is not None
    assert with_head.transformers_params - without.transformers_params == 412_986_096 - 397_747_744
    assert with_head.params == without.params  # vLLM builds no head (use_head=False)


def test_vllm_keeps_its_own_split_tower() -> None:
    """vLLM 0.33.0 registers LlavaNextForConditionalGeneration (llava_next.py): the tower stays split over TP."""
    model = _model("llava-hf--llava-v1.6-mistral-7b-hf")
    parts = engine_rules("vllm").stage_parts(
        model, 0, 1, ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)
    )
    assert not parts.tower_as_transformers
    book = weights_book(model, ParallelLayout(tp=2), range(1), first_stage=True, last_stage=False,
                        tower_split=vllm_architectures.TOWER_SPLIT, parts=parts)  # fmt: skip
    (vision,) = [row for row in book.rows if row.component == "vision"]
    assert vision.shards == 2


def test_not_checked_before_0_5_23() -> None:
    """0.5.6.post2 lists LlavaNextForConditionalGeneration for its (text-only) Transformers backend too, but its meta
    build refused TP 2 ("LlavaNextModel does not support tensor parallel yet!"): the rule is not applied there."""
    model = _model("llava-hf--llava-v1.6-mistral-7b-hf")
    before = ResolvedVersion(text="0.5.6.post2", source=VersionSource.FLAG)
    assert model.architecture in sglang_architectures.TABLE.range_for(before).transformers_backend  # type: ignore[union-attr]
    assert not engine_rules("sglang").stage_parts(model, 0, 1, before).tower_as_transformers
