"""Aria's vision tower and projector (kvtop.domain.architectures.towers_vit.aria).

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config of AriaForConditionalGeneration (AriaConfig's
defaults: an Idefics3 vision config of width 1152, MLP 3072, 12 blocks, image 224, patch 32; projector queries
{1225: 128, 4900: 256}; text 4096; bf16), listed by `benchmarks/engine_diff/registry_sweep.py --engine vllm --params
default--AriaForConditionalGeneration --tps 1,2` and kept as the registry rows (tests/data/engine_diff/registry/
vllm-0.33.0.json; SGLang 0.5.23 registers no Aria class):
  vision_tower 304,786,944 B at TP 1, 156,072,960 B at TP 2; multi_modal_projector 64,840,448 B at TP 1,
  43,344,640 B at TP 2
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "AriaForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_TOWER_BYTES = {1: (304_786_944, 64_840_448), 2: (156_072_960, 43_344_640)}


def test_the_projector_is_its_parts_by_hand() -> None:
    """query 256 × 1152; the cross-attention's q/k/v 3 × 1152², MultiheadAttention's in_proj 3 × 1152² + 3 × 1152 and
    out_proj 1152² + 1152, linear 1152² + 1152, two LayerNorms; a LayerNorm; linear_in 1152 × 4096 and linear_out
    4096², split at TP 2."""
    w, t = 1152, 4096
    whole = 256 * w + 3 * w * w + (4 * w * w + 4 * w) + (w * w + w) + 4 * w + 2 * w
    feed_forward = w * t + t * t
    assert 2 * (whole + feed_forward) == ENGINE_TOWER_BYTES[1][1]
    assert 2 * (whole + feed_forward // 2) == ENGINE_TOWER_BYTES[2][1]


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["vision_tower"], parts["multi_modal_projector"]) == ENGINE_TOWER_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == sum(ENGINE_TOWER_BYTES[tp])
