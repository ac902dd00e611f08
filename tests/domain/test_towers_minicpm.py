"""MiniCPM-V 4.6 / 4.7's vision tower, window-attention merger and merger (kvtop.domain.architectures.towers_minicpm).

Oracle: vLLM 0.33.0's meta build of the registry sweep's default configs (transformers 5.20.2's class defaults:
vision width 768, MLP 3072, 12 blocks, image 224, patch 16; Qwen3.5 text 4096 wide), listed by
`benchmarks/engine_diff/registry_sweep.py --engine vllm --params default--MiniCPMV4_6ForConditionalGeneration`
and kept as the registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json, `param_bytes` by top-level child):
  TP 1: vpm 171,594,240 B, vit_merger 99,138,048 B, merger 44,066,816 B
  TP 2: vpm  86,595,072 B, vit_merger 96,776,448 B, merger 44,066,816 B
Before this kind, the outer config's SigLIP section was read as Qwen3.5's ViT (216,919,552 B at TP 1).
SGLang 0.5.23's meta build of the same default (`registry_sweep.py --engine sglang --params …`, rows in
sglang-0.5.23.json) splits the vit_merger's and the merger's linear_1 / linear_2 over TP (minicpmv_vit.py
Column/RowParallelLinear): TP 1 vpm 270,732,288 B + resampler 44,066,816 B (the same 314,799,104 B), TP 2
vpm 136,173,312 B + resampler 22,043,648 B.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIGS = DATA / "engine_diff" / "registry" / "configs"
ENGINE_TOWER_BYTES = {1: 171_594_240 + 99_138_048 + 44_066_816, 2: 86_595_072 + 96_776_448 + 44_066_816}
# one vpm block as the engine lists it (bf16): qkv [2304, 768] + [2304], out_proj [768, 768] + [768], two
# LayerNorms 2 × (768 + 768), fc1 [3072, 768] + [3072], fc2 [768, 3072] + [768]
ENGINE_BLOCK_BYTES = 3_538_944 + 4_608 + 1_179_648 + 1_536 + 2 * 3_072 + 4_718_592 + 6_144 + 4_718_592 + 1_536


def _config(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((CONFIGS / f"{name}ForConditionalGeneration.json").read_text())


def _tower_bytes(config: dict, tp: int) -> int:  # type: ignore[type-arg]
    model = model_from_config(config)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 1), first_stage=True, last_stage=False)
    (row,) = [row for row in book.rows if row.component == "vision"]
    return int(row.bytes)


@pytest.mark.parametrize("name", ["MiniCPMV4_6", "MiniCPMV4_7"])
@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_the_engines_meta_build(name: str, tp: int) -> None:
    config = _config(name)
    assert _tower_bytes(config, tp) == ENGINE_TOWER_BYTES[tp]
    model = model_from_config(config)
    assert model.tower is not None and model.tower.config_class == f"{name}VisionConfig"
    assert not any("vision tower" in note for note in model.not_modelled)


def test_drop_vision_last_layer_drops_a_block_on_4_6_only() -> None:
    """vLLM minicpmv4_6.py `_drop_vision_last_layer` reads the outer field; minicpmv4_7.py's returns False."""
    four_six = {**_config("MiniCPMV4_6"), "drop_vision_last_layer": True}
    assert _tower_bytes(four_six, 1) == ENGINE_TOWER_BYTES[1] - ENGINE_BLOCK_BYTES
    four_seven = {**_config("MiniCPMV4_7"), "drop_vision_last_layer": True}
    assert _tower_bytes(four_seven, 1) == ENGINE_TOWER_BYTES[1]


@pytest.mark.parametrize("name", ["MiniCPMV4_6", "MiniCPMV4_7"])
def test_sglang_splits_the_merger_mlps(name: str) -> None:
    tower = model_from_config(_config(name)).tower
    assert tower is not None
    sglang = {1: (270_732_288 + 44_066_816) // 2, 2: (136_173_312 + 22_043_648) // 2}  # bf16 parameters a rank
    for tp, params in sglang.items():
        assert tower.params_per_rank(tp, SGLANG_SPLIT) == params
