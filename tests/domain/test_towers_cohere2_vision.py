"""Command-A-Vision's SigLIP and projector (kvtop.domain.architectures.towers_vit.cohere2_vision).

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config of Cohere2VisionForConditionalGeneration
(Cohere2VisionConfig's defaults: SigLIP width 1152, MLP 3072, 27 blocks, image 512, patch 16; downsample 2,
alignment_intermediate_size 36864; text 8192; bf16), listed by `benchmarks/engine_diff/registry_sweep.py --engine vllm
--params default--Cohere2VisionForConditionalGeneration --tps 1,2` and kept as the registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json; SGLang 0.5.23 cannot build the class: both refuse):
  vision_tower 673,721,856 B at TP 1, 339,115,392 B at TP 2; multi_modal_projector 641,818,624 B at TP 1,
  320,917,504 B at TP 2
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "Cohere2VisionForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_TOWER_BYTES = {1: (673_721_856, 641_818_624), 2: (339_115_392, 320_917_504)}


def test_the_projector_is_its_linears_by_hand() -> None:
    """linear_1 4608 → 2 × 18432 with bias (merged column-parallel), linear_2 18432 → 8192 (row-parallel, its bias
    whole)."""
    linear_1, linear_2 = 4608 * 36864 + 36864, 18432 * 8192
    assert 2 * (linear_1 + linear_2 + 8192) == ENGINE_TOWER_BYTES[1][1]
    assert 2 * ((linear_1 + linear_2) // 2 + 8192) == ENGINE_TOWER_BYTES[2][1]


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["vision_tower"], parts["multi_modal_projector"]) == ENGINE_TOWER_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == sum(ENGINE_TOWER_BYTES[tp])
