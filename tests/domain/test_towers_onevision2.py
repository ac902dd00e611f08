"""LLaVA-OneVision-2's OneVision encoder and patch merger (kvtop.domain.architectures.towers_onevision2).

Oracle: vLLM 0.33.0's meta build of the composed config tests/data/engine_diff/registry/configs/
LlavaOnevision2ForConditionalGeneration.json (SOURCES.md beside it: the 2B's text section and vision sizes as
LLaVA-OneVision-2's checkpoint converter states them), by `benchmarks/engine_diff/registry_sweep.py --engine vllm
--set classes --only default--LlavaOnevision2ForConditionalGeneration` and kept as the registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json; SGLang 0.5.23 registers no such class):
  visual 656,175,104 B at TP 1, 328,843,264 B a rank at TP 2.
By hand from vLLM 0.33.0 llava_onevision2.py: LlavaOnevision2VisionEmbeddings (:824, Conv2d 3 → 1024, kernel 14, no
bias), layernorm_pre (:1170, LayerNorm), 24 LlavaOnevision2VisionTowerBlock (:1024-1034: two LayerNorms; qkv
QKVParallelLinear 1024 → 3 × 1024 biased, :907; proj RowParallelLinear 1024², its bias whole, :918; fc1
ColumnParallelLinear 1024 → 4096 biased, :851; fc2 RowParallelLinear 4096 → 1024, its bias whole, :859),
LlavaOnevision2PatchMerger (:1075-1076: ln_q LayerNorm 1024; mlp.0 ColumnParallelLinear 4096² biased; mlp.2
RowParallelLinear 4096 → text_config.hidden_size 2048, its bias whole; built at :1192), bf16.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "LlavaOnevision2ForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_VISUAL_BYTES = {1: 656_175_104, 2: 328_843_264}


def test_the_engines_bytes_are_the_configs_arithmetic() -> None:
    w, m, merged, text = 1024, 4096, 4 * 1024, 2048
    split = 24 * ((3 * w * w + 3 * w) + w * w + (w * m + m) + m * w) + (merged * merged + merged) + merged * text
    whole = 3 * 14 * 14 * w + 2 * w + 24 * (4 * w + w + w) + 2 * w + text
    assert 2 * (whole + split) == ENGINE_VISUAL_BYTES[1]
    assert 2 * (whole + split // 2) == ENGINE_VISUAL_BYTES[2]


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    assert row["stages"][0]["param_bytes"]["visual"] == ENGINE_VISUAL_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == ENGINE_VISUAL_BYTES[tp]


def test_a_stated_temporal_patch_size_changes_nothing() -> None:
    """vLLM builds a Conv2d whatever temporal_patch_size says (LlavaOnevision2VisionEmbeddings): no temporal axis."""
    config = json.loads(CONFIG.read_text())
    config["vision_config"]["temporal_patch_size"] = 2
    model = model_from_config(config)
    assert model.tower is not None and 2 * model.tower.params == ENGINE_VISUAL_BYTES[1]
