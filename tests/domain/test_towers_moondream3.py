"""Moondream3's vision encoder and projection (kvtop.domain.architectures.towers_moondream).

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config of Moondream3ForCausalLM (Moondream3Config's
defaults: enc_dim 1152, enc_ff_dim 4304, 27 blocks, patch 14, crop 378, proj_inner_dim 8192; text 2048; bf16),
listed by `benchmarks/engine_diff/registry_sweep.py --engine vllm --params default--Moondream3ForCausalLM --tps 1,2`
and kept as the registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json; SGLang 0.5.23 registers no
Moondream3 class):
  vision 825,974,496 B at TP 1, 414,694,512 B at TP 2; vision_proj 71,323,648 B at TP 1, 35,663,872 B at TP 2
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "Moondream3ForCausalLM"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_TOWER_BYTES = {1: (825_974_496, 71_323_648), 2: (414_694_512, 35_663_872)}


def test_the_engines_bytes_are_the_configs_arithmetic() -> None:
    """patch_emb 588 → 1152 with bias, 729 positions, post_ln; 27 blocks of two LayerNorms, qkv 3 × 1152² and
    out_proj, fc1 1152 → 4304 and fc2, biased (split but out_proj's and fc2's biases); vision_proj fc1 2304 → 8192
    (biased) and fc2 8192 → 2048 (split, its bias whole)."""
    w, m = 1152, 4304
    whole = 588 * w + w + 729 * w + 2 * w + 27 * 6 * w
    split = 27 * (4 * w * w + 3 * w + 2 * w * m + m)
    assert 2 * (whole + split) == ENGINE_TOWER_BYTES[1][0]
    assert 2 * (whole + split // 2) == ENGINE_TOWER_BYTES[2][0]
    projection = 2304 * 8192 + 8192 + 8192 * 2048
    assert 2 * (projection + 2048) == ENGINE_TOWER_BYTES[1][1]
    assert 2 * (projection // 2 + 2048) == ENGINE_TOWER_BYTES[2][1]


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["vision"], parts["vision_proj"]) == ENGINE_TOWER_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == sum(ENGINE_TOWER_BYTES[tp])
    assert not any("vision" in note for note in model.not_modelled)


@pytest.mark.parametrize("name", [NAME, "HfMoondream"])
def test_a_config_without_its_section_builds_the_defaults(name: str) -> None:
    """vLLM's Moondream3Config reads `config.vision` (absent: its defaults); its registry serves HfMoondream with
    the same class (default--HfMoondream's rows hold the same vision and vision_proj bytes)."""
    row = row_of("vllm", "0.33.0", f"default--{name}", 1)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["vision"], parts["vision_proj"]) == ENGINE_TOWER_BYTES[1]
    config = {**json.loads(CONFIG.read_text()), "architectures": [name]}
    del config["config"]
    model = model_from_config(config)
    assert model.tower is not None and model.tower.params * 2 == sum(ENGINE_TOWER_BYTES[1])
