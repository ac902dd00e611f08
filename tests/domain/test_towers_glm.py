"""GLM-4.1V's / GLM-4.5V's vision transformer and merger (kvtop.domain.architectures.towers_glm).

Oracle: the engines' meta builds of the registry sweep's default config of Glm4vForConditionalGeneration
(Glm4vVisionConfig's defaults: width 1536, 24 blocks, out_hidden_size 4096, intermediate_size 13696, image 336,
patch 14 × 14 × 2; bf16), listed by `benchmarks/engine_diff/registry_sweep.py --engine <e> --params
default--Glm4vForConditionalGeneration` and kept as the registry rows (tests/data/engine_diff/registry/
<engine>-<version>.json, `param_bytes` of `visual`):
  vLLM 0.33.0   glm4_1v.py: 1,784,996,864 B at TP 1, 920,445,952 B at TP 2
  SGLang 0.5.23 glm4v.py:   1,785,013,248 B at TP 1, 937,239,552 B at TP 2 (at TP 2 its listing shows
                visual.merger.proj.weight [4096, 4096] whole and visual.merger.post_projection_norm.weight / .bias
                [4096] torch.float32; the position table [576, 1536] whole)
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

CONFIGS = DATA / "engine_diff" / "registry" / "configs"
ENGINE_VISUAL_BYTES = {
    ("vllm", 1): 1_784_996_864, ("vllm", 2): 920_445_952,
    ("sglang", 1): 1_785_013_248, ("sglang", 2): 937_239_552,
}  # fmt: skip
ENGINES = {"vllm": ("0.33.0", VLLM_SPLIT), "sglang": ("0.5.23", SGLANG_SPLIT)}


@pytest.mark.parametrize("name", ["Glm4vForConditionalGeneration", "Glm4vMoeForConditionalGeneration"])
@pytest.mark.parametrize(("engine", "tp"), sorted(ENGINE_VISUAL_BYTES))
def test_tower_bytes_equal_the_engines_meta_build(name: str, engine: str, tp: int) -> None:
    version, split = ENGINES[engine]
    row = row_of(engine, version, f"default--{name}", tp)
    assert row["stages"][0]["param_bytes"]["visual"] == ENGINE_VISUAL_BYTES[(engine, tp)]
    model = model_from_config(json.loads((CONFIGS / f"{name}.json").read_text()))
    vision = first_stage_vision_row(model, tp, split)
    assert int(vision.bytes) == ENGINE_VISUAL_BYTES[(engine, tp)]


def test_sglangs_float32_layernorm_is_the_tp1_difference() -> None:
    # SGLang's visual at TP 1 less vLLM's: the merger's LayerNorm weight and bias [4096] in float32, 2 B more each
    assert 1_785_013_248 - 1_784_996_864 == 2 * 4096 * (4 - 2)
