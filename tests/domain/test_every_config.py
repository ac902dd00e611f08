"""Every config in tests/data/configs loads and plans at TP 1/2/4/8, checked by independent arithmetic.

KV bytes per token are recomputed here from the raw JSON (layers × KV heads per rank × 2 × head_dim
× 2 B); the weights of the checkpoints whose published safetensors index states a `total_size`
(tests/data/configs/SOURCES.md) must equal it at TP 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.errors import InputError, LayoutError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

CONFIG_FILES = sorted(p for p in CONFIGS.glob("*.json") if "hf_quant_config" not in p.name)


def expected_kv_bytes_per_token(cfg: dict, tp: int) -> int:
    """Independent arithmetic from the raw config: full-length attention layers × per-layer bytes."""
    text = cfg.get("text_config") or cfg
    if text.get("model_type") in ("mamba", "falcon_mamba", "mamba2"):  # attention-free: a state a request, no KV
        return 0
    layers = text["num_hidden_layers"]
    if "kv_lora_rank" in text:
        per_layer = (text["kv_lora_rank"] + text["qk_rope_head_dim"]) * 2
        if text.get("index_head_dim"):  # DSA indexer key: fp8 data + an fp32 scale per 128
            per_layer += text["index_head_dim"] + text["index_head_dim"] // 128 * 4
        return per_layer * layers
    heads = text["num_attention_heads"]
    kv = text.get("num_key_value_heads") or heads
    head_dim = text.get("head_dim") or text.get("attention_head_dim") or text["hidden_size"] // heads
    if "hybrid_override_pattern" in text:
        layers = text["hybrid_override_pattern"].count("*")
    elif "full_attention_interval" in text:
        layers = layers // text["full_attention_interval"]
    return layers * max(1, kv // tp) * 2 * head_dim * 2


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_config_plans_at_tp(path: Path, tp: int) -> None:
    cfg = json.loads(path.read_text())
    model = model_from_config(cfg, source=path.name)
    try:
        ledger = predict(
            model,
            parse_flags("sglang", ["--tp", str(tp), "--disable-hybrid-swa-memory"]),
            gpu_total_bytes=143771 << 20,
        )
    except LayoutError as err:
        heads = (cfg.get("text_config") or cfg)["num_attention_heads"]
        assert heads % tp or "linear-attention" in str(err), (
            err
        )  # only a real divisibility problem is refused
        return
    except InputError as err:  # SGLang's block-FP8 MoE refusal (docs/engines/sglang.md §4.5), from the config
        block = ((cfg.get("quantization_config") or {}).get("weight_block_size") or [0])[0]
        assert block and (cfg["moe_intermediate_size"] // tp) % block, err
        return
    assert ledger.kv_bytes_per_token == expected_kv_bytes_per_token(cfg, tp)
    assert ledger.weights_bytes > 0
    assert ledger.engine.fits == (ledger.token_capacity > 0)


# model.safetensors.index.json "total_size" of the published checkpoints (SOURCES.md, "Weights total_size").
PUBLISHED_TOTAL_SIZE = {
    "Qwen--Qwen2.5-7B.json": 15_231_233_024,
    "Qwen--Qwen2.5-7B-Instruct.json": 15_231_233_024,
    "meta-llama--Llama-3.1-8B.json": 16_060_522_496,
    "meta-llama--Llama-3.1-8B-Instruct.json": 16_060_522_496,
    "meta-llama--Llama-3.1-70B.json": 141_107_412_992,
    "meta-llama--Llama-3.1-70B-Instruct.json": 141_107_412_992,
    "meta-llama--Llama-3.3-70B-Instruct.json": 141_107_412_992,
    "meta-llama--Meta-Llama-3-70B.json": 141_107_412_992,
    "mistralai--Mistral-7B-v0.1.json": 14_483_464_192,
    "mistralai--Mixtral-8x7B-v0.1.json": 93_405_585_408,
}


@pytest.mark.parametrize("name", sorted(PUBLISHED_TOTAL_SIZE))
def test_weights_at_tp1_are_the_published_checkpoint(name: str) -> None:
    ledger = predict(load_model(str(CONFIGS / name)), parse_flags("sglang", []), gpu_total_bytes=143771 << 20)
    assert ledger.weights_bytes == PUBLISHED_TOTAL_SIZE[name]


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.stem)
def test_config_loads_through_the_cli_path_as_the_domain_reads_it(path: Path) -> None:
    """load_model (file checks, sibling hf_quant_config) and model_from_config agree on every config."""
    raw = json.loads(path.read_text())
    direct = model_from_config(raw, source=str(path), name=path.stem)
    loaded = load_model(str(path))
    assert loaded.model_dump(exclude={"quant"}) == direct.model_dump(exclude={"quant"})
    assert loaded.num_layers == (raw.get("text_config") or raw)["num_hidden_layers"]
