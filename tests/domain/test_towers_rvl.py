"""R-4B (vLLM 0.33.0 RForConditionalGeneration, models/rvl.py): llava-onevision's SigLIP, image_newline and its own
pre-norm projector (kvtop.domain.architectures.towers_bee), over a Qwen3 language model read by its text section.

Oracle: vLLM 0.33.0's meta build of the registry sweep's composed config (tests/data/engine_diff/registry/configs/
RForConditionalGeneration.json: transformers 5.20.2 LlavaOnevisionConfig's defaults, SigLIP 1,152 wide, MLP 4,304,
26 blocks, image 384, patch 14, vision_feature_layer -1; its text_config Qwen3Config's defaults, 4,096 wide, 32
layers, 32 KV heads of 128, vocabulary 151,936 untied; bf16), kept as the registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json, `param_bytes` by top-level child): vision_tower 795,490,880 B,
multi_modal_projector 43,012,608 B, image_newline 8,192 B, language_model 24,098,922,496 B at TP 1;
399,443,488 + 43,012,608 + 8,192 and 12,049,735,680 B at TP 2; one FullAttentionSpec of 32 layers, 32 ÷ TP KV heads
of 128, page 262,144 ÷ TP B (16 tokens). SGLang 0.5.23 registers no such class.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

NAME = "RForConditionalGeneration"
CONFIG = json.loads((DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json").read_text())
BUDGET = MeasuredInputs(free_before_load_bytes=120 * GIB, free_after_load_bytes=60 * GIB)
W, MLP, DEPTH, T, V, LAYERS, FF = 1152, 4304, 26, 4096, 151_936, 32, 22_016


def tower(tp: int) -> int:
    """vLLM 0.33.0 siglip.py up to vision_feature_layer -1 (all 26 blocks, no post-LayerNorm, no head; built by
    llava_onevision.py:496): the biased Conv2d patch (:267) 3 × 14² → 1,152 and 27² = 729 positions (:277), whole; per
    block (:471-477) two LayerNorms and out's and fc2's biases whole, qkv (:357, 3 × 1,152 with bias), out (:366), fc1
    4,304 (:430, with bias) and fc2 (:437) split. image_newline [4,096] (llava_onevision.py:502); rvl.py:57-67
    RVLMultiModalProjector (built at :103): pre_norm LayerNorm [1,152] (weight, bias), linear_1 1,152 → 4,096 and
    linear_2 4,096 → 4,096, biased nn.Linear, whole."""
    whole = 3 * 14 * 14 * W + W + 729 * W + DEPTH * (4 * W + W + W)
    split = DEPTH * (3 * W * W + 3 * W + W * W + W * MLP + MLP + MLP * W)
    projector = 2 * W + W * T + T + T * T + T
    return 2 * (whole + split // tp + T + projector)


def language_model(tp: int) -> int:
    """vLLM 0.33.0 qwen3.py (its Qwen2 model, qwen2.py): embedding (qwen2.py:371) and untied lm_head (qwen3.py:307;
    151,936 rows, vocab-parallel), per layer qkv 4,096 → 3 × 4,096 unbiased (qwen3.py:106), o_proj (:115), gate_up
    2 × 22,016 and down (qwen2.py:91-98) split; input / post-attention norms [4,096] (qwen3.py:226-227) and q_norm /
    k_norm [128] (:153-154) whole; the final norm (qwen2.py:395)."""
    split = 2 * V * T + LAYERS * (3 * T * T + T * T + 3 * T * FF)
    whole = LAYERS * (2 * T + 2 * 128) + T
    return 2 * (split // tp + whole)


def plan(tp: int) -> Any:
    settings = parse_flags("vllm", ["--tp", str(tp), "--engine-version", "0.33.0", "--max-model-len", "8192"])
    model = model_from_config(CONFIG, source=NAME)
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200", measured=BUDGET)


@pytest.mark.parametrize("tp", [1, 2])
def test_the_engines_bytes_are_the_configs_arithmetic(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    held = row["stages"][0]["param_bytes"]
    assert held["multi_modal_projector"] == 43_012_608
    assert held["vision_tower"] + held["multi_modal_projector"] + held["image_newline"] == tower(tp)
    assert held["language_model"] == language_model(tp) == {1: 24_098_922_496, 2: 12_049_735_680}[tp]
    (spec,) = row["stages"][0]["layer_specs"]
    assert (spec["kind"], spec["layers"], spec["page_size_bytes"]) == ("FullAttentionSpec", 32, 262_144 // tp)


@pytest.mark.parametrize("tp", [1, 2])
def test_kvtop_plans_the_engines_bytes(tp: int) -> None:
    rank = plan(tp).ranks[0]
    (vision,) = [r for r in rank.weights.rows if r.component == "vision"]
    assert int(vision.bytes) == tower(tp) == {1: 838_511_680, 2: 442_464_288}[tp]
    assert rank.weights.total_bytes == tower(tp) + language_model(tp)
    # 32 layers × K and V × 32 ÷ TP heads × 128 × 2 B (the spec's page ÷ 16 tokens × 32 layers)
    assert rank.kv.full_bytes_per_token == 32 * 2 * (32 // tp) * 128 * 2 == 32 * (262_144 // tp) // 16


def test_bees_projector_is_four_times_wider() -> None:
    # the same config naming Bee's class over llava-onevision's model_type: linear_1 1,152 → 16,384, linear_2
    # 16,384 → 4,096 (vLLM 0.33.0 bee.py), 129,000,000-odd B more than R-4B's
    bee = {**CONFIG, "architectures": ["BeeForConditionalGeneration"], "model_type": "llava_onevision"}
    r4b, bee_tower = model_from_config(CONFIG, source=NAME).tower, model_from_config(bee, source="bee").tower
    assert r4b is not None and bee_tower is not None
    assert bee_tower.params - r4b.params == (W * 4 * T + 4 * T + 4 * T * T) - (W * T + T + T * T)
