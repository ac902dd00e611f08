"""Hunyuan-V3 (HYV3ForCausalLM), read by the `hy_v3` entry, against both engines' meta builds.

The class default (tests/data/engine_diff/registry/configs/HYV3ForCausalLM.json, transformers 5.20.2's HYV3Config)
lacks fields both engines' classes read (route_norm; vLLM also first_k_dense_replace and expert_hidden_dim), so
the builds checked here are of a variant: the default with 4 layers and those fields stated as a checkpoint states
them (route_norm true, first_k_dense_replace 1, expert_hidden_dim 1536 = moe_intermediate_size, qk_norm true),
meta-built by vLLM 0.33.0 and SGLang 0.5.23 (`registry_sweep.parameters`, TP 1 and 2; shapes quoted below).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import MlpKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry" / "configs"
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)


def default_config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DEFAULT / "HYV3ForCausalLM.json").read_text())
    return data


def checkpoint_shaped() -> dict[str, Any]:
    data = default_config()
    data.update(
        num_hidden_layers=4, route_norm=True, first_k_dense_replace=1, expert_hidden_dim=1536, qk_norm=True
    )
    data["mlp_layer_types"] = ["dense", "sparse", "sparse", "sparse"]
    return data


def plan(data: dict[str, Any], engine: str, version: str, tp: int) -> Any:
    m = model_from_config(data, source="hy_v3")
    flags = ["--tp", str(tp), "--engine-version", version]
    flags += ["--context-length" if engine == "sglang" else "--max-model-len", "8192"]
    settings = parse_flags(engine, flags)
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


@pytest.mark.parametrize(("engine", "version"), [("vllm", "0.33.0"), ("sglang", "0.5.23")])
def test_a_dense_first_layer_then_experts_with_a_shared_mlp(engine: str, version: str) -> None:
    """Both engines at TP 1: embed_tokens and lm_head [120832, 4096]; on each of 4 layers qkv_proj [10240, 4096],
    o_proj [4096, 8192], q_norm and k_norm [128], two norms [4096]; layer 0 gate_up_proj [26624, 4096] and down_proj
    [4096, 13312]; layers 1-3 an fp32 gate [192, 4096] and fp32 expert_bias [192], w13 [192, 3072, 4096], w2 [192,
    4096, 1536], shared_mlp gate_up_proj [3072, 4096] and down_proj [4096, 1536]; model.norm [4096]:
    24,776,880,384 B; at TP 2 12,393,197,824 B (8 KV heads split)."""
    h = 4096
    layer = 10240 * h + h * 8192 + 2 * 128 + 2 * h
    moe = 192 * 3 * 1536 * h + 3 * 1536 * h
    expected = (2 * 120832 * h + 4 * layer + 3 * 13312 * h + 3 * moe + h) * 2 + 3 * (192 * h + 192) * 4
    data = checkpoint_shaped()
    assert plan(data, engine, version, 1).ranks[0].weights.total_bytes == expected == 24_776_880_384
    assert plan(data, engine, version, 2).ranks[0].weights.total_bytes == 12_393_197_824
    m = model_from_config(data, source="hy_v3")
    assert m.layer_mlp == (MlpKind.DENSE, MlpKind.MOE, MlpKind.MOE, MlpKind.MOE)


@pytest.mark.parametrize(("engine", "version"), [("vllm", "0.33.0"), ("sglang", "0.5.23")])
def test_the_class_default_is_refused_where_the_engine_fails(engine: str, version: str) -> None:
    """Neither engine builds the class default (the registry sweep's rows): vLLM 0.33.0 "first_k_dense_replace not
    exist", SGLang 0.5.23 AttributeError route_norm; kvtop refuses naming the field."""
    with pytest.raises(InputError) as refused:
        plan(default_config(), engine, version, 1)
    assert refused.value.field == "route_norm"


def test_unequal_expert_widths_are_refused() -> None:
    """expert_hidden_dim (vLLM's width) beside an unequal moe_intermediate_size (SGLang's): refused by name."""
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config({**checkpoint_shaped(), "expert_hidden_dim": 2048}, source="hy_v3")
    assert refused.value.field == "expert_hidden_dim"
