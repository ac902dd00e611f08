"""Cosmos-3-Edge's SigLIP2 and patch merger (kvtop.domain.architectures.towers_vit.cosmos3_edge).

Oracle: the engines' meta builds of the registry sweep's default config of Cosmos3EdgeForConditionalGeneration
(Cosmos3EdgeConfig's defaults: SigLIP2 width 1152, MLP 4304, 27 blocks, 256 patches of 16 × 16 × 3, merge 2;
projector_hidden_size 11520; text 2048; bf16), listed by `benchmarks/engine_diff/registry_sweep.py --engine <e>
--params default--Cosmos3EdgeForConditionalGeneration --tps 1,2` and kept as the registry rows
(tests/data/engine_diff/registry/<engine>-<version>.json):
  vLLM 0.33.0   visual (encoder and projector) 978,685,408 B at TP 1, 490,716,784 B at TP 2
  SGLang 0.5.23 visual 825,299,424 B and projector 153,385,984 B at TP 1; 414,019,440 B and 76,697,344 B at TP 2
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "Cosmos3EdgeForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_PARTS = {
    ("vllm", 1): {"visual": 978_685_408}, ("vllm", 2): {"visual": 490_716_784},
    ("sglang", 1): {"visual": 825_299_424, "projector": 153_385_984},
    ("sglang", 2): {"visual": 414_019_440, "projector": 76_697_344},
}  # fmt: skip
ENGINES = {"vllm": ("0.33.0", VLLM_SPLIT), "sglang": ("0.5.23", SGLANG_SPLIT)}


def test_the_merger_is_its_parts_by_hand() -> None:
    """A LayerNorm over 1152, linear_fc1 4608 → 11520 with bias (split) and linear_fc2 11520 → 2048 (split, its
    bias whole): SGLang lists it apart as `projector`."""
    norm, fc1, fc2 = 2 * 1152, 4608 * 11520 + 11520, 11520 * 2048
    assert 2 * (norm + fc1 + fc2 + 2048) == 153_385_984
    assert 2 * (norm + 2048 + (fc1 + fc2) // 2) == 76_697_344


@pytest.mark.parametrize(("engine", "tp"), sorted(ENGINE_PARTS))
def test_tower_bytes_equal_the_engines_meta_build(engine: str, tp: int) -> None:
    version, split = ENGINES[engine]
    row = row_of(engine, version, f"default--{NAME}", tp)
    parts = row["stages"][0]["param_bytes"]
    assert {key: parts[key] for key in ENGINE_PARTS[(engine, tp)]} == ENGINE_PARTS[(engine, tp)]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, split)
    assert int(vision.bytes) == sum(ENGINE_PARTS[(engine, tp)].values())
