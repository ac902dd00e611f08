"""LFM2-VL's SigLIP2 and projector (kvtop.domain.architectures.towers_vit.lfm2_vl).

Oracle: the engines' meta builds of the registry sweep's default config of Lfm2VlForConditionalGeneration
(Lfm2VlConfig's and Siglip2VisionConfig's defaults: width 768, MLP 3072, 12 blocks, 256 patches of 16 × 16 × 3;
downsample 2, projector 2560 wide with biases and a LayerNorm; text 2560; bf16), listed by
`benchmarks/engine_diff/registry_sweep.py --engine <e> --params default--Lfm2VlForConditionalGeneration --tps 1,2`
and kept as the registry rows (tests/data/engine_diff/registry/<engine>-<version>.json):
  vLLM 0.33.0   vision_tower 171,686,400 B at TP 1, 86,687,232 B at TP 2; multi_modal_projector 28,858,368 B at both
                (ReplicatedLinear)
  SGLang 0.5.23 vision_tower the same; multi_modal_projector 28,858,368 B at TP 1, 14,437,888 B at TP 2
                (linear_1 ColumnParallelLinear, linear_2 RowParallelLinear)
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

NAME = "Lfm2VlForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_TOWER_BYTES = {
    ("vllm", 1): (171_686_400, 28_858_368), ("vllm", 2): (86_687_232, 28_858_368),
    ("sglang", 1): (171_686_400, 28_858_368), ("sglang", 2): (86_687_232, 14_437_888),
}  # fmt: skip
ENGINES = {"vllm": ("0.33.0", VLLM_SPLIT), "sglang": ("0.5.23", SGLANG_SPLIT)}


def test_the_projector_split_is_its_linears_by_hand() -> None:
    """SGLang at TP 2: the LayerNorm over 3,072 and linear_2's bias whole, linear_1 (with its bias) and linear_2's
    weight halved."""
    norm, linear_1, linear_2 = 2 * 3072, 3072 * 2560 + 2560, 2560 * 2560
    assert 2 * (norm + linear_1 + linear_2 + 2560) == 28_858_368
    assert 2 * (norm + 2560 + (linear_1 + linear_2) // 2) == 14_437_888


@pytest.mark.parametrize(("engine", "tp"), sorted(ENGINE_TOWER_BYTES))
def test_tower_bytes_equal_the_engines_meta_build(engine: str, tp: int) -> None:
    version, split = ENGINES[engine]
    row = row_of(engine, version, f"default--{NAME}", tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["vision_tower"], parts["multi_modal_projector"]) == ENGINE_TOWER_BYTES[(engine, tp)]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, split)
    assert int(vision.bytes) == sum(ENGINE_TOWER_BYTES[(engine, tp)])


def test_another_vision_model_keeps_the_note() -> None:
    """vLLM's lfm2_vl.py raises "Unsupported visual tokenizer type" for a vision_config other than siglip2."""
    config = json.loads(CONFIG.read_text())
    config["vision_config"]["model_type"] = "siglip_vision_model"
    model = model_from_config(config)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)
