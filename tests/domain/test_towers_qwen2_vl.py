"""Qwen2-VL's vision transformer and merger (kvtop.domain.architectures.towers, kind `qwen2_vl`).

Oracle: the engines' meta builds of the registry sweep's default config of Qwen2VLForConditionalGeneration
(Qwen2VLVisionConfig's defaults: embed_dim 1280, mlp_ratio 4, depth 32, patch 14 × 14 × 2, merge 2, hidden_size
3584; bf16), listed by `benchmarks/engine_diff/registry_sweep.py --engine <e> --params
default--Qwen2VLForConditionalGeneration` and kept as the registry rows (tests/data/engine_diff/registry/
<engine>-<version>.json, `param_bytes` by top-level child): `visual` 1,351,518,208 B at TP 1 and 677,516,288 B at
TP 2 in both vLLM 0.33.0 and SGLang 0.5.23 (qwen2_vl.py: qkv, proj, fc1, fc2 and the merger's two linears split).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "Qwen2VLForConditionalGeneration.json"
ENGINE_VISUAL_BYTES = {1: 1_351_518_208, 2: 677_516_288}
ENGINES = {"vllm": ("0.33.0", VLLM_SPLIT), "sglang": ("0.5.23", SGLANG_SPLIT)}


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_the_engines_meta_build(engine: str, tp: int) -> None:
    version, split = ENGINES[engine]
    row = next(r for r in load_rows(engine, version)
               if (r["config"], r["tp"]) == ("default--Qwen2VLForConditionalGeneration", tp))  # fmt: skip
    assert row["stages"][0]["param_bytes"]["visual"] == ENGINE_VISUAL_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, split)
    assert int(vision.bytes) == ENGINE_VISUAL_BYTES[tp]
    assert model.tower is not None and model.tower.config_class == "Qwen2VLVisionConfig"


def test_the_merger_reads_vision_hidden_size_and_the_mlp_embed_dim_times_mlp_ratio() -> None:
    # qwen2_vl.py: the merger's last linear is 5,120 -> vision_config.hidden_size (3,584), not the text width
    # (8,192 in this default config); the block MLP 1,280 × 4 = 5,120 wide
    model = model_from_config(json.loads(CONFIG.read_text()))
    assert model.hidden_size == 8192 and model.tower is not None
    wider = model_from_config({**json.loads(CONFIG.read_text()),
                               "vision_config": {**json.loads(CONFIG.read_text())["vision_config"], "hidden_size": 4096}})  # fmt: skip
    assert wider.tower is not None
    assert (
        wider.tower.params - model.tower.params == 512 * 5120 + 512
    )  # the merger's last linear, weight and bias
