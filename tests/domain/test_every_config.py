"""Every config in tests/data/configs loads and plans at TP 1/2/4/8, checked by independent arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import model_from_config
from tests.conftest import CONFIGS

#: Configs kept for the cases of engines kvtop does not read yet (LMDeploy), of an architecture not modelled yet.
NOT_MODELLED = {"internlm--internlm-20b": "InternLM v1 (model_type 'internlm') is not modelled yet"}
CONFIG_FILES = [
    pytest.param(p, marks=pytest.mark.xfail(reason=NOT_MODELLED[p.stem], strict=True)) if p.stem in NOT_MODELLED else p
    for p in sorted(CONFIGS.glob("*.json"))
    if "hf_quant_config" not in p.name
]


def expected_kv_bytes_per_token(cfg: dict, tp: int) -> int:
    """Independent arithmetic from the raw config: full-length attention layers × per-layer bytes."""
    text = cfg.get("text_config") or cfg
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
    assert ledger.kv_bytes_per_token == expected_kv_bytes_per_token(cfg, tp)
    assert ledger.weights_bytes > 0
    assert ledger.engine.fits == (ledger.token_capacity > 0)
