"""Bee's projector (kvtop.domain.architectures.towers_bee), in place of llava-onevision's.

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config of BeeForConditionalGeneration
(transformers' LlavaOnevisionConfig defaults: SigLIP width 1,152, Qwen2 text width 4,096; bf16), kept as the
registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json, `param_bytes` by top-level child): vision_tower
795,490,880 B, multi_modal_projector 172,012,032 B and image_newline 8,192 B at TP 1; 399,443,488 + 172,012,032 +
8,192 B at TP 2. `registry_sweep.py --engine vllm --params default--BeeForConditionalGeneration` lists
multi_modal_projector.pre_norm weight and bias [1152], linear_1 [16384, 1152] + bias, linear_2 [4096, 16384] + bias.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "BeeForConditionalGeneration"
CONFIG = json.loads((DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json").read_text())
ENGINE_TOWER_BYTES = {1: 795_490_880 + 172_012_032 + 8_192, 2: 399_443_488 + 172_012_032 + 8_192}
# the listing's projector: pre_norm weight + bias, linear_1 weight + bias, linear_2 weight + bias, bf16
PROJECTOR_BYTES = 2 * (1152 + 1152 + 16384 * 1152 + 16384 + 4096 * 16384 + 4096)


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    held = row["stages"][0]["param_bytes"]
    assert held["multi_modal_projector"] == PROJECTOR_BYTES == 172_012_032
    assert (
        held["vision_tower"] + held["multi_modal_projector"] + held["image_newline"] == ENGINE_TOWER_BYTES[tp]
    )
    model = model_from_config(CONFIG, source=NAME)
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == ENGINE_TOWER_BYTES[tp]


def test_llava_onevision_keeps_its_own_projector() -> None:
    # the same config naming LlavaOnevisionForConditionalGeneration: linear_1 1,152 → 4,096 and linear_2 4,096 →
    # 4,096 with biases (43,008,000 B), 129,004,032 B fewer than Bee's
    onevision = {**CONFIG, "architectures": ["LlavaOnevisionForConditionalGeneration"]}
    bee, plain = model_from_config(CONFIG, source=NAME).tower, model_from_config(onevision, source="ov").tower
    assert bee is not None and plain is not None
    assert 2 * (bee.params - plain.params) == PROJECTOR_BYTES - 2 * (1152 * 4096 + 4096 + 4096 * 4096 + 4096)
    assert PROJECTOR_BYTES - 2 * (1152 * 4096 + 4096 + 4096 * 4096 + 4096) == 129_004_032
