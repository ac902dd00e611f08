"""OpenCUA (vLLM 0.33.0 OpenCUAForConditionalGeneration, models/opencua.py): Qwen2.5-VL's vision transformer
(Qwen2_5_VisionTransformer as OpenCUAVisionTransformer) read by the outer model_type `opencua`, over a Qwen2 language
model read by its text section (init_vllm_registered_model(architectures=["Qwen2ForCausalLM"])).

Oracle: vLLM 0.33.0's meta build of the registry sweep's composed config (tests/data/engine_diff/registry/configs/
OpenCUAForConditionalGeneration.json: OpenCUAConfig's __init__ defaults, vision Qwen2_5_VLVisionConfig() — 3,584
wide, gated MLP 3,420, 32 blocks, patch 14 × 14 × 2, merge 2, out 3,584 — and text Qwen2Config() — 4,096 wide, 32
layers, 32 KV heads of 128, MLP 22,016, vocabulary 151,936 untied; bf16), kept as the registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json): visual 6,166,050,304 B and language_model 24,099,692,544 B at
TP 1; 3,087,705,856 and 12,050,112,512 B at TP 2; one FullAttentionSpec of 32 layers, page 262,144 ÷ TP B (16 tokens).
SGLang 0.5.23 registers no such class.
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

NAME = "OpenCUAForConditionalGeneration"
CONFIG = json.loads((DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json").read_text())
BUDGET = MeasuredInputs(free_before_load_bytes=120 * GIB, free_after_load_bytes=60 * GIB)
W, M, DEPTH, OUT, T, V, LAYERS, FF = 3584, 3420, 32, 3584, 4096, 151_936, 32, 22_016


def visual(tp: int) -> int:
    """vLLM 0.33.0 qwen2_5_vl.py (built by opencua.py:248): per block (:492-501) two RMSNorms [3,584], qkv (:378)
    3,584 → 3 × 3,584 with bias, proj (:389) with bias, gate_up (:327) 2 × 3,420 with biases and down (:336) with bias,
    split but proj's and down's biases; the unbiased Conv3d patch (:554) 3 × 2 × 14² → 3,584, whole; the merger
    (:591-593): ln_q [3,584], mlp.0 14,336 → 14,336 biased (split), mlp.2 14,336 → 3,584 (split, its bias whole)."""
    split = DEPTH * (3 * W * W + 3 * W + W * W + 2 * W * M + 2 * M + M * W) + 4 * W * 4 * W + 4 * W + 4 * W * OUT
    whole = 3 * 2 * 14 * 14 * W + DEPTH * (2 * W + W + W) + W + OUT
    return 2 * (whole + split // tp)


def language_model(tp: int) -> int:
    """vLLM qwen2.py: embedding and untied lm_head (151,936 rows, vocab-parallel), per layer qkv 4,096 → 3 × 4,096
    with bias, o_proj, gate_up 2 × 22,016 and down, split; two norms [4,096] a layer and the final one, whole."""
    split = 2 * V * T + LAYERS * (3 * T * T + 3 * T + T * T + 3 * T * FF)
    return 2 * (split // tp + LAYERS * 2 * T + T)


def plan(tp: int) -> Any:
    settings = parse_flags("vllm", ["--tp", str(tp), "--engine-version", "0.33.0", "--max-model-len", "8192"])
    model = model_from_config(CONFIG, source=NAME)
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200", measured=BUDGET)


@pytest.mark.parametrize("tp", [1, 2])
def test_the_engines_bytes_are_the_configs_arithmetic(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    held = row["stages"][0]["param_bytes"]
    assert held["visual"] == visual(tp) == {1: 6_166_050_304, 2: 3_087_705_856}[tp]
    assert held["language_model"] == language_model(tp) == {1: 24_099_692_544, 2: 12_050_112_512}[tp]
    (spec,) = row["stages"][0]["layer_specs"]
    assert (spec["kind"], spec["layers"], spec["page_size_bytes"]) == ("FullAttentionSpec", 32, 262_144 // tp)


@pytest.mark.parametrize("tp", [1, 2])
def test_kvtop_plans_the_engines_bytes(tp: int) -> None:
    rank = plan(tp).ranks[0]
    (vision,) = [r for r in rank.weights.rows if r.component == "vision"]
    assert int(vision.bytes) == visual(tp)
    assert rank.weights.total_bytes == visual(tp) + language_model(tp)
    # 32 layers × K and V × 32 ÷ TP heads × 128 × 2 B (the spec's page ÷ 16 tokens × 32 layers)
    assert rank.kv.full_bytes_per_token == 32 * 2 * (32 // tp) * 128 * 2 == 32 * (262_144 // tp) // 16
