"""Step-3's text model (Step3TextForCausalLM, vLLM only), read by the `step3_text` entry, against vLLM 0.33.0's meta
build of the registry sweep's default (tests/data/engine_diff/registry/configs/Step3TextForCausalLM.json: vLLM's
Step3TextConfig, moe_layers_enum as the string step3_text.py splits) at TP 1 and 2; and Step-3-VL
(Step3VLForConditionalGeneration: the same entry and the step3_vl tower) against both engines' builds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry" / "configs"
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)


def config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DEFAULT / "Step3TextForCausalLM.json").read_text())
    return data


def plan(tp: int, data: dict[str, Any] | None = None) -> Any:
    m = model_from_config(data or config(), source="step3-text")
    settings = parse_flags("vllm", ["--tp", str(tp), "--engine-version", "0.33.0", "--max-model-len", "8192"])
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def test_low_rank_query_one_kv_head_and_enumerated_experts() -> None:
    """vLLM 0.33.0 step3_text.py, by hand (h 7,168, 64 heads of 256, share_q_dim 2,048, 61 layers): each layer's
    qkv_proj [2,048 + 2 × 256, h] whole, inter_norm [2,048], wq [64 × 256, 2,048], o_proj [h, 64 × 256], two norms;
    layers 0-3 and 60 a dense MLP (gate_up [2 × 18,432, h], down), layers 4-59 (moe_layers_enum) 48 experts of 5,120,
    the gate [48, h] and share_expert [5,120]; embed_tokens and lm_head [128,832 (the vocabulary 128,815 padded to
    64), h]; model.norm. The meta build: model 630,742,628,352 B and lm_head 1,846,935,552 B at TP 1; 316,510,943,232
    and 923,467,776 B at TP 2."""
    h, q_low, q = 7168, 2048, 64 * 256
    attention = h * (q_low + 2 * 256) + q_low + q_low * q + q * h + 2 * h
    dense = 3 * h * 18432
    moe = 48 * 3 * h * 5120 + 48 * h + 3 * h * 5120
    embedding = 128832 * h
    expected = (61 * attention + 5 * dense + 56 * moe + 2 * embedding + h) * 2
    assert plan(1).ranks[0].weights.total_bytes == expected == 630_742_628_352 + 1_846_935_552
    assert plan(2).ranks[0].weights.total_bytes == 316_510_943_232 + 923_467_776


def test_one_kv_head_on_every_rank() -> None:
    """vLLM's FullAttentionSpec: 61 layers, one KV head of 256, page 16,384 B a block of 16 (= 16 × 2 × 256 × 2 B) at
    TP 1 and 2: 1,024 B a token a layer, the head copied on each rank."""
    for tp in (1, 2):
        assert plan(tp).ranks[0].kv.full_bytes_per_token == 61 * 2 * 256 * 2


def test_more_than_one_kv_group_is_refused() -> None:
    """Step3TextAttention raises for num_kv_heads other than 1; kvtop refuses a config stating more groups."""
    with pytest.raises(InputError, match="KV heads"):
        plan(1, {**config(), "num_attention_groups": 2})


def vl_plan(engine: str, tp: int) -> Any:
    data = json.loads((DEFAULT / "Step3VLForConditionalGeneration.json").read_text())
    m = model_from_config(data, source="step3-vl")
    version = {"vllm": "0.33.0", "sglang": "0.5.23"}[engine]
    settings = parse_flags(engine, ["--tp", str(tp), "--engine-version", version, "--max-model-len", "8192"])
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def test_step3_vl_tower_as_each_engine_builds_it() -> None:
    """Step3VLForConditionalGeneration (the registry default: vLLM's Step3VLConfig, the text model above), by hand
    (towers_step3_vl: width 1,792, MLP 3,072, 63 blocks, a 52 × 52 + 1 position table): the ViT 3,019,971,584 B at TP
    1 in vLLM's meta build — class embedding, biased patch [1,792, 3, 14, 14], positions [2,705, 1,792], per block two
    LayerNorms, qkv [5,376, 1,792] and out_proj with biases, fc1 / fc2 with biases — and 404,845,056 B more in
    SGLang's (63 × (1,792² + 1,792) × 2 B: Step3VisionAttention's out_proj beside VisionAttention's proj); the
    downsamplers 58,728,448 and 603,996,160 B and vit_large_projector 117,454,848 B whole. vLLM's build: language
    model 632,589,563,904 B at TP 1, 317,434,411,008 B at TP 2 (vision_model 1,516,567,808 B); SGLang's vision_model
    3,424,816,640 / 1,719,103,232 B."""
    w, m = 1792, 3072
    whole = w + 3 * 14 * 14 * w + w + 2705 * w + 63 * (4 * w + w + w)
    split = 63 * (w * 3 * w + 3 * w + w * w + w * m + m + m * w)
    assert (whole + split) * 2 == 3_019_971_584
    rest = 58_728_448 + 603_996_160 + 117_454_848
    vllm = {1: 632_589_563_904 + 3_019_971_584 + rest, 2: 317_434_411_008 + 1_516_567_808 + rest}
    sglang = {1: 632_589_563_904 + 3_424_816_640 + rest, 2: 317_434_411_008 + 1_719_103_232 + rest}
    for tp in (1, 2):
        assert vl_plan("vllm", tp).ranks[0].weights.total_bytes == vllm[tp]
        assert vl_plan("sglang", tp).ranks[0].weights.total_bytes == sglang[tp]


def test_step3_vl_without_vision_config_builds_the_default_tower() -> None:
    """Step3VLConfig with no vision_config builds Step3VisionEncoderConfig() (vLLM 0.33.0
    transformers_utils/configs/step3_vl.py, SGLang 0.5.23 srt/configs/step3_vl.py: `if vision_config is None`), the
    registry default's section field for field: the same bytes as the test above (before: no tower, no note, the
    3,800,151,040 B of vLLM's TP 1 build silently left out)."""
    data = json.loads((DEFAULT / "Step3VLForConditionalGeneration.json").read_text())
    del data["vision_config"]
    m = model_from_config(data, source="step3-vl-no-vision")
    rest = 58_728_448 + 603_996_160 + 117_454_848
    for engine, vision in (("vllm", 3_019_971_584), ("sglang", 3_424_816_640)):
        version = {"vllm": "0.33.0", "sglang": "0.5.23"}[engine]
        settings = parse_flags(engine, ["--tp", "1", "--engine-version", version, "--max-model-len", "8192"])
        result = predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)
        assert result.ranks[0].weights.total_bytes == 632_589_563_904 + vision + rest
