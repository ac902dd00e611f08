"""Keye-VL's SigLIP tower and projector (kvtop.domain.architectures.towers_keye), by class, over the qwen3 entry.

Oracle: vLLM 0.33.0's meta build of the registry sweep's composed configs (tests/data/engine_diff/registry/configs/
KeyeForConditionalGeneration.json, KeyeVL1_5ForConditionalGeneration.json: transformers 5.20.2 Qwen3Config's
defaults at the top level — 4,096 wide, 32 layers, 32 KV heads of 128, MLP 22,016, vocabulary 151,936 untied — and
SiglipVisionConfig's defaults as vision_config — 768 wide, MLP 3,072, 12 blocks of 12 heads, image 224, patch 16 —
with spatial_merge_size 2; bf16), kept as the registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json):
visual 221,925,888 B at TP 1 and 136,926,720 B at TP 2 for both; mlp_AR 44,057,600 / 22,034,432 B (Keye) and
44,066,816 / 22,043,648 B (Keye-VL-1.5); language_model 24,098,922,496 / 12,049,735,680 B. SGLang 0.5.23 registers
neither class.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

KEYE, KEYE_1_5 = "KeyeForConditionalGeneration", "KeyeVL1_5ForConditionalGeneration"
BUDGET = MeasuredInputs(free_before_load_bytes=120 * GIB, free_after_load_bytes=60 * GIB)
W, M, BLOCKS, T, V, LAYERS, FF = 768, 3072, 12, 4096, 151_936, 32, 22_016
LANGUAGE_MODEL = {1: 24_098_922_496, 2: 12_049_735_680}  # qwen3.py arithmetic: tests/domain/test_towers_rvl.py


def config(name: str) -> dict[str, Any]:
    return json.loads((DATA / "engine_diff" / "registry" / "configs" / f"{name}.json").read_text())


def visual(tp: int) -> int:
    """vLLM 0.33.0 keye.py:201-214 (KeyeVisionEmbeddings): the biased Conv2d patch 3 × 16² → 768, (224 ÷ 16)² = 196
    positions and 32,768 packing positions, whole; per block (KeyeSiglipEncoderLayer keye.py:476-482, its attention
    keye.py:357-366, siglip.py:430-437 SiglipMLP) two LayerNorms and out_proj's and fc2's biases whole, qkv (3 × 768,
    biased), out_proj, fc1 3,072 (biased) and fc2 split; the post_layernorm (keye.py:630)."""
    whole = 3 * 16 * 16 * W + W + (196 + 32_768) * W + BLOCKS * (4 * W + W + W) + 2 * W
    split = BLOCKS * (3 * W * W + 3 * W + W * W + W * M + M + M * W)
    return 2 * (whole + split // tp)


def projector(tp: int, pre_norm_width: int) -> int:
    """mlp_AR (keye.py:783-793 Projector, keye_vl1_5.py:216-226 KeyeVL1_5Projector): pre_norm LayerNorm (weight,
    bias), linear_1 3,072 → 3,072 (Column, biased), linear_2 3,072 → 4,096 (Row, its bias whole)."""
    merged = 4 * W
    return 2 * (2 * pre_norm_width + T + (merged * merged + merged + merged * T) // tp)


PRE_NORM = {KEYE: W, KEYE_1_5: 4 * W}  # keye.py Projector: LayerNorm(768); keye_vl1_5.py: LayerNorm(3,072)


def plan(name: str, tp: int) -> Any:
    settings = parse_flags("vllm", ["--tp", str(tp), "--engine-version", "0.33.0", "--max-model-len", "8192"])
    model = model_from_config(config(name), source=name)
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200", measured=BUDGET)


@pytest.mark.parametrize("name", [KEYE, KEYE_1_5])
@pytest.mark.parametrize("tp", [1, 2])
def test_the_engines_bytes_are_the_configs_arithmetic(name: str, tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{name}", tp)
    held = row["stages"][0]["param_bytes"]
    assert held["visual"] == visual(tp) == {1: 221_925_888, 2: 136_926_720}[tp]
    assert held["mlp_AR"] == projector(tp, PRE_NORM[name])
    assert held["language_model"] == LANGUAGE_MODEL[tp]
    (spec,) = row["stages"][0]["layer_specs"]
    assert (spec["kind"], spec["layers"], spec["page_size_bytes"]) == ("FullAttentionSpec", 32, 262_144 // tp)


@pytest.mark.parametrize("name", [KEYE, KEYE_1_5])
@pytest.mark.parametrize("tp", [1, 2])
def test_kvtop_plans_the_engines_bytes(name: str, tp: int) -> None:
    rank = plan(name, tp).ranks[0]
    (vision,) = [r for r in rank.weights.rows if r.component == "vision"]
    assert int(vision.bytes) == visual(tp) + projector(tp, PRE_NORM[name])
    assert rank.weights.total_bytes == visual(tp) + projector(tp, PRE_NORM[name]) + LANGUAGE_MODEL[tp]
    assert rank.kv.full_bytes_per_token == 32 * 2 * (32 // tp) * 128 * 2  # the spec's page ÷ 16 × 32 layers


def test_a_vision_config_without_a_size_is_refused_by_name() -> None:
    # keye.py reads the SigLIP sizes by attribute, with no default: kvtop names the field it lacks
    data = config(KEYE)
    del data["vision_config"]["image_size"]
    with pytest.raises(InputError, match="image_size"):
        model_from_config(data, source=KEYE)
