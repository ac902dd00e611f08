"""SGLang's TorchNative classes build every Linear whole on each rank and shard them only while loading
(models/torch_native_llama.py): kvtop plans TorchNativeLlamaForCausalLM at TP 1 and names TP > 1 as not modelled;
TorchNativePhi3ForCausalLM cannot load Phi-3's fused checkpoints at any TP, and kvtop refuses it saying so.

The engine figures are its meta build of the registry sweep's default configs (tests/data/engine_diff/registry/
sglang-0.5.23.json): at TP 2 each rank holds nearly the whole TP-1 model (only the embedding and LM head split).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.sources.hub import load_model
from tests.data_paths import DATA

REGISTRY = DATA / "engine_diff" / "registry"
BUDGET = MeasuredInputs(free_before_load_bytes=80 << 30, free_after_load_bytes=60 << 30)


def engine_weights(config: str, tp: int) -> int:
    rows = json.loads((REGISTRY / "sglang-0.5.23.json").read_text())["rows"]
    row = next(r for r in rows if r["config"] == f"default--{config}" and r["tp"] == tp)
    return sum(sum(stage["param_bytes"].values()) for stage in row["stages"])


def plan(config: str, tp: int) -> Ledger:
    settings = parse_flags(
        "sglang", ["--tp", str(tp), "--context-length", "4096", "--engine-version", "0.5.23"]
    )
    model = load_model(str(REGISTRY / "configs" / f"{config}.json"))
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


@pytest.mark.parametrize("config", ["TorchNativeLlamaForCausalLM", "TorchNativePhi3ForCausalLM"])
def test_torch_native_at_tp2_is_named_not_modelled(config: str) -> None:
    # the engine's rank at TP 2 holds more than half its TP-1 build: the Linears are whole
    assert engine_weights(config, 2) > engine_weights(config, 1) * 0.9
    with pytest.raises(UnsupportedModelError) as refused:
        plan(config, 2)
    # TorchNativePhi3ForCausalLM: its load refusal comes first (test_torch_native_phi3_cannot_load_phi3_checkpoints)
    assert refused.value.field == ("architectures" if config == "TorchNativePhi3ForCausalLM" else "--tp")
    if config == "TorchNativePhi3ForCausalLM":
        return  # refused at every TP
    # o_proj / down_proj: model_parallel.py _shard_tensor's strided view keeps the whole storage (torch 2.13.0)
    assert "o_proj and down_proj keep their whole storage" in str(refused.value)
    assert "caching allocator" in str(refused.value)
    assert plan(config, 1).weights_bytes > 0


@pytest.mark.parametrize("tp", [1, 2])
def test_torch_native_phi3_cannot_load_phi3_checkpoints(tp: int) -> None:
    """SGLang 0.5.23 torch_native_llama.py: load_weights_to_module's stacked mapping names .q_proj / .k_proj /
    .v_proj and .gate_proj / .up_proj; ".q_proj" is not in "model.layers.0.self_attn.qkv_proj.weight" (nor ".up_proj"
    in "...mlp.gate_up_proj.weight"), so Phi-3's fused tensors go to qkv_proj_weight_loader(param, loaded_weight)
    with no shard id: TypeError (that loader run on CPU, session 46). The meta build loads nothing (TP 1 "ok")."""
    with pytest.raises(UnsupportedModelError) as refused:
        plan("TorchNativePhi3ForCausalLM", tp)
    assert refused.value.field == "architectures" and "loaded_shard_id" in str(refused.value)
