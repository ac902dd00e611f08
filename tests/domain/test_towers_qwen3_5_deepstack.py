"""Qwen3.5's vision transformer holds one deepstack merger per `deepstack_visual_indexes` entry its vision_config
states (kvtop.domain.architectures.towers QWEN3_5 / QWEN3_5_MOE, deepstack=True), as the engines build Qwen3-VL's.

Oracle: SGLang 0.5.23's meta build of the registry sweep's default config of InternS2PreviewForConditionalGeneration
(SGLang's InternS2PreviewConfig, a Qwen3_5MoeConfig whose vision_config states deepstack_visual_indexes [8, 16, 24]),
kept as the registry rows (tests/data/engine_diff/registry/sglang-0.5.23.json, `param_bytes` by top-level child):
`visual` 1,133,898,208 B at TP 1 and 568,950,640 B at TP 2. `registry_sweep.py --engine sglang --params
default--InternS2PreviewForConditionalGeneration --tps 1` lists visual.deepstack_merger_list.N (×3, bytes over the
three): norm weight and bias 27,648 B each, linear_fc1 [4608, 4608] 127,401,984 B + bias 27,648 B, linear_fc2 [3584, 4608] 99,090,432 B + bias
21,504 B: 226,596,864 B in all, the bytes kvtop's book lacked before.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "InternS2PreviewForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_VISUAL_BYTES = {1: 1_133_898_208, 2: 568_950_640}
# the listing's bytes of visual.deepstack_merger_list.N.*, each summed over the three mergers
DEEPSTACK_MERGERS_TP1 = 27_648 + 27_648 + 127_401_984 + 27_648 + 99_090_432 + 21_504


def _vision_bytes(config: dict[str, Any], tp: int) -> int:
    model = model_from_config(config)
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    return int(vision.bytes)


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_sglangs_meta_build(tp: int) -> None:
    row = row_of("sglang", "0.5.23", f"default--{NAME}", tp)
    assert row["stages"][0]["param_bytes"]["visual"] == ENGINE_VISUAL_BYTES[tp]
    assert _vision_bytes(json.loads(CONFIG.read_text()), tp) == ENGINE_VISUAL_BYTES[tp]


def test_a_config_stating_no_deepstack_layer_holds_no_deepstack_merger() -> None:
    config = json.loads(CONFIG.read_text())
    assert config["vision_config"]["deepstack_visual_indexes"] == [8, 16, 24]
    none = {**config, "vision_config": {**config["vision_config"], "deepstack_visual_indexes": []}}
    assert DEEPSTACK_MERGERS_TP1 == 226_596_864
    assert _vision_bytes(config, 1) - _vision_bytes(none, 1) == DEEPSTACK_MERGERS_TP1
