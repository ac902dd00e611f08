"""EXAONE-4.5's vision transformer (kvtop.domain.architectures.towers: the Qwen ViT with grouped KV heads).

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config of Exaone4_5_ForConditionalGeneration
(Exaone4_5_VisionConfig's defaults: width 3584, gated MLP 3420, 32 blocks, 16 heads and 8 KV heads, patch 14 × 14 × 2,
merge 2, out 3584; bf16), listed by `benchmarks/engine_diff/registry_sweep.py --engine vllm --params
default--Exaone4_5_ForConditionalGeneration --tps 1,2` and kept as the registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json; SGLang 0.5.23 registers no such class):
  visual 5,343,737,344 B at TP 1, 2,676,549,376 B at TP 2
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "Exaone4_5_ForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_VISUAL_BYTES = {1: 5_343_737_344, 2: 2_676_549_376}


def test_the_engines_bytes_are_the_configs_arithmetic() -> None:
    """Per block: two RMSNorms; qkv 3584 → (16 + 2 × 8) × 224 = 7168 with bias, proj with bias, gate_up 2 × 3420
    and down with biases (split but proj's and down's biases); the Conv3d patch 3 × 2 × 14² → 3584 unbiased; the
    merger: an RMSNorm, 14336 → 14336 (biased, split) → 3584 (split, its bias whole)."""
    w, m, qkv, merged = 3584, 3420, 7168, 4 * 3584
    split = 32 * (w * qkv + qkv + w * w + 2 * w * m + 2 * m + m * w) + merged * merged + merged + merged * w
    whole = 3 * 2 * 14 * 14 * w + 32 * (2 * w + 2 * w) + w + w
    assert 2 * (whole + split) == ENGINE_VISUAL_BYTES[1]
    assert 2 * (whole + split // 2) == ENGINE_VISUAL_BYTES[2]


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    assert row["stages"][0]["param_bytes"]["visual"] == ENGINE_VISUAL_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == ENGINE_VISUAL_BYTES[tp]
