"""Beam (BeamForCausalLM), read by the `beam` entry, against vLLM 0.33.0's and SGLang 0.5.23's meta builds of the
registry sweep's default (tests/data/engine_diff/registry/configs/BeamForCausalLM.json: transformers 5.20.2's
BeamConfig, 52 layers — every 6th and the last full attention, the rest sliding, the first 3 dense) at TP 1 and 2.
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
    data: dict[str, Any] = json.loads((DEFAULT / "BeamForCausalLM.json").read_text())
    return data


def plan(engine: str, tp: int, data: dict[str, Any] | None = None) -> Any:
    m = model_from_config(data or config(), source="beam")
    version = {"vllm": "0.33.0", "sglang": "0.5.23"}[engine]
    settings = parse_flags(engine, ["--tp", str(tp), "--engine-version", version, "--max-model-len", "8192"])
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def test_gated_attention_sandwich_norms_and_experts() -> None:
    """Both engines' Beam, by hand (h 5,120, 48 heads and 8 KV heads of 128): each layer q, k, v and the output gate
    (output_gate_proj / gate_proj, 48 × 128 rows) from h, o_proj, gate_bias [48], q_norm and k_norm [128], four norms
    [h]; layers 0-2 a dense MLP (gate_up [2 × 20,480, h], down), layers 3-51 256 experts of 2,560, an fp32 gate
    [256, h] and fp32 e_score_correction_bias [256]; embed_tokens and lm_head [151,936, h]; model.norm. The meta
    builds (vLLM and SGLang alike): model 1,001,107,875,712 B and lm_head 1,555,824,640 B at TP 1; 500,683,496,896
    and 777,912,320 B at TP 2."""
    h = 5120
    attention = (h * (6144 + 2 * 1024 + 6144) + 6144 * h + 48 + 2 * 128 + 4 * h) * 2
    dense = 3 * h * 20480 * 2
    moe = 256 * 3 * h * 2560 * 2 + 256 * h * 4 + 256 * 4
    expected = 52 * attention + 3 * dense + 49 * moe + 2 * 151936 * h * 2 + h * 2
    assert expected == 1_001_107_875_712 + 1_555_824_640
    for engine in ("vllm", "sglang"):
        assert plan(engine, 1).ranks[0].weights.total_bytes == expected
        assert plan(engine, 2).ranks[0].weights.total_bytes == 500_683_496_896 + 777_912_320


def test_sliding_and_full_layers() -> None:
    """vLLM's specs: 43 SlidingWindowSpec layers (window 512) and 9 FullAttentionSpec layers, each 8 KV heads of 128
    (page 65,536 B a block of 16 = 4,096 B a token a layer) at TP 1, 4 heads (2,048 B) at TP 2."""
    for tp, per_layer in ((1, 4096), (2, 2048)):
        kv = plan("vllm", tp).ranks[0].kv
        full, swa = kv.pool("full"), kv.pool("swa")
        assert full is not None and swa is not None
        assert (full.layers, swa.layers) == (9, 43)
        assert full.bytes_per_layer_token == swa.bytes_per_layer_token == per_layer


def test_unlisted_layers_and_tied_embeddings_are_refused() -> None:
    """The engines' config classes lay out an unlisted config differently (vLLM's BeamConfig: every layer sliding and
    sparse; transformers': every 6th full, 3 dense first), and vLLM's BeamForCausalLM raises on tied embeddings."""
    data = {k: v for k, v in config().items() if k != "layer_types"}
    with pytest.raises(InputError, match="layer_types"):
        plan("vllm", 1, data)
    with pytest.raises(InputError, match="tied embeddings"):
        plan("vllm", 1, {**config(), "tie_word_embeddings": True})
