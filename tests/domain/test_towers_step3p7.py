"""Step-3.7's PerceptionEncoder and vit_large_projector (kvtop.domain.architectures.towers_step), the step3p7 entry's
tower.

Oracle: SGLang 0.5.23's meta build of the registry sweep's default Step3p7ForConditionalGeneration config
(tests/data/engine_diff/registry/configs; width 1536, 47 blocks, mlp_ratio 8960 / 1536, image 728, patch 14, text
width 4096), kept as the registry rows (tests/data/engine_diff/registry/sglang-0.5.23.json, `param_bytes` by
top-level child, bf16):
  TP 1: vision_model 3,911,697,920 B, vit_large_projector 50,331,648 B
  TP 2: vision_model 2,173,831,936 B, vit_large_projector 25,165,824 B
Before this kind the plan named the vision tower not modelled (kvtop 0 B of 3,962,029,568 B at TP 1).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "Step3p7ForConditionalGeneration.json"
ENGINE_TOWER_BYTES = {1: 3_911_697_920 + 50_331_648, 2: 2_173_831_936 + 25_165_824}
# one resblock as SGLang lists it (bf16, width 1536, MLP 8960): qkv_proj [4608, 1536] + [4608], proj [1536, 1536]
# + [1536], ln_1 and ln_2 2 × (1536 + 1536), ls_1 / ls_2 gamma 2 × [1536], fc1 [8960, 1536] + [8960], fc2
# [1536, 8960] + [1536]
ENGINE_BLOCK_BYTES = 2 * (
    4608 * 1536 + 4608 + 1536 * 1536 + 1536 + 4 * 1536 + 2 * 1536 + 2 * 8960 * 1536 + 8960 + 1536
)


def _config() -> dict:  # type: ignore[type-arg]
    return json.loads(CONFIG.read_text())


def _tower_bytes(config: dict, tp: int) -> int:  # type: ignore[type-arg]
    tower = model_from_config(config).tower
    assert tower is not None
    return int(2 * tower.params_per_rank(tp, SGLANG_SPLIT))


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_sglangs_meta_build(tp: int) -> None:
    model = model_from_config(_config())
    assert _tower_bytes(_config(), tp) == ENGINE_TOWER_BYTES[tp]
    assert not any("vision tower" in note for note in model.not_modelled)


def test_sglangs_own_names_size_it() -> None:
    """SGLang's Step3p7VisionEncoderConfig reads `layers` (not transformers' num_hidden_layers): one block fewer."""
    config = _config()
    config["vision_config"] = {**config["vision_config"], "layers": 46, "num_hidden_layers": 46}
    assert _tower_bytes(config, 1) == ENGINE_TOWER_BYTES[1] - ENGINE_BLOCK_BYTES


def test_transformers_names_sglang_would_not_read_keep_the_note() -> None:
    """A section whose hidden_size differs from what SGLang builds (its `width`, default 1536) is not guessed."""
    config = _config()
    config["vision_config"] = {**config["vision_config"], "hidden_size": 2048}
    model = model_from_config(config)
    assert model.tower is None
    assert any("vision tower" in note for note in model.not_modelled)
