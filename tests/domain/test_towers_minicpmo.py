"""MiniCPM-o 2.6's SigLIP (vpm), resampler, Whisper encoder (apm) and audio projection
(kvtop.domain.architectures.towers_minicpm.minicpm_o), counted as the MiniCPMO entry's tower.

Oracle: vLLM 0.33.0's and SGLang 0.5.23's meta builds of the real openbmb/MiniCPM-o-2_6 config
(tests/data/configs/heldout/wave2), kept as the registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json and
sglang-0.5.23.json, `param_bytes` by top-level child, bf16; both engines alike):
  TP 1: vpm 835,584,480 B, resampler 137,238,528 B, apm 614,432,768 B, audio_projection_layer 33,044,480 B
  TP 2: vpm 424,304,496 B, the other three unchanged (whole on every rank)
Before this kind the plan named the tower and the audio encoder not modelled (kvtop 0 B of 1,620,300,256 B).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "configs" / "heldout" / "wave2" / "openbmb--MiniCPM-o-2_6.json"
WHOLE_PARTS = 137_238_528 + 614_432_768 + 33_044_480  # resampler, apm, audio_projection_layer
ENGINE_TOWER_BYTES = {1: 835_584_480 + WHOLE_PARTS, 2: 424_304_496 + WHOLE_PARTS}
# one vpm block as the engine lists it (bf16, width 1152, MLP 4304): qkv [3456, 1152] + [3456], out_proj
# [1152, 1152] + [1152], two LayerNorms 2 × (1152 + 1152), fc1 [4304, 1152] + [4304], fc2 [1152, 4304] + [1152]
ENGINE_BLOCK_BYTES = 2 * (
    3456 * 1152 + 3456 + 1152 * 1152 + 1152 + 4 * 1152 + 4304 * 1152 + 4304 + 1152 * 4304 + 1152
)


def _config() -> dict:  # type: ignore[type-arg]
    return json.loads(CONFIG.read_text())


def _tower_bytes(config: dict, tp: int) -> int:  # type: ignore[type-arg]
    model = model_from_config(config)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 1), first_stage=True, last_stage=False)
    (row,) = [row for row in book.rows if row.component in TOWER_KINDS]
    return int(row.bytes)


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_both_engines_meta_build(tp: int) -> None:
    model = model_from_config(_config())
    assert _tower_bytes(_config(), tp) == ENGINE_TOWER_BYTES[tp]
    assert model.tower is not None
    for split in (VLLM_SPLIT, SGLANG_SPLIT):
        assert 2 * model.tower.params_per_rank(tp, split) == ENGINE_TOWER_BYTES[tp]
    assert not any("audio" in note or "vision tower" in note for note in model.not_modelled)


def test_drop_vision_last_layer_drops_a_block() -> None:
    """MiniCPMV2_6.init_vision_module (vLLM minicpmv.py; SGLang minicpmo.py) drops the last vpm block where the
    outer drop_vision_last_layer is true (MiniCPMOConfig's default, so an absent field drops it too)."""
    config = {key: value for key, value in _config().items() if key != "drop_vision_last_layer"}
    assert _tower_bytes(config, 1) == ENGINE_TOWER_BYTES[1] - ENGINE_BLOCK_BYTES


@pytest.mark.parametrize("change", [{"version": 4.5}, {"init_vision": False}])
def test_another_build_keeps_the_notes(change: dict) -> None:  # type: ignore[type-arg]
    """vLLM builds MiniCPMO 4.5 over MiniCPMV4_5 (another resampler) and the vision part whatever init_vision says,
    SGLang only where init_vision: kvtop names both towers not modelled rather than count either build."""
    model = model_from_config({**_config(), **change})
    assert model.tower is None
    assert any(note.startswith("audio") for note in model.not_modelled)
    assert any("vision tower" in note for note in model.not_modelled)
