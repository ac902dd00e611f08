"""LLaVA-NeXT-Video's CLIP and projector (kvtop.domain.architectures.towers_vit.llava_tower, outer `llava_next_video`).

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config of LlavaNextVideoForConditionalGeneration
(LlavaNextVideoConfig's defaults: CLIP-L/14-336, width 1024, MLP 4096, 24 blocks, vision_feature_layer −2; projector
biased; text 4096; bf16), listed by `benchmarks/engine_diff/registry_sweep.py --engine vllm --params
default--LlavaNextVideoForConditionalGeneration --tps 1,2` and kept as the registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json; SGLang 0.5.23 registers no such class):
  vision_tower 581,818,368 B at TP 1, 292,246,528 B at TP 2; multi_modal_projector 41,959,424 B at both (nn.Linear)
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "LlavaNextVideoForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_TOWER_BYTES = {1: (581_818_368, 41_959_424), 2: (292_246_528, 41_959_424)}


def test_the_engines_bytes_are_the_configs_arithmetic() -> None:
    """23 of 24 CLIP blocks (vision_feature_layer −2), no post-LayerNorm, no image_newline; the projector 1024 → 4096
    → 4096 with biases, whole."""
    w, m = 1024, 4096
    whole = 3 * 14 * 14 * w + 577 * w + 3 * w + 23 * 6 * w
    blocks = 23 * (4 * w * w + 3 * w + 2 * w * m + m)
    assert 2 * (whole + blocks) == ENGINE_TOWER_BYTES[1][0]
    assert 2 * (whole + blocks // 2) == ENGINE_TOWER_BYTES[2][0]
    assert 2 * (w * 4096 + 4096 + 4096 * 4096 + 4096) == ENGINE_TOWER_BYTES[1][1]


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["vision_tower"], parts["multi_modal_projector"]) == ENGINE_TOWER_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == sum(ENGINE_TOWER_BYTES[tp])
