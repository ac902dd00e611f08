"""Step-3's text model (Step3TextForCausalLM, vLLM only), read by the `step3_text` entry, against vLLM 0.33.0's meta
build of the registry sweep's default (tests/data/engine_diff/registry/configs/Step3TextForCausalLM.json: vLLM's
Step3TextConfig, moe_layers_enum in its published string form) at TP 1 and 2.
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

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry" / "configs"
GIB = 1 << 30
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
