"""GLM-4V-9B (GLM4VForCausalLM over a ChatGLM config): its EVA2-CLIP tower and GLU projector
(kvtop.domain.architectures.towers_eva2clip) and the whole model's weights and KV cell on vLLM 0.33.0.

Config: tests/data/configs/recon/recon--THUDM--glm-4v-9b.json (RECONSTRUCTED; SOURCES.md says from what).
Oracles, each independent of kvtop:
- the parameter count a user printed for THUDM/glm-4v-9b under transformers (zai-org/GLM-4 issue #500): total
  13,906,320,896; transformer.encoder 8,158,433,280; transformer.vision.transformer 4,279,387,392; the rest
  1,468,500,224;
- vLLM 0.33.0's meta build of the recon config (`registry_sweep.py --engine vllm --params
  recon--THUDM--glm-4v-9b`, rows in tests/data/engine_diff/registry/vllm-0.33.0.json), bf16: 27,812,641,792 B at
  TP 1 (transformer.vision 9,012,739,072 B), 13,966,015,744 B a rank at TP 2 (transformer.vision 4,565,732,608 B).
Before this tower kind the plan named the vision tower not modelled (kvtop 0 B of 9,012,739,072 B at TP 1).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

CONFIG = DATA / "configs" / "recon" / "recon--THUDM--glm-4v-9b.json"
H200 = 143_771_000_832

# vLLM 0.33.0 glm4v.py, by hand (width 1792, 63 blocks, MLP 15360, 16 heads, 6401 positions, patch 14; the
# language model's hidden 4096 and ffn_hidden_size 13696), in parameters:
# one block: input_ / post_attention_layernorm 2 × (1792 + 1792); query_key_value [5376, 1792] + [5376]; dense
# [1792, 1792] + [1792]; fc1 [15360, 1792] + [15360]; fc2 [1792, 15360] + [1792]
BLOCK = 4 * 1792 + 5376 * 1792 + 5376 + 1792 * 1792 + 1792 + 15360 * 1792 + 15360 + 1792 * 15360 + 1792
assert BLOCK == 67_926_784 and 63 * BLOCK == 4_279_387_392  # issue #500's transformer.vision.transformer
# patch_embedding: proj [1792, 3, 14, 14] + [1792], cls_embedding [1, 1792], position_embedding [6401, 1792];
# conv [4096, 1792, 2, 2] + [4096]; linear_proj: linear_proj [4096, 4096], norm1 2 × [4096], merged_proj
# [27392, 4096], dense_4h_to_h [4096, 13696]; boi, eoi 2 × [4096]
REST = (1792 * 588 + 1792 + 1792 + 6401 * 1792 + 4096 * 1792 * 4 + 4096
        + 4096 * 4096 + 2 * 4096 + 27392 * 4096 + 4096 * 13696 + 2 * 4096)  # fmt: skip
# ChatGLM's embedding and output_layer [151552, 4096] each and final_layernorm [4096]: issue #500's "rest" with them
assert REST + 2 * 151552 * 4096 + 4096 == 1_468_500_224
VISION_TP1 = 2 * (63 * BLOCK + REST)
assert VISION_TP1 == 9_012_739_072  # vLLM's transformer.vision at TP 1
# TP 2: query_key_value (weight, bias), dense's weight, fc1 (weight, bias), fc2's weight, merged_proj and
# dense_4h_to_h halve; the norms, dense's and fc2's biases, the patch embedding, table, conv, linear_proj, norm1,
# boi and eoi stay whole
SPLIT = (
    63 * (5376 * 1792 + 5376 + 1792 * 1792 + 15360 * 1792 + 15360 + 1792 * 15360)
    + 27392 * 4096
    + 4096 * 13696
)
VISION_TP2 = 2 * (63 * BLOCK + REST - SPLIT // 2)  # a rank holds half the split parameters
assert VISION_TP2 == 4_565_732_608  # vLLM's transformer.vision at TP 2
ENGINE_TOTAL = {1: 27_812_641_792, 2: 13_966_015_744}
assert ENGINE_TOTAL[1] == 2 * 13_906_320_896  # issue #500's total count, in bf16
# ChatGLM's KV: 40 layers × K and V × multi_query_group_num 2 × kv_channels 128 × 2 B; at TP 2 one group a rank
KV_CELL = {1: 40 * 2 * 2 * 128 * 2, 2: 40 * 2 * 1 * 128 * 2}


def _config() -> dict:  # type: ignore[type-arg]
    return json.loads(CONFIG.read_text())


@pytest.mark.parametrize(("tp", "expected"), [(1, VISION_TP1), (2, VISION_TP2)])
def test_tower_bytes_equal_vllms_meta_build(tp: int, expected: int) -> None:
    model = model_from_config(_config())
    assert model.tower is not None
    assert int(2 * model.tower.params_per_rank(tp, VLLM_SPLIT)) == expected
    assert not any("vision tower" in note for note in model.not_modelled)


@pytest.mark.parametrize("tp", [1, 2])
def test_weights_and_kv_cell_equal_vllms(tp: int) -> None:
    ledger = predict(model_from_config(_config()), parse_flags("vllm", ["--tensor-parallel-size", str(tp)]),
                     gpu_total_bytes=H200)  # fmt: skip
    assert ledger.weights_bytes == ENGINE_TOTAL[tp]
    assert ledger.kv_bytes_per_token == KV_CELL[tp]


def test_a_missing_vision_field_is_named() -> None:
    """vLLM reads the section as a Namespace without defaults: a missing field stops its build, and kvtop's."""
    config = _config()
    config["vision_config"] = {k: v for k, v in config["vision_config"].items() if k != "num_positions"}
    with pytest.raises(InputError, match="num_positions"):
        model_from_config(config)
