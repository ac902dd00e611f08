"""Isaac's SigLIP2 and pixel-shuffle MLP (kvtop.domain.architectures.towers_isaac).

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config of IsaacForConditionalGeneration
(vLLM's IsaacConfig defaults: a PixelShuffleSiglip2VisionConfig 768 wide, MLP 3072, 12 blocks, 256 patches of
16 × 16 × 3, pixel shuffle 1; text 4,096; bf16), built by `benchmarks/engine_diff/registry_sweep.py --engine vllm
--set classes --only default--IsaacForConditionalGeneration` and kept as the registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json): `vision_embedding` 201,570,816 B at TP 1, 101,629,440 B a rank
at TP 2. SGLang 0.5.23 registers no Isaac class.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "IsaacForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_BYTES = {1: 201_570_816, 2: 101_629_440}


def test_the_tower_is_its_parts_by_hand() -> None:
    """vLLM isaac.py: a biased patch Linear 768 → 768 and a 256-row table (whole), 12 blocks of two LayerNorms, qkv,
    out, fc1 3072 and fc2 with biases (qkv, out, fc1, fc2 split; the out and fc2 biases whole), the post-LayerNorm
    (whole); linear_fc1 768 → 3072 (Column) and linear_fc2 3072 → 4096 (Row), unbiased."""
    patch, table, post = 768 * 768 + 768, 256 * 768, 2 * 768
    block_whole = 2 * 2 * 768 + 768 + 768  # two LayerNorms; out's and fc2's biases
    block_split = 3 * 768 * 768 + 3 * 768 + 768 * 768 + 768 * 3072 + 3072 + 3072 * 768
    mlp = 768 * 3072 + 3072 * 4096
    whole = patch + table + post + 12 * block_whole
    assert 2 * (whole + 12 * block_split + mlp) == 201_570_816
    assert 2 * (whole + (12 * block_split + mlp) // 2) == 101_629_440


@pytest.mark.parametrize("tp", sorted(ENGINE_BYTES))
def test_tower_bytes_equal_the_engines_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    assert row["stages"][0]["param_bytes"]["vision_embedding"] == ENGINE_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, VLLM_SPLIT)
    assert int(vision.bytes) == ENGINE_BYTES[tp]


def test_the_section_shuffle_widens_the_mlp() -> None:
    """A vision_config stating pixel_shuffle_scale_factor 2 feeds linear_fc1 768 × 4 = 3072 wide: 3072 → 12288 and
    12288 → 4096 (vLLM isaac.py hidden_dim = hidden_size × scale²), the SigLIP2 unchanged."""
    data = json.loads(CONFIG.read_text())
    data["vision_config"]["pixel_shuffle_scale_factor"] = 2
    base = model_from_config(json.loads(CONFIG.read_text())).tower
    wider = model_from_config(data).tower
    assert base is not None and wider is not None
    assert wider.params - base.params == (3072 * 12288 + 12288 * 4096) - (768 * 3072 + 3072 * 4096)
