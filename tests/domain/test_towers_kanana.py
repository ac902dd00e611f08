"""Kanana-V's Qwen2-VL ViT less its merger and its DynamicCAbstractor (kvtop.domain.architectures.towers_kanana).

Oracle: vLLM 0.33.0's meta build of the registry sweep's composed config (tests/data/engine_diff/registry/configs/
KananaVForConditionalGeneration.json, SOURCES.md: KananaVConfig's published defaults, LlamaConfig() text; bf16),
built by `benchmarks/engine_diff/registry_sweep.py --engine vllm --set classes --only
default--KananaVForConditionalGeneration` (timm 1.0.29 in the harness venv) and kept as the registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json). SGLang 0.5.23 registers no Kanana-V class.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.errors import InputError
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "KananaVForConditionalGeneration.json"
# qwen2_vl.py Qwen2VisionTransformer(vision_config): embed_dim 1,280, 16 heads, MLP 4 × 1,280, 32 blocks; kanana_v.py
# CustomQwen2VLVE deletes `merger` (kanana_v.py:282-283). Split over TP (Column / Row-parallel): qkv and fc1 with
# their biases, proj's and fc2's weights; whole: the unbiased Conv3d patch 3 × 2 × 14² → 1,280, two LayerNorms a
# block (weight, bias), proj's and fc2's biases.
_VIT_SPLIT = 32 * ((1280 * 3840 + 3840) + 1280 * 1280 + (1280 * 5120 + 5120) + 5120 * 1280)
_VIT_WHOLE = 3 * 2 * 14 * 14 * 1280 + 32 * (2 * 2 * 1280 + 1280 + 1280)


def _bottleneck(chs_in: int, chs_out: int) -> int:
    """timm 1.0.29 regnet.py Bottleneck(chs_in, chs_out), RegStage's defaults (bottle_ratio 1, group_size 1, se_ratio
    0.25, conv1x1 shortcut), LayerNorm2d norms: conv1 1×1, conv2 3×3 with groups = chs_out (one 3×3 kernel a channel),
    SE fc1 / fc2 biased 1×1 convs to round(chs_in / 4) and back, conv3 1×1, each conv unbiased with a norm of weight
    and bias; the shortcut a 1×1 conv and norm where chs_in ≠ chs_out."""
    se = round(chs_in / 4)
    body = chs_in * chs_out + chs_out * 9 + (chs_out * se + se + se * chs_out + chs_out) + chs_out * chs_out
    shortcut = chs_in * chs_out + 2 * chs_out if chs_in != chs_out else 0
    return body + 3 * 2 * chs_out + shortcut


# kanana_v.py DynamicCAbstractor(projector_config) at KananaVVisualProjectorConfig's defaults: pos_emb 576 × 1,280
# (num_input_tokens -1 → pos_emb_size), s1 RegStage(2, 1,280 → 1,024), s2 RegStage(2, 2² × 1,024 → 1,024), readout
# Linear 1,024 → 2,048, SiLU, Linear 2,048 → 2,048 (biased); all plain torch / timm modules: whole on every rank.
ABSTRACTOR = (
    576 * 1280
    + _bottleneck(1280, 1024) + _bottleneck(1024, 1024)
    + _bottleneck(4096, 1024) + _bottleneck(1024, 1024)
    + (1024 * 2048 + 2048) + (2048 * 2048 + 2048)
)  # fmt: skip
# the engine's rows (bf16): {tp: {child: bytes}}
ENGINE = {1: {"vision_model": 1_262_366_720, "abstractor": 56_413_824},
          2: {"vision_model": 632_934_400, "abstractor": 56_413_824}}  # fmt: skip


def test_the_parts_by_hand_are_the_engines_bytes() -> None:
    by_hand = {1: {"vision_model": 2 * (_VIT_WHOLE + _VIT_SPLIT), "abstractor": 2 * ABSTRACTOR},
               2: {"vision_model": 2 * (_VIT_WHOLE + _VIT_SPLIT // 2), "abstractor": 2 * ABSTRACTOR}}  # fmt: skip
    assert by_hand == ENGINE


@pytest.mark.parametrize("tp", (1, 2))
def test_tower_bytes_equal_the_engines_meta_build(tp: int) -> None:
    row = next(
        r for r in load_rows("vllm", "0.33.0")
        if (r["config"], r["tp"]) == ("default--KananaVForConditionalGeneration", tp)
    )  # fmt: skip
    built = row["stages"][0]["param_bytes"]
    assert {child: built[child] for child in ENGINE[tp]} == ENGINE[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, VLLM_SPLIT)
    assert int(vision.bytes) == sum(ENGINE[tp].values())


def test_kanana_v_is_a_wrapper_over_its_llama() -> None:
    assert verdict("KananaVForConditionalGeneration")[0] == "wrapper"
    model = model_from_config(json.loads(CONFIG.read_text()))
    assert model.model_type == "llama" and model.num_layers == 32


def test_absent_projector_fields_are_the_published_class_defaults() -> None:
    """KananaVVisualProjectorConfig fills an absent field with its __init__ default (the composed config states them
    all); the checkpoint class's vision image_size "dynamic" sizes nothing and is read past."""
    data = json.loads(CONFIG.read_text())
    data["projector_config"] = {"model_type": "kanana-1.5-v-visual_projector"}
    data["vision_config"]["image_size"] = "dynamic"
    tower = model_from_config(data).tower
    assert tower is not None and tower.params == _VIT_WHOLE + _VIT_SPLIT + ABSTRACTOR
    # no pos_emb table, one readout Linear: 576 × 1,280 and the second Linear fewer
    data["projector_config"] = {"pos_emb": False, "mlp_depth": 1}
    smaller = model_from_config(data).tower
    assert smaller is not None
    assert tower.params - smaller.params == 576 * 1280 + (2048 * 2048 + 2048)


def test_a_bad_projector_field_is_named() -> None:
    data = json.loads(CONFIG.read_text())
    data["projector_config"]["hidden_size"] = "wide"
    with pytest.raises(InputError, match="projector_config.hidden_size"):
        model_from_config(data)
